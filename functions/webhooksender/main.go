// Command webhooksender is the Lambda function that delivers webhooks: it
// consumes the FIFO delivery queue, POSTs each event signed to its
// endpoint, records the attempt, and keeps a failed message in flight
// until its next attempt is due. Its wiring (shared/wire/webhooksender)
// builds what it needs once per cold start.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/webhooksender"
)

func main() {
	b := wire.MustBase("webhooksender")
	lambda.Start(webhooksender.New(b).Handle)
}
