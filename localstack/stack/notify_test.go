package stack

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

const notifyTemplate = `
Resources:
  JobsFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Input:
          Type: S3
          Properties:
            Bucket: !Ref FilesBucket
            Events: s3:ObjectCreated:*
            Filter:
              S3Key:
                Rules:
                  - Name: prefix
                    Value: jobs/
                  - Name: suffix
                    Value: input.csv
  OtherFunction:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Media:
          Type: S3
          Properties:
            Bucket: !Ref MediaBucket
            Events: s3:ObjectCreated:*
  FilesBucket:
    Type: AWS::S3::Bucket
  MediaBucket:
    Type: AWS::S3::Bucket
`

// recorder collects the events a handler receives.
type recorder struct {
	mu     sync.Mutex
	events []events.S3Event
	got    chan struct{}
	fail   int // fail this many calls first
}

func newRecorder() *recorder { return &recorder{got: make(chan struct{}, 100)} }

func (r *recorder) handle(_ context.Context, ev events.S3Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
	r.got <- struct{}{}
	if r.fail > 0 {
		r.fail--
		return errors.New("handler failed")
	}
	return nil
}

// wait waits for n more calls (a bounded wait for asynchronous delivery,
// not a timing assertion).
func (r *recorder) wait(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-r.got:
		case <-time.After(30 * time.Second):
			t.Fatalf("no delivery after %d of %d", i, n)
		}
	}
}

func (r *recorder) all() []events.S3Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.S3Event(nil), r.events...)
}

func TestS3Notifications(t *testing.T) {
	tmpl, err := sam.Parse([]byte(notifyTemplate))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := StartS3(tmpl)
	if err != nil {
		t.Fatalf("StartS3: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	srv.notifier.retryDelays = []time.Duration{time.Millisecond, time.Millisecond}
	st := &Stack{s3: srv}
	jobs, other := newRecorder(), newRecorder()
	st.OnS3("jobs", jobs.handle)
	st.OnS3("other", other.handle)

	client := s3.NewFromConfig(testConfig(), func(o *s3.Options) {
		o.BaseEndpoint = aws.String(srv.Endpoint)
		o.UsePathStyle = true
	})
	ctx := context.Background()
	files, media := BucketName("FilesBucket"), BucketName("MediaBucket")
	if err := CreateBuckets(ctx, client, []string{files, media}); err != nil {
		t.Fatal(err)
	}
	put := func(bucket, key string, body []byte) {
		t.Helper()
		if _, err := client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
			t.Fatalf("PutObject %s: %v", key, err)
		}
	}

	t.Run("PutMatchingKey", func(t *testing.T) {
		body := []byte("title\nA\n")
		put(files, "jobs/t 1/op/input.csv", body)
		jobs.wait(t, 1)
		ev := jobs.all()[len(jobs.all())-1]
		if len(ev.Records) != 1 {
			t.Fatalf("records = %d", len(ev.Records))
		}
		rec := ev.Records[0]
		sum := md5.Sum(body)
		if rec.EventName != "ObjectCreated:Put" || rec.EventSource != "aws:s3" || rec.AWSRegion == "" ||
			rec.S3.Bucket.Name != files || rec.S3.Object.Key != "jobs/t+1/op/input.csv" ||
			rec.S3.Object.Size != int64(len(body)) || rec.S3.Object.ETag != hex.EncodeToString(sum[:]) {
			t.Fatalf("record = %+v", rec)
		}
	})

	t.Run("KeysThatDoNotMatchAreNotDelivered", func(t *testing.T) {
		before := len(jobs.all())
		put(files, "jobs/t/op/results.csv", []byte("x"))
		put(files, "other/input.csv", []byte("x"))
		// A matching put afterwards is delivered; the two before it were not.
		put(files, "jobs/t/op2/input.csv", []byte("x"))
		jobs.wait(t, 1)
		evs := jobs.all()
		if len(evs) != before+1 || evs[len(evs)-1].Records[0].S3.Object.Key != "jobs/t/op2/input.csv" {
			t.Fatalf("events after = %d (before %d)", len(evs), before)
		}
	})

	t.Run("OtherBucketGoesToItsFunction", func(t *testing.T) {
		put(media, "users/avatars/u.jpg", []byte("jpeg"))
		other.wait(t, 1)
		if k := other.all()[0].Records[0].S3.Object.Key; k != "users/avatars/u.jpg" {
			t.Fatalf("key = %q", k)
		}
	})

	t.Run("CopyObject", func(t *testing.T) {
		_, err := client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(files), Key: aws.String("jobs/t/op3/input.csv"), CopySource: aws.String(files + "/jobs/t/op2/input.csv")})
		if err != nil {
			t.Fatal(err)
		}
		jobs.wait(t, 1)
		evs := jobs.all()
		if rec := evs[len(evs)-1].Records[0]; rec.EventName != "ObjectCreated:Copy" || rec.S3.Object.Key != "jobs/t/op3/input.csv" {
			t.Fatalf("record = %+v", rec)
		}
	})

	t.Run("CompleteMultipartUpload", func(t *testing.T) {
		key := "jobs/t/op4/input.csv"
		up, err := client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(files), Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		part, err := client.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(files), Key: aws.String(key), UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("title\nB\n"))})
		if err != nil {
			t.Fatal(err)
		}
		before := len(jobs.all())
		if _, err := client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
			Bucket: aws.String(files), Key: aws.String(key), UploadId: up.UploadId,
			MultipartUpload: &s3types.CompletedMultipartUpload{Parts: []s3types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}},
		}); err != nil {
			t.Fatal(err)
		}
		jobs.wait(t, 1)
		evs := jobs.all()
		if len(evs) != before+1 {
			t.Fatalf("UploadPart was delivered too: %d events", len(evs)-before)
		}
		if rec := evs[len(evs)-1].Records[0]; rec.EventName != "ObjectCreated:CompleteMultipartUpload" || rec.S3.Object.Size != 8 {
			t.Fatalf("record = %+v", rec)
		}
	})

	t.Run("FailedHandlerIsRetriedTwice", func(t *testing.T) {
		jobs.mu.Lock()
		jobs.fail = 5
		jobs.mu.Unlock()
		before := len(jobs.all())
		put(files, "jobs/t/op5/input.csv", []byte("x"))
		jobs.wait(t, 3)
		// The third call was the last retry; a later put shows no fourth.
		jobs.mu.Lock()
		jobs.fail = 0
		jobs.mu.Unlock()
		put(files, "jobs/t/op6/input.csv", []byte("x"))
		jobs.wait(t, 1)
		evs := jobs.all()[before:]
		if len(evs) != 4 || evs[3].Records[0].S3.Object.Key != "jobs/t/op6/input.csv" {
			t.Fatalf("deliveries = %d", len(evs))
		}
	})

	t.Run("FailureRecordAfterLastRetry", func(t *testing.T) {
		// As Lambda sends the destination record of an invocation that
		// failed after its retries to the OnFailure queue, which delivers
		// it to the function as an SQS event.
		got := make(chan json.RawMessage, 10)
		st.OnS3Failure("jobs", func(_ context.Context, raw json.RawMessage) (*events.SQSEventResponse, error) {
			got <- raw
			return &events.SQSEventResponse{}, nil
		})
		defer st.OnS3Failure("jobs", nil)
		jobs.mu.Lock()
		jobs.fail = 3
		jobs.mu.Unlock()
		put(files, "jobs/t/op7/input.csv", []byte("x"))
		jobs.wait(t, 3)
		type record struct {
			Version        string `json:"version"`
			RequestContext struct {
				Condition              string `json:"condition"`
				ApproximateInvokeCount int    `json:"approximateInvokeCount"`
			} `json:"requestContext"`
			RequestPayload  events.S3Event `json:"requestPayload"`
			ResponsePayload struct {
				ErrorMessage string `json:"errorMessage"`
			} `json:"responsePayload"`
		}
		// decode reads one SQS event of the failure queue and the key of
		// the object whose event failed.
		decode := func(raw json.RawMessage) (record, string) {
			t.Helper()
			var ev events.SQSEvent
			if err := json.Unmarshal(raw, &ev); err != nil || len(ev.Records) != 1 || ev.Records[0].EventSource != "aws:sqs" || ev.Records[0].MessageId == "" {
				t.Fatalf("SQS event = %s (%v)", raw, err)
			}
			var rec record
			if err := json.Unmarshal([]byte(ev.Records[0].Body), &rec); err != nil {
				t.Fatalf("body %s: %v", ev.Records[0].Body, err)
			}
			key := ""
			if len(rec.RequestPayload.Records) == 1 {
				key = rec.RequestPayload.Records[0].S3.Object.Key
			}
			return rec, key
		}
		// The earlier subtest's failed event (op5) may send its record
		// after this handler was registered; only op7's record counts.
		var rec record
		for found := false; !found; {
			select {
			case raw := <-got:
				var key string
				rec, key = decode(raw)
				found = key == "jobs/t/op7/input.csv"
			case <-time.After(30 * time.Second):
				t.Fatal("no failure record")
			}
		}
		if rec.Version != "1.0" || rec.RequestContext.Condition != "RetriesExhausted" || rec.RequestContext.ApproximateInvokeCount != 3 ||
			len(rec.RequestPayload.Records) != 1 || rec.RequestPayload.Records[0].S3.Object.Key != "jobs/t/op7/input.csv" ||
			rec.ResponsePayload.ErrorMessage != "handler failed" {
			t.Fatalf("record = %+v", rec)
		}
		// An event that succeeds on a retry sends no record.
		jobs.mu.Lock()
		jobs.fail = 1
		jobs.mu.Unlock()
		put(files, "jobs/t/op8/input.csv", []byte("x"))
		jobs.wait(t, 2)
		put(files, "jobs/t/op9/input.csv", []byte("x"))
		jobs.wait(t, 1)
		for drained := false; !drained; {
			select {
			case raw := <-got:
				if _, key := decode(raw); key != "jobs/t/op5/input.csv" {
					t.Fatalf("a record for an event that succeeded: %s", raw)
				}
			default:
				drained = true
			}
		}
	})
}
