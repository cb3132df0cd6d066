// Command accounts is the Lambda function for signing up and in: sign-up,
// activation, login and logout, password reset, guests, sessions, SSO and
// secondary credentials, with the codes it sends by SMS and e-mail. It
// builds what it serves once per cold start and serves API Gateway HTTP
// API (payload 2.0) events through the api-proxy adapter.
// Its wiring is shared/wire/accounts.
package main

import (
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/accounts"
)

func main() {
	b := wire.MustBase("accounts")
	f, err := accounts.New(b)
	if err != nil {
		log.Fatalf("accounts: %v", err)
	}
	lambda.Start(b.Lambda(f.Routes()))
}
