// Command tenants is the Lambda function operators invoke directly to create
// tenants and rotate their service keys (see tenant.Request for the payload).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/app"
)

func main() {
	b, err := app.NewBase(context.Background(), app.ConfigFromEnv())
	if err != nil {
		log.Fatalf("tenants: %v", err)
	}
	lambda.Start(b.TenantService().Handle)
}
