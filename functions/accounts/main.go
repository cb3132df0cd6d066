// Command accounts is the Lambda function for signing up and in: sign-up,
// activation, login and logout, password reset, guests, sessions, SSO and
// secondary credentials, with the codes it sends by SMS and e-mail. It
// builds what it serves once per cold start and serves API Gateway HTTP
// API (payload 2.0) events through the api-proxy adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/identity"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("accounts: %v", err)
	}
	notifier, pusher, err := identity.Messaging(b)
	if err != nil {
		log.Fatalf("accounts: %v", err)
	}
	users := identity.Users(b)
	identity.Accounts(users, b, notifier, pusher)
	lambda.Start(b.Lambda(users.AccountRoutes()))
}
