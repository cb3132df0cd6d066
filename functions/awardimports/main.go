// Command awardimports is the Lambda function of the bulk award import's
// routes: starting an import (POST /awards/imports) and its results file
// (GET /awards/imports/{fileId}), of the points liability export's
// (POST /reports/points-liability/exports, GET
// /reports/points-liability/exports/{fileId}) and of its rebuild's (POST
// /reports/points-liability/rebuild); the jobs function runs them. It is
// apart from the loyalty function so that the loyalty function does not
// link the S3 client. Its wiring (shared/wire/awardimports) builds what it serves once per cold start and
// serves API Gateway HTTP API (payload 2.0) events through the api-proxy
// adapter.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/awardimports"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

func main() {
	b := wire.MustBase("awardimports")
	lambda.Start(b.Lambda(awardimports.New(b, files.Jobs(b, files.NewS3(b))).Routes()))
}
