// Command users is the Lambda function for users, sessions, guests,
// credentials, addresses and avatars. It builds what it serves once per
// cold start (with the loyalty domains' points and segments and the current
// check-in that a user's include options read) and serves API Gateway HTTP
// API (payload 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/files"
	"github.com/loyalty-platform/platform/shared/app/identity"
	"github.com/loyalty-platform/platform/shared/app/places"
	"github.com/loyalty-platform/platform/shared/app/rewards"
)

func main() {
	b, err := app.NewBase(context.Background(), app.ConfigFromEnv())
	if err != nil {
		log.Fatalf("users: %v", err)
	}
	actions := b.Actions()
	checkins := places.Checkins(b, places.Locations(b), actions)
	notifier, pusher, err := identity.Messaging(b)
	if err != nil {
		log.Fatalf("users: %v", err)
	}
	users := identity.Users(b, notifier, pusher, files.NewS3(b))
	identity.Attach(users, rewards.New(b, actions), checkins, actions)
	lambda.Start(b.Lambda(users.Routes()))
}
