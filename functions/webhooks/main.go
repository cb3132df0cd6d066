// Command webhooks is the Lambda function that serves the webhook
// endpoints API (/webhooks/endpoints...: endpoints, secret rotation, test
// events, deliveries and replays). It builds what it serves once per cold
// start and serves API Gateway HTTP API (payload 2.0) events through the
// api-proxy adapter. Its wiring is shared/wire/webhooks.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/webhooks"
)

func main() {
	b := wire.MustBase("webhooks")
	lambda.Start(b.Lambda(webhooks.New(b).Routes()))
}
