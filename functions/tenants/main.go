// Command tenants is the Lambda function operators invoke directly to create
// tenants and rotate their service keys (see tenant.Request for the payload),
// and that serves a tenant's admin its settings over the HTTP API (GET and
// PUT /tenant, API Gateway payload 2.0). Its wiring is shared/wire/tenants.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/tenants"
)

func main() {
	b := wire.MustBase("tenants")
	lambda.Start(tenants.New(b).Handle)
}
