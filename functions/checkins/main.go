// Command checkins is the Lambda function for check-ins: a user's check-in
// (create, list, checkout) and the check-ins at a location. It builds its
// dependencies once per cold start and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
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
		log.Fatalf("checkins: %v", err)
	}
	handler, err := deps.LambdaHandler("checkins")
	if err != nil {
		log.Fatalf("checkins: %v", err)
	}
	lambda.Start(handler)
}
