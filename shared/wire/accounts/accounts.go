// Package accounts wires the accounts function: sign-up, activation, login
// and logout, password reset, guests, sessions, SSO and secondary
// credentials (shared/domain/account), with the codes it sends by SMS
// (SNS) and e-mail (SES), the tenants' hourly message caps and the SSO
// verifier.
package accounts

import (
	"github.com/loyalty-platform/platform/shared/domain/account"
	"github.com/loyalty-platform/platform/shared/platform/allowance"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/identity"
)

// Function is what the accounts function runs.
type Function struct {
	Accounts *account.Service
}

// New builds the accounts function on b: the users domain's core, the
// notifier the configuration names (or b's), the per-address allowance of
// anonymous calls (ANONYMOUS_CALLS_PER_MINUTE) and the tenants' caps
// (TENANT_SMS_PER_HOUR, TENANT_EMAILS_PER_HOUR), both counted in the
// sessions table, and the SSO verifier.
func New(b *wire.Base) (*Function, error) {
	n, _, err := identity.Messaging(b)
	if err != nil {
		return nil, err
	}
	counter := &allowance.Counter{DB: b.DB, Table: b.Config.Tables.Sessions, Clock: b.Clock}
	a := account.New(identity.Users(b, nil), account.Config{
		Tenants: b.Tenants(), Actions: b.Actions(), Notifier: n,
		Caps: notify.CapsFromEnv(counter), SSO: sso.NewVerifier(sso.FromEnv(), b.Clock),
		Allowance: counter, AnonymousPerMinute: account.AnonymousPerMinuteFromEnv(),
		Cursor: b.Cursor, PasswordCost: b.PasswordCost,
	})
	return &Function{Accounts: a}, nil
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Accounts.Routes() }
