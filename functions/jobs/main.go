// Command jobs is the Lambda function that runs the asynchronous jobs
// (location import and export, award import, grant to a segment, actions
// export, points liability export and rebuild): S3 invokes it with
// ObjectCreated events of jobs/ objects in the files bucket, and its
// failure queue (the OnFailure destination of those invocations) with SQS
// events whose messages are Lambda destination records (see shared/platform/job),
// and operators invoke it directly with a command on one operation
// (describe, resume, fail: job.OperatorRequest). The handler dispatches
// events by the event source of the first record, and a payload without
// records and with an action to the operator's command.
// Its wiring is shared/wire/jobs.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/jobs"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

func main() {
	b := wire.MustBase("jobs")
	lambda.Start(jobs.New(b, files.Jobs(b, files.NewS3(b))).Jobs.Handle)
}
