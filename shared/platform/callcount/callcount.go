// Package callcount counts the AWS calls (DynamoDB, S3, ...) each request
// makes: an AWS SDK v2 middleware (Middleware, added to the clients' API
// options by shared/wire) adds every call to the Counter the request's
// context carries. The web middleware puts a Counter in the context at the
// start of every request and logs its totals on the request's log line
// (ddbCalls, s3Calls); tests put their own to check the budgets of
// shared/contract/budget. A call made with no Counter in its context costs one
// context lookup and counts nowhere. A counter made with NewRecording also
// records the IAM action and table of each DynamoDB call (Accesses): the
// check that every function's policy allows what its code calls.
package callcount

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/aws/smithy-go/middleware"
)

// Service ids of the clients the platform counts (the SDK's ServiceID).
const (
	DynamoDB = "DynamoDB"
	S3       = "S3"
)

// Counter counts the calls of one request per service and operation. It is
// safe for concurrent use (a request may call in parallel).
type Counter struct {
	mu    sync.Mutex
	calls map[string]int // "<service>.<operation>"
	// records is set, once and for all, by NewRecording; accesses then
	// counts the DynamoDB calls' accesses.
	records  bool
	accesses map[Access]int
}

// New returns an empty counter.
func New() *Counter { return &Counter{calls: map[string]int{}} }

// NewRecording returns an empty counter that also records the accesses of
// the DynamoDB calls it counts (Accesses).
func NewRecording() *Counter {
	return &Counter{calls: map[string]int{}, records: true, accesses: map[Access]int{}}
}

// addAccesses records the accesses of one call.
func (c *Counter) addAccesses(as []Access) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range as {
		c.accesses[a]++
	}
}

// Accesses returns a copy of the accesses recorded (how many calls needed
// each); empty unless c was made with NewRecording.
func (c *Counter) Accesses() map[Access]int {
	out := map[Access]int{}
	if c == nil {
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(out, c.accesses)
	return out
}

type ctxKey struct{}

// With returns ctx carrying c: the calls made with ctx (and contexts
// derived from it) are added to c.
func With(ctx context.Context, c *Counter) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// From returns the counter of ctx, or nil.
func From(ctx context.Context) *Counter {
	c, _ := ctx.Value(ctxKey{}).(*Counter)
	return c
}

// Add counts one call of operation of service.
func (c *Counter) Add(service, operation string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.calls[service+"."+operation]++
	c.mu.Unlock()
}

// Service returns how many calls of service were counted.
func (c *Counter) Service(service string) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.calls {
		if s, _, _ := strings.Cut(k, "."); s == service {
			n += v
		}
	}
	return n
}

// Operation returns how many calls of operation of service were counted.
func (c *Counter) Operation(service, operation string) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[service+"."+operation]
}

// Calls returns a copy of the counts by "<service>.<operation>".
func (c *Counter) Calls() map[string]int {
	out := map[string]int{}
	if c == nil {
		return out
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(out, c.calls)
	return out
}

// Reset forgets every count (and every access recorded).
func (c *Counter) Reset() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.calls = map[string]int{}
	if c.records {
		c.accesses = map[Access]int{}
	}
	c.mu.Unlock()
}

// String lists the counts, sorted: "DynamoDB.GetItem=2 DynamoDB.Query=1".
func (c *Counter) String() string {
	calls := c.Calls()
	keys := make([]string, 0, len(calls))
	for k := range calls {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, calls[k])
	}
	return strings.Join(parts, " ")
}

// Middleware ids of the counting middleware in a client's stack.
const (
	startID = "CallCountStart"
	sendID  = "CallCount"
)

type callKey struct{}

// call is one SDK call being made; sent records that it reached the wire.
// input is the operation's input when the counter records accesses.
type call struct {
	sent  bool
	input any
}

// Middleware adds the counting middleware to an SDK operation's stack: add
// it to a client's (or an aws.Config's) APIOptions. A call counts once,
// when its first attempt is about to be sent (the end of the Deserialize
// step): the SDK's own retries of it do not count again, and a presigned
// URL, which sends nothing (presigning clears that step), never counts.
// A recording counter (NewRecording) also gets the accesses of a DynamoDB
// call, read from its input, when it counts it. With no Counter in the
// context both parts only look the context up.
func Middleware(stack *middleware.Stack) error {
	if _, ok := stack.Initialize.Get(startID); ok {
		return nil
	}
	err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc(startID, func(
		ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler,
	) (middleware.InitializeOutput, middleware.Metadata, error) {
		if c := From(ctx); c != nil {
			cl := &call{}
			if c.records {
				cl.input = in.Parameters
			}
			ctx = context.WithValue(ctx, callKey{}, cl)
		}
		return next.HandleInitialize(ctx, in)
	}), middleware.Before)
	if err != nil {
		return err
	}
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc(sendID, func(
		ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler,
	) (middleware.DeserializeOutput, middleware.Metadata, error) {
		if cl, ok := ctx.Value(callKey{}).(*call); ok && !cl.sent {
			cl.sent = true
			service, operation := middleware.GetServiceID(ctx), middleware.GetOperationName(ctx)
			From(ctx).Add(service, operation)
			if cl.input != nil && service == DynamoDB {
				From(ctx).addAccesses(Accesses(operation, cl.input))
			}
		}
		return next.HandleDeserialize(ctx, in)
	}), middleware.After)
}
