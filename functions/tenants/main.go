// Command tenants is the Lambda function operators invoke directly to create
// tenants and rotate their service keys (see tenant.Request for the payload).
// Its wiring is shared/wire/tenants.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/tenants"
)

func main() {
	b := wire.MustBase("tenants")
	lambda.Start(tenants.New(b).Tenants.Handle)
}
