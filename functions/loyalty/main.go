// Command loyalty is the Lambda function for perks, awards and their points,
// and award enrichments (the award import's routes are the awardimports
// function's). It builds what it serves once per cold start and serves API
// Gateway HTTP API (payload 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/rewards"
)

func main() {
	b, err := app.NewBase(context.Background(), app.ConfigFromEnv())
	if err != nil {
		log.Fatalf("loyalty: %v", err)
	}
	lambda.Start(b.Lambda(rewards.New(b, b.Actions()).LoyaltyRoutes()))
}
