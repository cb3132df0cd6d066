package testkit

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loyalty-platform/platform/localstack/stack"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
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
	var deps *whole.Deps
	for _, f := range st.Template.Functions {
		if len(f.Streams) == 0 {
			continue
		}
		if deps == nil {
			d, err := whole.New(context.Background(), wire.ConfigFromEnv())
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

// keptTitle ends the title of a tenant made by NewKeptFromStreams: the
// stream handlers of every test binary skip the records of such tenants
// (the stream of a table is shared by all the binaries using one DynamoDB
// Local, so a mark in the process would not do; the records carry the
// tenant's title).
const keptTitle = " (kept from the streams)"

// NewKeptFromStreams is New with a tenant whose records the stream-
// triggered functions of every test binary skip (the rules function's
// second path): the rules then run only in the requests that record the
// actions, with the test's clock. For a test that checks what the request
// path alone did and when (the stream handlers run on the real clock, and
// either path may apply a rule first); the stream path has tests of its
// own.
func NewKeptFromStreams(t testing.TB) *Harness { return newHarness(t, keptTitle) }

// kept reports whether a stream record is of a tenant kept from the
// streams: its image's context.tenant.title ends with keptTitle.
func kept(r events.DynamoDBEventRecord) bool {
	img := r.Change.NewImage
	if img == nil {
		img = r.Change.OldImage
	}
	at := func(m map[string]events.DynamoDBAttributeValue, k string) (events.DynamoDBAttributeValue, bool) {
		v, ok := m[k]
		return v, ok
	}
	ctx, ok := at(img, "context")
	if !ok || ctx.DataType() != events.DataTypeMap {
		return false
	}
	ten, ok := at(ctx.Map(), "tenant")
	if !ok || ten.DataType() != events.DataTypeMap {
		return false
	}
	title, ok := at(ten.Map(), "title")
	return ok && title.DataType() == events.DataTypeString && strings.HasSuffix(title.String(), keptTitle)
}

// own are the tenants this test binary made (Harness.newTenant), by id,
// each with the harness that made it.
// Every binary using one DynamoDB Local reads the same streams; each
// handles only the records of its own tenants, so that a test's
// WaitStreams (which waits for its own binary's handlers) sees all that
// happens to its tenant's records, and no other binary applies its rules.
var own sync.Map

// ours reports whether a stream record is of a tenant this binary made
// (its image's tenantId).
func ours(r events.DynamoDBEventRecord) bool {
	img := r.Change.NewImage
	if img == nil {
		img = r.Change.OldImage
	}
	t, ok := img["tenantId"]
	if !ok || t.DataType() != events.DataTypeString {
		return false
	}
	_, mine := own.Load(t.String())
	return mine
}

// withoutKept returns h with the records of this binary's tenants alone,
// less those of the tenants kept from the streams.
func withoutKept(h stack.StreamHandler) stack.StreamHandler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		recs := ev.Records[:0:0]
		for _, r := range ev.Records {
			if ours(r) && !kept(r) {
				recs = append(recs, r)
			}
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

// WatchStream calls see with each record the stack delivers to function's
// stream handler (the rules function: the Actions table's records), of
// every tenant, before the handler runs, until the test ends. A batch the
// handler fails is delivered again, so see may meet a record twice (its
// Change.SequenceNumber tells). The handler is the binary's one, so a test
// that watches stays serial, as one that counts (CountFunction).
func (h *Harness) WatchStream(function string, see func(events.DynamoDBEventRecord)) {
	h.T.Helper()
	st := Stack(h.T)
	handler := defaultStreams[function]
	if handler == nil {
		h.T.Fatalf("function %s has no stream handler in the stack", function)
	}
	st.OnStream(function, func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		for _, r := range ev.Records {
			see(r)
		}
		return handler(ctx, ev)
	})
	h.T.Cleanup(func() { st.OnStream(function, handler) })
}
