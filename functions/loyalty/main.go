// Command loyalty is the Lambda function for perks, awards and their points,
// and award enrichments (the award import's routes are the awardimports
// function's). The legacy grant to a segment starts a job (its start object
// goes to the files bucket; the S3 client is made on first use). It builds
// what it serves once per cold start and serves API Gateway HTTP API
// (payload 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"
	"slices"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/awardfiles"
	"github.com/loyalty-platform/platform/shared/wire/files"
	"github.com/loyalty-platform/platform/shared/wire/rewards"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("loyalty: %v", err)
	}
	r := rewards.New(b, b.Actions())
	grants := awardfiles.SegmentGrants(r, files.Jobs(b, files.NewS3(b)))
	lambda.Start(b.Lambda(slices.Concat(r.LoyaltyRoutes(), grants.Routes())))
}
