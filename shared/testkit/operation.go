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
// (each routes the events of a harness's tenants to what OnS3 set).
var defaultS3 = map[string]stack.S3Handler{}

// routeS3 returns the stack's handler of function's S3 events: an event
// whose object is under the jobs folder of a tenant a harness made
// (jobs/{tenantId}/...) and whose harness handles function itself (OnS3,
// CaptureS3) goes to the harness's handler, any other to def. Tests that
// handle a function's events themselves may thus run in parallel.
func routeS3(function string, def stack.S3Handler) stack.S3Handler {
	return func(ctx context.Context, ev events.S3Event) error {
		if len(ev.Records) > 0 {
			if h, ok := owner(ev.Records[0].S3.Object.Key); ok {
				h.mu.Lock()
				own := h.s3[function]
				h.mu.Unlock()
				if own != nil {
					return own(ctx, ev)
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

// OnS3 runs handler on the S3 events of function (e.g. "jobs") for the
// harness's tenants (New's and NewTenant's) instead of the stack's
// function, until the test ends or OnS3 replaces it: for instance the
// harness's own jobs function, with its clock and knobs. The events of
// other tests' tenants still reach the stack's function, so a test that
// does this may run in parallel with others; tenants made otherwise (POST
// /tenants) are not covered.
func (h *Harness) OnS3(function string, handler stack.S3Handler) {
	h.T.Helper()
	Stack(h.T)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.s3 == nil {
		h.s3 = map[string]stack.S3Handler{}
		h.T.Cleanup(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.s3 = nil
		})
	}
	h.s3[function] = handler
}

// CaptureS3 collects the S3 events of function (e.g. "jobs") for the
// harness's tenants instead of running it (OnS3), for the rest of the
// test: the test runs them itself (with its own dependencies and knobs).
func (h *Harness) CaptureS3(function string) *S3Capture {
	h.T.Helper()
	c := &S3Capture{got: make(chan struct{}, 1000)}
	h.OnS3(function, func(_ context.Context, ev events.S3Event) error {
		c.mu.Lock()
		c.events = append(c.events, ev)
		c.mu.Unlock()
		c.got <- struct{}{}
		return nil
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
