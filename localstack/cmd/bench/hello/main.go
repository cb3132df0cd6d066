// Command hello is the smallest Go Lambda function: lambda.Start of a
// handler that answers its event. The benchmarks (localstack/cmd/bench)
// build it with the functions' flags and compare the functions' binary
// sizes and cold starts with it.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func handle(_ context.Context, event json.RawMessage) (json.RawMessage, error) {
	return event, nil
}

func main() {
	lambda.Start(handle)
}
