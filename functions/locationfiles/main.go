// Command locationfiles is the Lambda function of the location CSV import
// and export routes: starting an import (POST /locations/imports) or an
// export (POST /locations/exports) and serving their files; the jobs
// function runs them. It is apart from the locations function so that the
// locations function does not link the S3 client. It builds what it serves
// once per cold start and serves API Gateway HTTP API (payload 2.0) events
// through the api-proxy adapter.
// Its wiring is shared/wire/locationfiles.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/locationfiles"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

func main() {
	b := wire.MustBase("locationfiles")
	lambda.Start(b.Lambda(locationfiles.New(b, files.Jobs(b, files.NewS3(b))).Routes()))
}
