// Command actions is the Lambda function for the actions log: the tenant's,
// a user's and a location's actions, and their CSV export. It builds what
// it serves once per cold start and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/files"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("actions: %v", err)
	}
	lambda.Start(b.Lambda(files.ActionLog(b, files.Jobs(b, files.NewS3(b))).Routes()))
}
