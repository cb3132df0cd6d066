// Command expiry is the Lambda function EventBridge runs daily (00:00 UTC)
// to remove the members of SCHEDULED and ROLLING segments whose horizon has
// passed. It builds its dependencies once per cold start.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/app"
)

func main() {
	ctx := context.Background()
	deps, err := app.New(ctx, app.ConfigFromEnv())
	if err != nil {
		log.Fatalf("expiry: %v", err)
	}
	handler, err := deps.ScheduleHandler("expiry")
	if err != nil {
		log.Fatalf("expiry: %v", err)
	}
	lambda.Start(handler)
}
