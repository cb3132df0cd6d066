// Command expiry is the Lambda function EventBridge runs daily (00:00 UTC)
// to remove the members of SCHEDULED and ROLLING segments whose horizon has
// passed. Its wiring (shared/wire/expiry) builds what it needs once per cold start.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/expiry"
)

func main() {
	b := wire.MustBase("expiry")
	lambda.Start(expiry.New(b).Handle)
}
