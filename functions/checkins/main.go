// Command checkins is the Lambda function for check-ins: a user's check-in
// (create, list, checkout) and the check-ins at a location. It builds what
// it serves once per cold start and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
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
		log.Fatalf("checkins: %v", err)
	}
	checkins := places.Checkins(b, places.Locations(b), b.Actions())
	lambda.Start(b.Lambda(checkins.Routes()))
}
