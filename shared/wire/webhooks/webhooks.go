// Package webhooks wires the webhooks function: the tenant's webhook
// endpoints (/webhooks/endpoints...), their deliveries, test events,
// secret rotation and replays.
package webhooks

import (
	"github.com/loyalty-platform/platform/shared/domain/webhook"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/hooks"
)

// Function is what the webhooks function runs.
type Function struct {
	Webhooks *webhook.Service
}

// New builds the webhooks function on b.
func New(b *wire.Base) *Function { return &Function{Webhooks: hooks.Service(b)} }

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Webhooks.Routes() }
