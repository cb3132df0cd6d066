package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/localstack/stack"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// QueueWait bounds WaitQueues.
const QueueWait = StreamWait

// subscribeQueues gives the stack's SQS stand-in the handlers of the
// functions with SQS events (the webhook sender), built once per test
// binary with the real clock, as subscribeStreams does. A harness may take
// its tenants' messages itself (OnQueue).
func subscribeQueues(st *stack.Stack) error {
	var deps *whole.Deps
	for _, f := range st.Template.Functions {
		if len(f.QueueEvents) == 0 {
			continue
		}
		if deps == nil {
			d, err := whole.New(context.Background(), wire.ConfigFromEnv())
			if err != nil {
				return fmt.Errorf("build the queue-triggered functions: %w", err)
			}
			deps = d
		}
		h, err := deps.QueueHandler(f.Name)
		if err != nil {
			return fmt.Errorf("function %s has SQS events: %w", f.Name, err)
		}
		routed := routeQueue(f.Name, h)
		st.OnQueue(f.Name, routed)
		defaultQueues[f.Name] = routed
	}
	return nil
}

// defaultQueues are the queue handlers subscribeQueues registered, by
// function name.
var defaultQueues = map[string]stack.QueueHandler{}

// queueOverrides are the handlers harnesses put in place of a function for
// their tenants (OnQueue), by function, then tenant id.
var queueOverrides sync.Map // "function\x00tenant" -> stack.QueueHandler

// tenantOf reads the tenant of a platform message (its body's "t").
func tenantOf(m events.SQSMessage) string {
	var b struct {
		T string `json:"t"`
	}
	_ = json.Unmarshal([]byte(m.Body), &b)
	return b.T
}

// routeQueue returns the handler of function that passes each tenant's
// messages, in their order, to the harness that took them (OnQueue), and
// the rest to def.
func routeQueue(function string, def stack.QueueHandler) stack.QueueHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		parts := map[string][]events.SQSMessage{}
		var order []string
		for _, m := range ev.Records {
			key := ""
			if _, ok := queueOverrides.Load(function + "\x00" + tenantOf(m)); ok {
				key = tenantOf(m)
			}
			if _, ok := parts[key]; !ok {
				order = append(order, key)
			}
			parts[key] = append(parts[key], m)
		}
		var resp events.SQSEventResponse
		for _, key := range order {
			h := def
			if key != "" {
				if v, ok := queueOverrides.Load(function + "\x00" + key); ok {
					h = v.(stack.QueueHandler)
				}
			}
			r, err := h(ctx, events.SQSEvent{Records: parts[key]})
			if err != nil {
				for _, m := range parts[key] {
					resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				}
				continue
			}
			resp.BatchItemFailures = append(resp.BatchItemFailures, r.BatchItemFailures...)
		}
		return resp, nil
	}
}

// OnQueue makes the harness's own function (its wiring in h.Deps, with the
// harness's clock) take the SQS messages of function (e.g.
// "webhooksender") for the harness's tenant until the test ends: a test of
// retries moves its clock and the stack's queue clock (SetQueueClock)
// together.
func (h *Harness) OnQueue(function string) {
	h.T.Helper()
	Stack(h.T)
	handler, err := h.Deps.QueueHandler(function)
	if err != nil {
		h.T.Fatalf("OnQueue: %v", err)
	}
	key := function + "\x00" + h.Tenant.ID
	queueOverrides.Store(key, stack.QueueHandler(handler))
	h.T.Cleanup(func() { queueOverrides.Delete(key) })
}

// WaitQueues waits until the stack's queues have nothing to deliver now and
// every batch received was handled (stack.QueueIdle).
func (h *Harness) WaitQueues() {
	h.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), QueueWait)
	defer cancel()
	if err := Stack(h.T).QueueIdle(ctx); err != nil {
		h.T.Fatalf("wait for the queues: %v", err)
	}
}
