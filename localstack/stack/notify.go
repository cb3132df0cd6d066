package stack

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/johannesboyne/gofakes3"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// S3Handler handles an S3 event as a function with S3 triggers does.
type S3Handler func(context.Context, events.S3Event) error

// Local delivery of S3 ObjectCreated notifications, as S3 and Lambda do it:
// after a successful PutObject, CopyObject or CompleteMultipartUpload on
// the in-process S3, an event of the real shape (events.S3Event) goes to
// every function whose template S3 trigger matches the bucket (logical id
// to physical name as BucketName does), the event type and the key's
// prefix and suffix. Delivery is asynchronous, like S3's invocation of
// Lambda, and a handler error is retried twice (Lambda retries failed
// asynchronous invocations twice; here after 1 and 2 seconds instead of 1
// and 2 minutes); each attempt ends at the function's template Timeout (see
// Within). A function gets events only once a handler is registered
// with OnS3. When the last retry fails too and OnS3Failure registered a
// handler for the function, the stack sends it Lambda's destination record
// of the failed invocation inside an SQS event, as the function's OnFailure
// queue would (template.yaml: JobsFailedQueue). With AWS_ENDPOINT_URL
// (LocalStack, an account) the stack starts no S3 and delivers nothing:
// configure notifications there.

// notifier matches created objects with the template's S3 triggers and
// delivers the events.
type notifier struct {
	template *sam.Template
	backend  gofakes3.Backend

	mu       sync.Mutex
	handlers map[string]S3Handler      // by function name
	failures map[string]FailureHandler // by function name
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	// RetryDelays are the waits before the retries of a failed delivery.
	retryDelays []time.Duration
}

func newNotifier(t *sam.Template, backend gofakes3.Backend) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	return &notifier{
		template: t, backend: backend, handlers: map[string]S3Handler{}, failures: map[string]FailureHandler{}, ctx: ctx, cancel: cancel,
		retryDelays: []time.Duration{time.Second, 2 * time.Second},
	}
}

// OnS3 registers the handler of a template function (by name, e.g. "jobs")
// for its S3 triggers; a later registration replaces an earlier one. It does
// nothing when the stack runs no S3 of its own.
func (s *Stack) OnS3(function string, h S3Handler) {
	if s.s3 == nil || s.s3.notifier == nil {
		return
	}
	n := s.s3.notifier
	n.mu.Lock()
	defer n.mu.Unlock()
	n.handlers[function] = h
}

// FailureHandler handles an SQS event of a function's failure queue, whose
// messages are destination records of failed invocations (the function's
// Lambda handler, taking the event as JSON). It answers the messages to
// deliver again.
type FailureHandler func(context.Context, json.RawMessage) (*events.SQSEventResponse, error)

// OnS3Failure registers the handler that gets the destination record of
// each S3 event the function failed on after its retries, as an SQS
// message. It does nothing when the stack runs no S3 of its own.
func (s *Stack) OnS3Failure(function string, h FailureHandler) {
	if s.s3 == nil || s.s3.notifier == nil {
		return
	}
	n := s.s3.notifier
	n.mu.Lock()
	defer n.mu.Unlock()
	n.failures[function] = h
}

// wrap returns the S3 server's handler: gofakes3 and, after each request
// that created an object, the notification.
func (n *notifier) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		event := createdEvent(r)
		if event == "" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		if rec.status != http.StatusOK {
			return
		}
		bucket, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !ok || key == "" {
			return
		}
		n.created(bucket, key, event, r)
	})
}

// createdEvent names the ObjectCreated event a request causes when it
// succeeds, or "" for requests that create no object.
func createdEvent(r *http.Request) string {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPut && q.Has("uploadId"):
		return "" // UploadPart
	case r.Method == http.MethodPut && r.Header.Get("x-amz-copy-source") != "":
		return "ObjectCreated:Copy"
	case r.Method == http.MethodPut:
		return "ObjectCreated:Put"
	case r.Method == http.MethodPost && q.Has("uploadId"):
		return "ObjectCreated:CompleteMultipartUpload"
	}
	return ""
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// created delivers the event of a new object to the matching functions.
func (n *notifier) created(bucket, key, eventName string, r *http.Request) {
	var size int64
	var etag string
	if obj, err := n.backend.HeadObject(bucket, key); err == nil {
		size, etag = obj.Size, hexString(obj.Hash)
		if obj.Contents != nil {
			_ = obj.Contents.Close()
		}
	}
	ev := S3Event(bucket, key, eventName, size, etag)
	ev.Records[0].RequestParameters.SourceIPAddress = r.RemoteAddr
	for _, f := range n.template.Functions {
		for _, trig := range f.S3Events {
			if BucketName(trig.Bucket) != bucket || !strings.HasPrefix(key, trig.Prefix) || !strings.HasSuffix(key, trig.Suffix) {
				continue
			}
			n.mu.Lock()
			h := n.handlers[f.Name]
			n.mu.Unlock()
			if h == nil {
				slog.Debug("s3 event for a function without a local handler", "function", f.Name, "key", key)
				continue
			}
			n.deliver(f.Name, h, ev)
			break // one event per function, even when two triggers match
		}
	}
}

// deliver invokes h with ev in the background, retrying a failure twice.
func (n *notifier) deliver(function string, h S3Handler, ev events.S3Event) {
	n.mu.Lock()
	if n.ctx.Err() != nil {
		n.mu.Unlock()
		return
	}
	n.wg.Add(1)
	n.mu.Unlock()
	go func() {
		defer n.wg.Done()
		timeout := FunctionTimeout(n.template, function)
		for attempt := 0; ; attempt++ {
			_, err := Within(n.ctx, timeout, func(ctx context.Context) (struct{}, error) { return struct{}{}, h(ctx, ev) })
			if err == nil {
				return
			}
			slog.Warn("s3 event handler failed", "function", function, "key", ev.Records[0].S3.Object.Key, "attempt", attempt+1, "err", err)
			if attempt >= len(n.retryDelays) {
				n.failed(function, ev, err, attempt+1)
				return
			}
			select {
			case <-time.After(n.retryDelays[attempt]):
			case <-n.ctx.Done():
				return
			}
		}
	}()
}

// failed sends the destination record of an event whose every attempt
// failed to the function's failure handler, if it has one, in an SQS event
// of one message (Lambda's record and SQS's event shapes).
func (n *notifier) failed(function string, ev events.S3Event, cause error, attempts int) {
	n.mu.Lock()
	h := n.failures[function]
	n.mu.Unlock()
	if h == nil {
		return
	}
	now := time.Now().UTC()
	requestID := randomID()
	record := map[string]any{
		"version":   "1.0",
		"timestamp": clock.Stamp(now),
		"requestContext": map[string]any{
			"requestId":              requestID,
			"functionArn":            fmt.Sprintf("arn:aws:lambda:%s:000000000000:function:%s:$LATEST", region(), function),
			"condition":              "RetriesExhausted",
			"approximateInvokeCount": attempts,
		},
		"requestPayload":  ev,
		"responseContext": map[string]any{"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
		"responsePayload": map[string]any{"errorMessage": cause.Error(), "errorType": "errorString"},
	}
	body, err := json.Marshal(record)
	if err != nil {
		slog.Error("s3 event failure record", "function", function, "err", err)
		return
	}
	msg := events.SQSEvent{Records: []events.SQSMessage{{
		MessageId: randomID(), ReceiptHandle: "local-" + requestID, Body: string(body),
		Attributes: map[string]string{
			"ApproximateReceiveCount": "1",
			"SentTimestamp":           strconv.FormatInt(now.UnixMilli(), 10),
		},
		Md5OfBody:      hexString(md5Sum(body)),
		EventSource:    "aws:sqs",
		EventSourceARN: fmt.Sprintf("arn:aws:sqs:%s:000000000000:%s-failures", region(), function),
		AWSRegion:      region(),
	}}}
	raw, err := json.Marshal(msg)
	if err != nil {
		slog.Error("s3 event failure record", "function", function, "err", err)
		return
	}
	resp, err := Within(n.ctx, FunctionTimeout(n.template, function), func(ctx context.Context) (*events.SQSEventResponse, error) {
		return h(ctx, raw)
	})
	switch {
	case err != nil:
		slog.Error("failure record handler failed", "function", function, "err", err)
	case resp != nil && len(resp.BatchItemFailures) > 0:
		slog.Warn("failure record not processed (SQS would deliver it again)", "function", function)
	}
}

// randomID returns a random identifier in the 8-4-4-4-12 form of Lambda
// request ids and SQS message ids.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func md5Sum(b []byte) []byte {
	sum := md5.Sum(b)
	return sum[:]
}

// close stops new deliveries, cancels those in flight and waits for them.
func (n *notifier) close() {
	n.mu.Lock()
	n.cancel()
	n.mu.Unlock()
	n.wg.Wait()
}

// S3Event returns an ObjectCreated event of the shape S3 sends to Lambda for
// one object (the key URL-encoded as S3 encodes it).
func S3Event(bucket, key, eventName string, size int64, etag string) events.S3Event {
	now := time.Now().UTC()
	return events.S3Event{Records: []events.S3EventRecord{{
		EventVersion: "2.1",
		EventSource:  "aws:s3",
		AWSRegion:    region(),
		EventTime:    now,
		EventName:    eventName,
		PrincipalID:  events.S3UserIdentity{PrincipalID: "AWS:LOCAL"},
		ResponseElements: map[string]string{
			"x-amz-request-id": "LOCAL" + now.Format("150405.000000"),
			"x-amz-id-2":       "local",
		},
		S3: events.S3Entity{
			SchemaVersion:   "1.0",
			ConfigurationID: "local-notification",
			Bucket: events.S3Bucket{
				Name:          bucket,
				OwnerIdentity: events.S3UserIdentity{PrincipalID: "LOCAL"},
				Arn:           "arn:aws:s3:::" + bucket,
			},
			Object: events.S3Object{
				Key:       EncodeKey(key),
				Size:      size,
				ETag:      etag,
				Sequencer: fmt.Sprintf("%016X", now.UnixNano()),
			},
		},
	}}}
}

// EncodeKey URL-encodes an object key as S3 event notifications do (form
// encoding: a space is "+"; "/" stays).
func EncodeKey(key string) string {
	return strings.ReplaceAll(url.QueryEscape(key), "%2F", "/")
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
