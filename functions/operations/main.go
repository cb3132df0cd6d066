// Command operations is the Lambda function that serves GET
// /operations/{operationId} (polling an asynchronous job) and GET
// /openapi.json (the API's OpenAPI document, public). It builds what it
// serves once per cold start and serves API Gateway HTTP API (payload 2.0)
// events through the api-proxy adapter.
// Its wiring is shared/wire/operations.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/operations"
)

func main() {
	b := wire.MustBase("operations")
	lambda.Start(b.Lambda(operations.New(b).Routes()))
}
