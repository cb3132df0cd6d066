// Command checkins is the Lambda function for check-ins: a user's check-in
// (create, list, checkout) and the check-ins at a location. It builds what
// it serves once per cold start and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
// Its wiring is shared/wire/checkins.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/checkins"
)

func main() {
	b := wire.MustBase("checkins")
	lambda.Start(b.Lambda(checkins.New(b).Routes()))
}
