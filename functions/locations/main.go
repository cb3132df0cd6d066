// Command locations is the Lambda function for locations and their tag
// groups (their CSV import and export are the locationfiles function's, so
// that this one links no S3 client). It builds what it serves once per cold
// start and serves API Gateway HTTP API (payload 2.0) events through the
// api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/places"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("locations: %v", err)
	}
	lambda.Start(b.Lambda(places.Locations(b).Routes()))
}
