// Command users is the Lambda function for the user record: list, search
// and lookup, read and update (with push registration), and addresses
// (with geocoding). Its wiring (shared/wire/users) builds what it serves once per cold start (with the
// loyalty domains' points and segments and the current check-in that a
// user's include options read) and serves API Gateway HTTP API (payload
// 2.0) events through the api-proxy adapter.
package main

import (
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/users"
)

func main() {
	b := wire.MustBase("users")
	f, err := users.New(b)
	if err != nil {
		log.Fatalf("users: %v", err)
	}
	lambda.Start(b.Lambda(f.Routes()))
}
