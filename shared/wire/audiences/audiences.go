// Package audiences wires the audiences function: segments (audiences) and
// their members, and the rules, on the loyalty domains (a membership
// change runs the rules and the CLUB and LEVEL perks' reactions).
package audiences

import (
	"slices"

	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Function is what the audiences function runs.
type Function struct {
	*rewards.Rewards
}

// New builds the audiences function on b.
func New(b *wire.Base) *Function {
	return &Function{Rewards: rewards.New(b, b.Actions())}
}

// Routes are the function's routes: segments and rules.
func (f *Function) Routes() []web.Route {
	return slices.Concat(f.Audiences.Routes(), f.Rules.Routes())
}
