// Command rules is the Lambda function that consumes the Actions table's
// stream: every new action runs the rules whose trigger is its type, at
// most once per (rule, action), applying what the request that recorded it
// did not. Its wiring (shared/wire/rules) builds what it needs once per cold start.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/rules"
)

func main() {
	b := wire.MustBase("rules")
	lambda.Start(rules.New(b).Handle)
}
