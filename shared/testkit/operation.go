package testkit

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/localstack/stack"
)

// WaitOperation polls GET /operations/{id} as the tenant's admin until the
// operation is DONE or FAILED, and returns it. The jobs function runs
// asynchronously (the stack's S3 delivers its event); the wait is bounded
// (one minute) and is not a timing assertion.
func (h *Harness) WaitOperation(id string) map[string]any {
	h.T.Helper()
	deadline := time.Now().Add(time.Minute)
	pause := 10 * time.Millisecond
	for {
		op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(h.T, 200, "").Map(h.T)
		if st := op["status"]; st == "DONE" || st == "FAILED" {
			return op
		}
		if time.Now().After(deadline) {
			h.T.Fatalf("operation %s is still %v after a minute: %v", id, op["status"], op)
		}
		time.Sleep(pause)
		if pause < 200*time.Millisecond {
			pause *= 2
		}
	}
}

// defaultS3 are the S3 handlers subscribeS3 registered, by function name
// (each routes the events of a harness's tenants to what CaptureS3 set).
var defaultS3 = map[string]stack.S3Handler{}

// routeS3 returns the stack's handler of function's S3 events: an event
// whose object is under the jobs folder of a tenant a harness made
// (jobs/{tenantId}/...) and whose harness captures function goes to the
// capture, any other to def. Captures are thus per test, and tests that
// capture may run in parallel.
func routeS3(function string, def stack.S3Handler) stack.S3Handler {
	return func(ctx context.Context, ev events.S3Event) error {
		if len(ev.Records) > 0 {
			if h, ok := owner(ev.Records[0].S3.Object.Key); ok {
				h.mu.Lock()
				capture := h.s3[function]
				h.mu.Unlock()
				if capture != nil {
					return capture(ctx, ev)
				}
			}
		}
		return def(ctx, ev)
	}
}

// owner returns the harness that made the tenant of a job file's key
// (jobs/{tenantId}/{operationId}/...).
func owner(key string) (*Harness, bool) {
	rest, ok := strings.CutPrefix(key, "jobs/")
	if !ok {
		return nil, false
	}
	tenantID, _, _ := strings.Cut(rest, "/")
	h, ok := own.Load(tenantID)
	if !ok {
		return nil, false
	}
	return h.(*Harness), true
}

// S3Capture collects the S3 events of a function instead of running it.
type S3Capture struct {
	mu     sync.Mutex
	events []events.S3Event
	got    chan struct{}
}

// CaptureS3 stops the stack from running function (e.g. "jobs") on the S3
// events of the harness's tenants (New's and NewTenant's) for the rest of
// the test: they are collected, and the test runs them itself (with its
// own dependencies and knobs). The events of other tests' tenants still
// reach the function, so a test that captures may run in parallel with
// others; tenants made otherwise (POST /tenants) are not captured.
func (h *Harness) CaptureS3(function string) *S3Capture {
	h.T.Helper()
	Stack(h.T)
	c := &S3Capture{got: make(chan struct{}, 1000)}
	h.mu.Lock()
	if h.s3 == nil {
		h.s3 = map[string]stack.S3Handler{}
	}
	h.s3[function] = func(_ context.Context, ev events.S3Event) error {
		c.mu.Lock()
		c.events = append(c.events, ev)
		c.mu.Unlock()
		c.got <- struct{}{}
		return nil
	}
	h.mu.Unlock()
	h.T.Cleanup(func() {
		h.mu.Lock()
		delete(h.s3, function)
		h.mu.Unlock()
	})
	return c
}

// Next waits (at most a minute) for the next captured event and returns it.
func (c *S3Capture) Next(t testing.TB) events.S3Event {
	t.Helper()
	select {
	case <-c.got:
	case <-time.After(time.Minute):
		t.Fatalf("no S3 event within a minute")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := c.events[0]
	c.events = c.events[1:]
	return ev
}

// Pending returns the events captured and not taken by Next yet, and
// forgets them.
func (c *S3Capture) Pending() []events.S3Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.events
	c.events = nil
	for range out {
		<-c.got
	}
	return out
}
