// Command pos is the Lambda function of the pay-at-POS loop: orders,
// transactions and credits, and the rules they trigger (run before the
// request answers). Its wiring (shared/wire/pos) builds what it serves once per cold start and serves
// API Gateway HTTP API (payload 2.0) events through the api-proxy adapter.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/pos"
)

func main() {
	b := wire.MustBase("pos")
	lambda.Start(b.Lambda(pos.New(b).Routes()))
}
