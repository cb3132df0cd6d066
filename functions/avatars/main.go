// Command avatars is the Lambda function for what a user keeps in the
// media bucket: the profile photo (upload, removal) and deleting a user,
// which removes the photo with the rest of the user's data. It builds what
// it serves once per cold start and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/files"
	"github.com/loyalty-platform/platform/shared/wire/identity"
	"github.com/loyalty-platform/platform/shared/wire/places"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("avatars: %v", err)
	}
	pusher, err := identity.Pusher(b)
	if err != nil {
		log.Fatalf("avatars: %v", err)
	}
	actions := b.Actions()
	users := identity.Users(b)
	identity.Avatars(users, files.Photos(b), pusher, places.CheckinRemover(b), actions)
	lambda.Start(b.Lambda(users.AvatarRoutes()))
}
