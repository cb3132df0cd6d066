// Package tenants wires the tenants function, which operators invoke
// directly to create tenants and rotate their service keys: rotating a key
// ends the admin sessions made from the old one.
package tenants

import (
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Function is what the tenants function runs.
type Function struct {
	Tenants *tenant.Service
}

// New builds the tenants function on b.
func New(b *wire.Base) *Function {
	return &Function{Tenants: b.TenantService()}
}
