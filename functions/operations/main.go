// Command operations is the Lambda function that serves GET
// /operations/{operationId} (polling an asynchronous job) and GET
// /openapi.json (the API's OpenAPI document, public). It builds what it
// serves once per cold start and serves API Gateway HTTP API (payload 2.0)
// events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/contract/apidoc"
	"github.com/loyalty-platform/platform/shared/wire"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("operations: %v", err)
	}
	lambda.Start(b.Lambda(append(b.Operations().Routes(), new(apidoc.Service).Routes()...)))
}
