// Package hook is the platform's one mechanism for reactions of one domain
// to a change in another that must be atomic with it: the domain that makes
// the change declares a Hooks value for an event type of its own, and the
// composition root (a function's wiring) adds the reactions of the other
// domains. Each reaction adds its writes to the change's transaction
// (ddb.Tx), built from its own keys, so neither domain imports the other
// and the change and every reaction commit together or not at all.
//
// A few reactions cannot share the change's transaction but must be done
// before the request answers (After: removing what other domains keep
// about a deleted user). Reactions that may follow later go through the
// actions log instead. Each domain declares the events it emits, and the
// hooks it runs for them, in its events.go.
package hook

import (
	"context"

	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Func reacts to event e by adding writes to tx. It must not write
// anything itself: an error aborts the change.
type Func[E any] func(ctx context.Context, tx *ddb.Tx, e E) error

// Hooks are the reactions to one kind of event, run in the order added.
type Hooks[E any] struct {
	fns []Func[E]
}

// Add registers reactions.
func (h *Hooks[E]) Add(fns ...Func[E]) { h.fns = append(h.fns, fns...) }

// Run runs every reaction to e, stopping at the first error.
func (h *Hooks[E]) Run(ctx context.Context, tx *ddb.Tx, e E) error {
	if h == nil {
		return nil
	}
	for _, f := range h.fns {
		if err := f(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

// AfterFunc reacts to event e once the change that emits it committed,
// before the request that made the change answers. An error fails the
// request, whose retry makes the change (a no-op by then) and runs the
// reactions again, so each must be safe to repeat.
type AfterFunc[E any] func(ctx context.Context, e E) error

// After are the reactions that follow one kind of event within the
// request, run in the order added. They are for what must be done when
// the request answers but cannot share the change's transaction (removing
// what other domains keep about a deleted user, ending the sessions of a
// rotated service key); what may follow later goes through the actions
// log instead.
type After[E any] struct {
	fns []AfterFunc[E]
}

// Add registers reactions.
func (h *After[E]) Add(fns ...AfterFunc[E]) { h.fns = append(h.fns, fns...) }

// Run runs every reaction to e, stopping at the first error.
func (h *After[E]) Run(ctx context.Context, e E) error {
	if h == nil {
		return nil
	}
	for _, f := range h.fns {
		if err := f(ctx, e); err != nil {
			return err
		}
	}
	return nil
}
