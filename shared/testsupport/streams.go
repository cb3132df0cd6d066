package testsupport

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loyalty-platform/platform/localstack/stack"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/app/platform"
)

// StreamWait bounds WaitStreams.
const StreamWait = 30 * time.Second

// subscribeStreams gives the stack the handlers of the functions with
// DynamoDB stream events (the rules function on the Actions table's
// stream), built once per test binary with the real clock, as
// subscribeS3 does: like a deployed function, they run apart from the
// test's own dependencies. The stream of a table is shared by every test
// (and every test binary) using the same DynamoDB Local, so the handlers
// get the records of every tenant. Tests wait for them with WaitStreams.
func subscribeStreams(st *stack.Stack) error {
	var deps *platform.Deps
	for _, f := range st.Template.Functions {
		if len(f.Streams) == 0 {
			continue
		}
		if deps == nil {
			d, err := platform.New(context.Background(), app.ConfigFromEnv())
			if err != nil {
				return fmt.Errorf("build the stream-triggered functions: %w", err)
			}
			deps = d
		}
		raw, err := deps.StreamHandler(f.Name)
		if err != nil {
			return fmt.Errorf("function %s has DynamoDB stream events: %w", f.Name, err)
		}
		h := withoutKept(raw)
		st.OnStream(f.Name, h)
		defaultStreams[f.Name] = h
	}
	return nil
}

// kept are the tenants whose stream records the stream-triggered
// functions do not get (KeepFromStreams), by tenant id.
var kept sync.Map

// KeepFromStreams keeps the records of this test's tenant from the
// stream-triggered functions (the rules function's second path): the
// rules then run only in the requests that record the actions, with the
// test's clock. For a test that checks what the request path alone did
// and when (the stream handlers run on the real clock, and either path may
// apply a rule first); the stream path has tests of its own.
func (h *Harness) KeepFromStreams() { kept.Store(h.Tenant.ID, true) }

// withoutKept returns h without the records of the tenants kept from the
// streams (a record's tenantId attribute).
func withoutKept(h stack.StreamHandler) stack.StreamHandler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		recs := ev.Records[:0:0]
		for _, r := range ev.Records {
			img := r.Change.NewImage
			if img == nil {
				img = r.Change.OldImage
			}
			if t, ok := img["tenantId"]; ok && t.DataType() == events.DataTypeString {
				if _, skip := kept.Load(t.String()); skip {
					continue
				}
			}
			recs = append(recs, r)
		}
		if len(recs) == 0 {
			return events.DynamoDBEventResponse{}, nil
		}
		ev.Records = recs
		return h(ctx, ev)
	}
}

// defaultStreams are the stream handlers subscribeStreams registered, by
// function name.
var defaultStreams = map[string]stack.StreamHandler{}

// WaitStreams waits until every DynamoDB stream record written so far (by
// this test or any other) has been delivered to the functions with stream
// events (the rules function) and their handlers returned, as Lambda's
// event source mappings deliver them after a write. It fails the test when
// that takes longer than StreamWait (a record that keeps failing is
// retried, bisected and skipped well within it).
func (h *Harness) WaitStreams() {
	h.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StreamWait)
	defer cancel()
	if err := Stack(h.T).StreamIdle(ctx); err != nil {
		h.T.Fatalf("wait for the stream records: %v", err)
	}
}
