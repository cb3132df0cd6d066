// Command jobs is the Lambda function that runs the asynchronous jobs
// (location import and export, award import, grant to a segment, actions
// export, points liability export and rebuild): S3 invokes it with
// ObjectCreated events of jobs/ objects in the files bucket, and its
// failure queue (the OnFailure destination of those invocations) with SQS
// events whose messages are Lambda destination records (see shared/platform/job).
// The handler dispatches by the event source of the first record.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/awardfiles"
	"github.com/loyalty-platform/platform/shared/wire/files"
	"github.com/loyalty-platform/platform/shared/wire/locationfiles"
	"github.com/loyalty-platform/platform/shared/wire/places"
	"github.com/loyalty-platform/platform/shared/wire/rewards"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("jobs: %v", err)
	}
	actions, jobs := b.Actions(), files.Jobs(b, files.NewS3(b))
	r := rewards.New(b, actions)
	files.Register(jobs,
		locationfiles.New(b, places.Locations(b), jobs, actions).Kinds(),
		awardfiles.Imports(b, r, jobs).Kinds(),
		awardfiles.SegmentGrants(r, jobs).Kinds(),
		files.ActionLog(b, jobs).Kinds())
	lambda.Start(jobs.HandleEvent)
}
