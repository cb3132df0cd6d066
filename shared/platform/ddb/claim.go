package ddb

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Claim fences the transactions of one request that holds an
// Idempotency-Key (shared/platform/idempotency): its Item, an Update of the key's
// record conditional on the record still being held by this request's
// claim (its random token), rides in every transaction the request
// commits through Transact (and so Tx.Run), appended last. So:
//
//   - a transaction of a request whose key was taken over (its request ran
//     past the in-flight timeout, or DynamoDB applied it late) fails as a
//     whole, and Transact answers ErrClaimLost: a key's effect is never
//     applied twice;
//   - a committed transaction marks the record (the Update sets a flag the
//     idempotency package reads), so that a retry of a request whose
//     effect was made is never run again, even when its response was
//     never stored.
//
// The claim travels in the request's context (WithClaim), as other
// request-scoped infrastructure does (the request id, the call counter):
// the context is the only path from the HTTP wrapper, which claims the key
// before the handler runs, to the transactions the domains build, and it
// stays in infrastructure packages (idempotency sets it, ddb reads it);
// no domain sees it or passes it on. ddb knows nothing of the record's
// layout: the idempotency package builds the Item.
//
// A request that commits no transaction (a read, a refused request) is
// unaffected. A Claim may be used by concurrent transactions of its
// request.
type Claim struct {
	item      types.TransactWriteItem
	committed atomic.Bool
	lost      atomic.Bool
}

// NewClaim returns the claim whose transaction item is item (an Update or
// ConditionCheck of the key's record, with its condition).
func NewClaim(item types.TransactWriteItem) *Claim { return &Claim{item: item} }

// Committed reports whether a transaction carrying the claim committed.
func (c *Claim) Committed() bool { return c != nil && c.committed.Load() }

// Lost reports whether a transaction carrying the claim failed on the
// claim's condition: the key is no longer this request's.
func (c *Claim) Lost() bool { return c != nil && c.lost.Load() }

type claimKey struct{}

// WithClaim returns ctx carrying claim c: every transaction run with it
// through Transact carries c's item.
func WithClaim(ctx context.Context, c *Claim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

// WithoutClaim returns ctx carrying no claim: for work whose own markers
// make it safe to run again under the same key (each member of a segment
// grant is granted once per key), so that a failure part way frees the key
// and a retry finishes the work instead of being refused as committed.
func WithoutClaim(ctx context.Context) context.Context {
	return context.WithValue(ctx, claimKey{}, (*Claim)(nil))
}

// ClaimOf returns the claim ctx carries, or nil.
func ClaimOf(ctx context.Context) *Claim {
	c, _ := ctx.Value(claimKey{}).(*Claim)
	return c
}

// ErrClaimLost is what Transact answers when the transaction failed on
// its claim's condition: the request's Idempotency-Key was taken over by
// a retry (or released), so this request must not apply anything. It is
// an apierr (409 IDEMPOTENCY_IN_PROGRESS, Retry-After 1 s): the retry that
// holds the key is being served or answered already, and a repeat of the
// request gets its answer.
var ErrClaimLost = &apierr.Error{
	Code:       apierr.IdempotencyInProgress,
	Message:    "a retry with this Idempotency-Key took it over while this request was served: nothing was changed by this request; retry shortly for the answer",
	RetryAfter: time.Second,
}

// with returns items with the claim's item appended (a new slice;
// items unchanged when c is nil) and the claim item's index.
func (c *Claim) with(items []types.TransactWriteItem) ([]types.TransactWriteItem, int) {
	if c == nil {
		return items, -1
	}
	out := make([]types.TransactWriteItem, 0, len(items)+1)
	out = append(out, items...)
	return append(out, c.item), len(items)
}

// outcome records what the transaction's error says of the claim (item
// at index at) and returns the error to answer.
func (c *Claim) outcome(err error, at int) error {
	if c == nil {
		return err
	}
	if err == nil {
		c.committed.Store(true)
		return nil
	}
	if Failed(err, at) {
		c.lost.Store(true)
		return ErrClaimLost
	}
	return err
}

// claimItems is the number of items the claim ctx carries adds to a
// transaction (0 or 1).
func claimItems(ctx context.Context) int {
	if ClaimOf(ctx) != nil {
		return 1
	}
	return 0
}
