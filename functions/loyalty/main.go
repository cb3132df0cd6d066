// Command loyalty is the Lambda function for perks, awards and their points,
// and award enrichments (the award import's routes are the awardimports
// function's). The legacy grant to a segment starts a job (its start object
// goes to the files bucket; the S3 client is made on first use). It builds
// what it serves once per cold start and serves API Gateway HTTP API
// (payload 2.0) events through the api-proxy adapter.
// Its wiring is shared/wire/loyalty.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/loyalty"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

func main() {
	b := wire.MustBase("loyalty")
	lambda.Start(b.Lambda(loyalty.New(b, files.Jobs(b, files.NewS3(b))).Routes()))
}
