package testkit

import (
	"context"
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

// defaultS3 are the S3 handlers subscribeS3 registered, by function name.
var defaultS3 = map[string]stack.S3Handler{}

// S3Capture collects the S3 events of a function instead of running it.
type S3Capture struct {
	mu     sync.Mutex
	events []events.S3Event
	got    chan struct{}
}

// CaptureS3 stops the stack from running function (e.g. "jobs") on its S3
// events for the rest of the test: they are collected, and the test runs
// them itself (with its own dependencies and knobs). The function's usual
// handler is back when the test ends. Tests that capture must not run in
// parallel with other tests of their package.
func (h *Harness) CaptureS3(function string) *S3Capture {
	h.T.Helper()
	st := Stack(h.T)
	c := &S3Capture{got: make(chan struct{}, 1000)}
	st.OnS3(function, func(_ context.Context, ev events.S3Event) error {
		c.mu.Lock()
		c.events = append(c.events, ev)
		c.mu.Unlock()
		c.got <- struct{}{}
		return nil
	})
	h.T.Cleanup(func() {
		if d := defaultS3[function]; d != nil {
			st.OnS3(function, d)
		}
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
