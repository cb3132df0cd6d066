// Package files builds what the functions that keep files in S3 share: the
// S3 client, made on its first use, the job runner on the files bucket
// (imports and exports) and the actions log with its export. Only the
// functions that import it link the S3 SDK.
//
// An API function builds a domain's file service to start its jobs and
// serve their files; only the jobs function (and the whole platform)
// registers the job kinds (Register), so the API functions do not link the
// code that runs the jobs.
package files

import (
	"context"
	"sync"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/aws/blob"
	"github.com/loyalty-platform/platform/shared/domain/actionlog"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/wire"
)

// S3 is a function's S3 client, made on the first call rather than at the
// cold start (most requests of a function that can store files store
// none). It serves what the jobs (job.S3API, job.Presigner) and the
// domains (blob.API) call.
type S3 struct {
	b       *wire.Base
	once    sync.Once
	client  *s3.Client
	presign *s3.PresignClient
}

// NewS3 returns the S3 client of b, made on first use from b.AWS.
func NewS3(b *wire.Base) *S3 { return &S3{b: b} }

// Photos returns the store of the profile photos: the media bucket
// through b's S3 client, made on first use.
func Photos(b *wire.Base) blob.Photos {
	return blob.Photos{S3: NewS3(b), Bucket: b.Config.Buckets.Media}
}

// Of returns c as an S3 (the whole platform makes its client at once).
func Of(c *s3.Client) *S3 {
	s := &S3{client: c, presign: s3.NewPresignClient(c)}
	s.once.Do(func() {})
	return s
}

// Client returns the SDK client, making it on the first call.
func (c *S3) Client() *s3.Client {
	c.once.Do(func() {
		c.client = blob.NewClient(c.b.AWS)
		c.presign = s3.NewPresignClient(c.client)
	})
	return c.client
}

// GetObject implements blob.API and job.S3API.
func (c *S3) GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	return c.Client().GetObject(ctx, in, opts...)
}

// PutObject implements blob.API and job.S3API.
func (c *S3) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	return c.Client().PutObject(ctx, in, opts...)
}

// HeadObject implements job.S3API.
func (c *S3) HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error) {
	return c.Client().HeadObject(ctx, in, opts...)
}

// DeleteObject implements blob.API.
func (c *S3) DeleteObject(ctx context.Context, in *s3.DeleteObjectInput, opts ...func(*s3.Options)) (*s3.DeleteObjectOutput, error) {
	return c.Client().DeleteObject(ctx, in, opts...)
}

// PresignGetObject implements job.Presigner.
func (c *S3) PresignGetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error) {
	c.Client()
	return c.presign.PresignGetObject(ctx, in, opts...)
}

// PresignPutObject implements job.Presigner.
func (c *S3) PresignPutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.PresignOptions)) (*v4.PresignedHTTPRequest, error) {
	c.Client()
	return c.presign.PresignPutObject(ctx, in, opts...)
}

// Jobs builds the job runner on the operations and the files bucket, with
// no kinds (Register adds them where jobs run).
func Jobs(b *wire.Base, c *S3) *job.Service {
	return &job.Service{
		Ops: b.Operations(), Bucket: b.Config.Buckets.Files, Clock: b.Clock, Log: b.Log, Kinds: map[string]job.Kind{},
		S3: c, Presign: c,
	}
}

// ActionLog builds the actions log (lists and exports) on jobs; a
// location's list reads the location (404 for an unknown one).
func ActionLog(b *wire.Base, jobs *job.Service) *actionlog.Service {
	return &actionlog.Service{
		Actions: b.Actions(), Cursor: b.Cursor, Owners: b.Profiles(), Users: b.Profiles(), Jobs: jobs,
		Locations: &location.Service{DB: b.DB, Tables: b.Config.Tables, Clock: b.Clock, Cursor: b.Cursor},
	}
}

// Register adds job kinds (the Kinds of the file services: actionlog,
// awardcsv, locationcsv) to the runner that runs them.
func Register(jobs *job.Service, kinds ...map[string]job.Kind) {
	for _, ks := range kinds {
		for k, v := range ks {
			jobs.Kinds[k] = v
		}
	}
}
