// Package tenants wires the tenants function, which operators invoke
// directly to create tenants and rotate their service keys: rotating a key
// ends the admin sessions made from the old one.
package tenants

import (
	"context"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Function is what the tenants function runs.
type Function struct {
	Tenants *tenant.Service
}

// New builds the tenants function on b.
func New(b *wire.Base) *Function {
	t := &tenant.Service{Store: b.Tenants(), Clock: b.Clock}
	sessions := b.Auth()
	t.OnKeyRotated.Add(func(ctx context.Context, e tenant.KeyRotated) error {
		return sessions.EndServiceSessions(ctx, e.TenantID)
	})
	return &Function{Tenants: t}
}
