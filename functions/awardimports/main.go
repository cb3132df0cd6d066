// Command awardimports is the Lambda function of the bulk award import's
// routes: starting an import (POST /awards/imports) and its results file
// (GET /awards/imports/{fileId}), of the points liability export's
// (POST /reports/points-liability/exports, GET
// /reports/points-liability/exports/{fileId}) and of its rebuild's (POST
// /reports/points-liability/rebuild); the jobs function runs them. It is
// apart from the loyalty function so that the loyalty function does not
// link the S3 client. It builds what it serves once per cold start and
// serves API Gateway HTTP API (payload 2.0) events through the api-proxy
// adapter.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/awardfiles"
	"github.com/loyalty-platform/platform/shared/wire/files"
)

func main() {
	b, err := wire.NewBase(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		log.Fatalf("awardimports: %v", err)
	}
	lambda.Start(b.Lambda(awardfiles.Starts(b, files.Jobs(b, files.NewS3(b))).Routes()))
}
