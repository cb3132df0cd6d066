// Command jobs is the Lambda function that runs the asynchronous jobs
// (location import and export): S3 invokes it with ObjectCreated events of
// jobs/ objects in the files bucket, and its failure queue (the OnFailure
// destination of those invocations) with SQS events whose messages are
// Lambda destination records (see shared/job). The handler dispatches by
// the event source of the first record.
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
		log.Fatalf("jobs: %v", err)
	}
	handler, err := deps.EventHandler("jobs")
	if err != nil {
		log.Fatalf("jobs: %v", err)
	}
	lambda.Start(handler)
}
