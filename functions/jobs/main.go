// Command jobs is the Lambda function that runs the asynchronous jobs
// (location import and export, award import, actions export): S3 invokes it with
// ObjectCreated events of jobs/ objects in the files bucket, and its
// failure queue (the OnFailure destination of those invocations) with SQS
// events whose messages are Lambda destination records (see shared/job).
// The handler dispatches by the event source of the first record.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/places"
	"github.com/loyalty-platform/platform/shared/app/rewards"
)

func main() {
	b, err := app.NewBase(context.Background(), app.ConfigFromEnv())
	if err != nil {
		log.Fatalf("jobs: %v", err)
	}
	actions, jobs := b.Actions(), b.Jobs()
	places.LocationJobs(b, places.Locations(b), jobs, actions)
	rewards.New(b, actions).Imports(b, jobs)
	b.ActionLog(jobs)
	lambda.Start(jobs.HandleEvent)
}
