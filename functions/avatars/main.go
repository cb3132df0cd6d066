// Command avatars is the Lambda function for what a user keeps in the
// media bucket: the profile photo (upload, removal) and deleting a user,
// which removes the photo with the rest of the user's data. It builds what
// it serves once per cold start and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
// Its wiring is shared/wire/avatars.
package main

import (
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/avatars"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

func main() {
	b := wire.MustBase("avatars")
	f, err := avatars.New(b, files.NewS3(b))
	if err != nil {
		log.Fatalf("avatars: %v", err)
	}
	lambda.Start(b.Lambda(f.Routes()))
}
