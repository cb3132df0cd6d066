// Package hook is the platform's one mechanism for reactions of one domain
// to a change in another that must be atomic with it: the domain that makes
// the change declares a Hooks value for an event type of its own, and the
// composition root (a function's wiring) adds the reactions of the other
// domains. Each reaction adds its writes to the change's transaction
// (ddb.Tx), built from its own keys, so neither domain imports the other
// and the change and every reaction commit together or not at all.
// Reactions that may follow later go through the actions log instead.
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
