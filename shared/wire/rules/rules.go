// Package rules wires the rules function, which consumes the Actions
// table's stream: every new action runs the rules whose trigger is its
// type, at most once per (rule, action), applying what the request that
// recorded it did not. A grant on an order is recorded on the order.
package rules

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/orders"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Function is what the rules function runs.
type Function struct {
	*rewards.Rewards
}

// New builds the rules function on b.
func New(b *wire.Base) *Function {
	actions := b.Actions()
	r := rewards.New(b, actions)
	// The pay-at-POS domain records on an order the points the rules
	// grant on it (orders.New registers that reaction on r.Rules).
	orders.New(b, r, places.Checkins(b, places.Locations(b), actions), actions)
	return &Function{Rewards: r}
}

// Handle is the function's handler: a batch of the stream's records.
func (f *Function) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return f.Rules.HandleStream(ctx, ev)
}
