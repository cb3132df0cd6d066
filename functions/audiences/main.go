// Command audiences is the Lambda function for segments (audiences) and
// their members. Its wiring (shared/wire/audiences) builds what it serves once per cold start and serves
// API Gateway HTTP API (payload 2.0) events through the api-proxy adapter.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/audiences"
)

func main() {
	b := wire.MustBase("audiences")
	lambda.Start(b.Lambda(audiences.New(b).Routes()))
}
