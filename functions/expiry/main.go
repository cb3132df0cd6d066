// Command expiry is the Lambda function EventBridge runs daily (00:00 UTC)
// to remove the members of SCHEDULED and ROLLING segments whose horizon has
// passed. It builds what it needs once per cold start.
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
		log.Fatalf("expiry: %v", err)
	}
	lambda.Start(rewards.New(b, b.Actions()).ExpiryHandler())
}
