// Command pos is the Lambda function of the pay-at-POS loop: orders,
// transactions and credits, and the rules they trigger (run before the
// request answers). It builds what it serves once per cold start and serves
// API Gateway HTTP API (payload 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/places"
	"github.com/loyalty-platform/platform/shared/wire/rewards"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("pos: %v", err)
	}
	actions := b.Actions()
	checkins := places.Checkins(b, places.Locations(b), actions)
	lambda.Start(b.Lambda(rewards.New(b, actions).POS(b, checkins, actions).Routes()))
}
