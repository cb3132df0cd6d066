// Command webhookfanout is the Lambda function that consumes the Actions
// table's stream for webhooks: the feed head records carry each user's
// new events in sequence order, and each event is logged and sent to the
// FIFO delivery queue once per matching endpoint. Its wiring
// (shared/wire/webhookfanout) builds what it needs once per cold start.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/webhookfanout"
)

func main() {
	b := wire.MustBase("webhookfanout")
	lambda.Start(webhookfanout.New(b).Handle)
}
