package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

func TestWithin(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		call func(context.Context) (string, error)
		want string
	}{
		{"InTime", context.Background(), func(ctx context.Context) (string, error) {
			if _, ok := ctx.Deadline(); !ok {
				return "", errors.New("no deadline")
			}
			return "ok", nil
		}, "ok <nil>"},
		{"BlocksPastTheTimeout", context.Background(), func(context.Context) (string, error) {
			<-release
			return "too late", nil
		}, " Task timed out after 0.02 seconds"},
		{"AnswersAtTheDeadline", context.Background(), func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "too late", ctx.Err()
		}, " Task timed out after 0.02 seconds"},
		{"Panics", context.Background(), func(context.Context) (string, error) {
			panic("handler bug")
		}, " handler panicked: handler bug"},
		{"CallerGone", cancelled, func(ctx context.Context) (string, error) {
			<-release
			return "too late", nil
		}, " context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Within(tc.ctx, 20*time.Millisecond, tc.call)
			if got := fmt.Sprintf("%s %v", v, err); got != tc.want {
				t.Fatalf("Within = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStreamInvocationTimesOut: a batch whose handler is still running at
// the function's Timeout (a call that ignores its context, as requests
// did while DynamoDB Local was paused) fails and is retried, instead of
// holding the stream for ever.
func TestStreamInvocationTimesOut(t *testing.T) {
	st, table := startStreamStack(t)
	st.Template.Functions[0].Timeout = 50 * time.Millisecond
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var calls atomic.Int32
	rec := &streamRecorder{}
	st.OnStream("watcher", func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		if calls.Add(1) == 1 {
			<-release
		}
		return rec.handle(ctx, ev)
	})
	if _, err := st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "slow"}}}); err != nil {
		t.Fatal(err)
	}
	idle(t, st)
	if got, want := fmt.Sprintf("%d calls, %v", calls.Load(), rec.keys()), "2 calls, [slow]"; got != want {
		t.Fatalf("deliveries = %s, want %s (the first timed out, the retry got through)", got, want)
	}
}

// TestS3InvocationTimesOut: every attempt of an S3 event whose handler
// runs past the function's Timeout fails, and after the retries the
// failure record names Lambda's timeout.
func TestS3InvocationTimesOut(t *testing.T) {
	tmpl, err := sam.Parse([]byte(notifyTemplate))
	if err != nil {
		t.Fatal(err)
	}
	for i := range tmpl.Functions {
		tmpl.Functions[i].Timeout = 50 * time.Millisecond
	}
	srv, err := StartS3(tmpl)
	if err != nil {
		t.Fatalf("StartS3: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	srv.notifier.retryDelays = []time.Duration{time.Millisecond, time.Millisecond}
	st := &Stack{s3: srv}
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var attempts atomic.Int32
	st.OnS3("jobs", func(context.Context, events.S3Event) error {
		attempts.Add(1)
		<-release
		return nil
	})
	got := make(chan json.RawMessage, 1)
	st.OnS3Failure("jobs", func(_ context.Context, raw json.RawMessage) (*events.SQSEventResponse, error) {
		got <- raw
		return &events.SQSEventResponse{}, nil
	})
	client := s3.NewFromConfig(testConfig(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(srv.Endpoint)
		o.UsePathStyle = true
	})
	ctx := context.Background()
	files := BucketName("FilesBucket")
	if err := CreateBuckets(ctx, client, []string{files}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(files), Key: aws.String("jobs/t/slow/input.csv"), Body: bytes.NewReader([]byte("x"))}); err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	select {
	case raw = <-got:
	case <-time.After(30 * time.Second):
		t.Fatalf("no failure record after %d attempts", attempts.Load())
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Records) != 1 {
		t.Fatalf("SQS event = %s (%v)", raw, err)
	}
	var rec struct {
		ResponsePayload struct {
			ErrorMessage string `json:"errorMessage"`
		} `json:"responsePayload"`
	}
	if err := json.Unmarshal([]byte(ev.Records[0].Body), &rec); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprintf("%d attempts: %s", attempts.Load(), rec.ResponsePayload.ErrorMessage), "3 attempts: Task timed out after 0.05 seconds"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
