// Command tenants is the Lambda function operators invoke directly to create
// tenants and rotate their service keys (see tenant.Request for the payload).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("tenants: %v", err)
	}
	lambda.Start(b.TenantService().Handle)
}
