// Command locations is the Lambda function for locations, their tag groups
// and their CSV import and export. It builds what it serves once per cold
// start and serves API Gateway HTTP API (payload 2.0) events through the
// api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/files"
	"github.com/loyalty-platform/platform/shared/app/locationfiles"
	"github.com/loyalty-platform/platform/shared/app/places"
)

func main() {
	b, err := app.NewBase(context.Background(), app.ConfigFromEnv())
	if err != nil {
		log.Fatalf("locations: %v", err)
	}
	locations := places.Locations(b)
	imports := locationfiles.New(b, locations, files.Jobs(b, files.NewS3(b)), b.Actions())
	lambda.Start(b.Lambda(locationfiles.Routes(locations, imports)))
}
