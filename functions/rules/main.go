// Command rules is the Lambda function that consumes the Actions table's
// stream: every new action runs the rules whose trigger is its type, at
// most once per (rule, action), applying what the request that recorded it
// did not. It builds what it needs once per cold start.
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
		log.Fatalf("rules: %v", err)
	}
	actions := b.Actions()
	r := rewards.New(b, actions)
	// The POS domain records on orders the points the rules earn on them.
	r.POS(b, places.Checkins(b, places.Locations(b), actions), actions)
	lambda.Start(r.Rules.HandleStream)
}
