// Package blob wraps Amazon S3 for the platform: the client built once per
// cold start (path-style when a local endpoint is used) and the bucket names
// from the environment.
package blob

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/ddb"
)

// Buckets holds the physical bucket names that template.yaml sets; locally
// they default to fixed names.
type Buckets struct {
	Files string
	Media string
}

// BucketsFromEnv reads the bucket names from the environment.
func BucketsFromEnv() Buckets {
	b := Buckets{Files: os.Getenv("FILES_BUCKET"), Media: os.Getenv("MEDIA_BUCKET")}
	if b.Files == "" {
		b.Files = "platform-files"
	}
	if b.Media == "" {
		b.Media = "platform-media"
	}
	return b
}

// NewClient returns an S3 client for cfg. With a custom endpoint (a local S3
// server or LocalStack) it uses path-style addressing.
func NewClient(cfg aws.Config) *s3.Client {
	endpoint := ddb.Endpoint("S3")
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = endpoint != ""
		// Validate response checksums only when an operation requires it:
		// objects are written by this service, and local S3 stand-ins send
		// none.
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
}

// API is the subset of the S3 client the domains use.
type API interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	DeleteObject(context.Context, *s3.DeleteObjectInput, ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}
