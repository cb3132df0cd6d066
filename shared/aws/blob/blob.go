// Package blob wraps Amazon S3 for the platform: the client (path-style
// when a local endpoint is used) and the subset of it the domains use. The
// bucket names are in shared/aws/bucket.
package blob

import (
	"bytes"
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

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

// Photos keeps images in one bucket by key: the profile photos in the
// media bucket (it implements avatar.Photos).
type Photos struct {
	S3     API
	Bucket string
}

// PutJPEG stores a JPEG image at key, served with a five-minute cache
// lifetime.
func (p Photos) PutJPEG(ctx context.Context, key string, jpeg []byte) error {
	_, err := p.S3.PutObject(ctx, &s3.PutObjectInput{
		Bucket:       aws.String(p.Bucket),
		Key:          aws.String(key),
		Body:         bytes.NewReader(jpeg),
		ContentType:  aws.String("image/jpeg"),
		CacheControl: aws.String("max-age=300"),
	})
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}

// Delete removes the object at key; S3 answers a missing object as
// deleted.
func (p Photos) Delete(ctx context.Context, key string) error {
	if _, err := p.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(p.Bucket), Key: aws.String(key)}); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}
