// Package accounts wires the accounts function: sign-up, activation, login
// and logout, password reset, guests, sessions, SSO and secondary
// credentials (user.AccountRoutes), with the codes it sends by SMS (SNS)
// and e-mail (SES), the tenants' hourly message caps and the SSO verifier.
package accounts

import (
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/identity"
)

// Function is what the accounts function runs.
type Function struct {
	Users *user.Service
}

// New builds the accounts function on b: the users domain's core, the
// notifier and push registrar the configuration names (or b's), the caps
// (TENANT_SMS_PER_HOUR, TENANT_EMAILS_PER_HOUR) and the SSO verifier.
func New(b *wire.Base) (*Function, error) {
	n, _, err := identity.Messaging(b)
	if err != nil {
		return nil, err
	}
	u := identity.Users(b)
	u.Notifier = n
	u.Caps = notify.CapsFromEnv(u.Allowance)
	u.SSO = sso.NewVerifier(sso.FromEnv(), b.Clock)
	return &Function{Users: u}, nil
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Users.AccountRoutes() }
