package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
)

// headerCalls names, on a request DoCounted sends, the counter its storage
// calls go to. The harness's server reads it before API Gateway's stand-in
// does (which passes the request's context on to the function).
const headerCalls = "x-test-calls"

// callCounters are the counters of the requests DoCounted has in flight.
var callCounters sync.Map // id -> *callcount.Counter

// countCalls puts the counter a request names (headerCalls) in its
// context: the SDK middleware counts the function's DynamoDB and S3 calls
// in it, as the web middleware does for the request log line.
func countCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(headerCalls); id != "" {
			if c, ok := callCounters.Load(id); ok {
				r = r.WithContext(callcount.With(r.Context(), c.(*callcount.Counter)))
			}
			r.Header.Del(headerCalls)
		}
		next.ServeHTTP(w, r)
	})
}

// DoCounted is Do, and returns the DynamoDB and S3 calls the request made
// (every call is made before the function answers, so the count is
// complete when the response arrives).
func (h *Harness) DoCounted(method, path string, body any, headers ...Headers) (*Resp, *callcount.Counter) {
	h.T.Helper()
	c := callcount.New()
	return h.DoInto(c, method, path, body, headers...), c
}

// DoInto is Do, adding the DynamoDB and S3 calls the request made to c
// (and, when c records them, their accesses: callcount.NewRecording).
func (h *Harness) DoInto(c *callcount.Counter, method, path string, body any, headers ...Headers) *Resp {
	h.T.Helper()
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	callCounters.Store(id, c)
	defer callCounters.Delete(id)
	return h.Do(method, path, body, append(headers, Headers{headerCalls, id})...)
}

// CountFunction adds the calls of function's S3-triggered,
// stream-triggered and queue-triggered runs (the jobs, rules, webhook
// fan-out and sender functions), as the stack delivers their events, to c until the test ends. It counts the runs for
// every tenant (a stream batch mixes them), so a test that counts a
// function stays serial.
func (h *Harness) CountFunction(function string, c *callcount.Counter) {
	h.T.Helper()
	st := Stack(h.T)
	s3h, streamh, queueh := defaultS3[function], defaultStreams[function], defaultQueues[function]
	if s3h == nil && streamh == nil && queueh == nil {
		h.T.Fatalf("function %s has no S3, stream or queue handler in the stack", function)
	}
	if queueh != nil {
		st.OnQueue(function, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			return queueh(callcount.With(ctx, c), ev)
		})
	}
	if s3h != nil {
		st.OnS3(function, func(ctx context.Context, ev events.S3Event) error {
			return s3h(callcount.With(ctx, c), ev)
		})
	}
	if streamh != nil {
		st.OnStream(function, func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			return streamh(callcount.With(ctx, c), ev)
		})
	}
	h.T.Cleanup(func() {
		if queueh != nil {
			st.OnQueue(function, queueh)
		}
		if s3h != nil {
			st.OnS3(function, s3h)
		}
		if streamh != nil {
			st.OnStream(function, streamh)
		}
	})
}
