// Command locations is the Lambda function for locations and their tag
// groups (their CSV import and export are the locationfiles function's, so
// that this one links no S3 client). It builds what it serves once per cold
// start and serves API Gateway HTTP API (payload 2.0) events through the
// api-proxy adapter.
// Its wiring is shared/wire/locations.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/locations"
)

func main() {
	b := wire.MustBase("locations")
	lambda.Start(b.Lambda(locations.New(b).Routes()))
}
