// Command users is the Lambda function for the user record: list, search
// and lookup, read and update (with push registration), and addresses
// (with geocoding). It builds what it serves once per cold start (with the
// loyalty domains' points and segments and the current check-in that a
// user's include options read) and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/aws/amazonlocation"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/identity"
	"github.com/loyalty-platform/platform/shared/wire/places"
	"github.com/loyalty-platform/platform/shared/wire/rewards"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("users: %v", err)
	}
	pusher, err := identity.Pusher(b)
	if err != nil {
		log.Fatalf("users: %v", err)
	}
	actions := b.Actions()
	users := identity.Users(b)
	identity.Profiles(users, pusher, amazonlocation.FromEnv(b.AWS), rewards.New(b, actions), places.Checkins(b, places.Locations(b), actions))
	lambda.Start(b.Lambda(users.ProfileRoutes()))
}
