// Command audiences is the Lambda function for segments (audiences) and
// their members. It builds what it serves once per cold start and serves
// API Gateway HTTP API (payload 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/rewards"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("audiences: %v", err)
	}
	lambda.Start(b.Lambda(rewards.New(b, b.Actions()).AudienceRoutes()))
}
