// Package pos wires the pos function: the pay-at-POS loop (orders,
// transactions and credits) on the loyalty domains and check-ins, and the
// rules an order triggers, run before the request answers.
package pos

import (
	"github.com/loyalty-platform/platform/shared/domain/pos"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/orders"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Function is what the pos function runs.
type Function struct {
	*rewards.Rewards
	POS *pos.Service
}

// New builds the pos function on b.
func New(b *wire.Base) *Function {
	actions := b.Actions()
	r := rewards.New(b, actions)
	checkins := places.Checkins(b, places.Locations(b), actions)
	return &Function{Rewards: r, POS: orders.New(b, r, checkins, actions)}
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.POS.Routes() }
