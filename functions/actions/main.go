// Command actions is the Lambda function for the actions log: the tenant's,
// a user's and a location's actions, and their CSV export. It builds what
// it serves once per cold start and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
// Its wiring is shared/wire/actions.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/actions"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

func main() {
	b := wire.MustBase("actions")
	lambda.Start(b.Lambda(actions.New(b, files.Jobs(b, files.NewS3(b))).Routes()))
}
