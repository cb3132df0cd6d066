package pos

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Users reads users (profiles, with their app balances).
type Users interface {
	Get(ctx context.Context, tenantID, userID string) (profile.Profile, error)
	// Kept returns a deleted user's profile too (refunds of their
	// payments).
	Kept(ctx context.Context, tenantID, userID string) (profile.Profile, error)
}

// Places reads locations.
type Places interface {
	Place(ctx context.Context, tenantID, locationID string) (award.Place, error)
}

// Tenants names tenants (for actions) and tells their currency (the
// tenant item the request's authentication read, from the tenant cache).
type Tenants interface {
	Title(ctx context.Context, tenantID string) (string, error)
	Currency(ctx context.Context, tenantID string) (money.Currency, error)
}

// Checkins checks users out inside another change's transaction.
type Checkins interface {
	AddCheckout(ctx context.Context, tx *ddb.Tx, tenantID string, prof profile.Profile, reason string, now time.Time) (checkin.CheckoutWrite, bool, error)
	Notify(ctx context.Context, w checkin.CheckoutWrite, reason string)
}

// Service runs the POS domain's operations.
type Service struct {
	DB    ddb.API
	Table string
	// UsersTable holds the users' app balances (profile.BalanceChange).
	UsersTable string
	Clock      clock.Clock
	// Cursor signs the paging keys of the balance's ledger.
	Cursor   ddb.Cursor
	Users    Users
	Places   Places
	Tenants  Tenants
	Awards   *award.Service
	Checkins Checkins
	// Actions records the POS actions; the reactions registered on it
	// (the rules) run on them before a request answers.
	Actions *action.Recorder
	Log     *slog.Logger
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// title returns the caller's tenant's title.
func (s *Service) title(ctx context.Context, caller actor.Actor) (string, error) {
	if caller.TenantTitle != "" || s.Tenants == nil {
		return caller.TenantTitle, nil
	}
	return s.Tenants.Title(ctx, caller.TenantID)
}

// currency returns the caller's tenant's currency (GBP without a
// setting, or without Tenants).
func (s *Service) currency(ctx context.Context, caller actor.Actor) (money.Currency, error) {
	if s.Tenants == nil {
		return money.GBP, nil
	}
	c, err := s.Tenants.Currency(ctx, caller.TenantID)
	if err != nil {
		return money.Currency{}, fmt.Errorf("currency of %s: %w", caller.TenantID, err)
	}
	return c, nil
}

// place reads a location; an unknown one is 422 naming locationId.
func (s *Service) place(ctx context.Context, tenantID, id string) (award.Place, error) {
	p, err := s.Places.Place(ctx, tenantID, id)
	if apierr.CodeOf(err) == apierr.NotFound {
		return award.Place{}, ErrUnknownLocation
	}
	return p, err
}

// balanceAfter adds to the metadata of an action that changes a user's
// app balance the balance the change left, as its ledger entry e shows it:
// balanceAfter, a decimal string with the currency's digits ("6.50"), and
// currency.
func balanceAfter(meta map[string]any, e ledger.MoneyEntry) {
	v := e.View()
	meta["balanceAfter"], meta["currency"] = v.BalanceAfter, v.Currency
}

// act returns an action of the POS domain about a user, at place when
// there is one.
func (s *Service) act(tenantID, title string, prof profile.Profile, place *award.Place, typ string, now time.Time, meta map[string]any) action.Action {
	a := action.Action{
		Type: typ, TenantID: tenantID, Metadata: meta,
		Context: action.Context{
			Tenant: action.TenantRef{ID: tenantID, Title: title},
			User:   &action.UserRef{ID: prof.ID, Name: prof.FullName, PrimaryPlatform: prof.PrimaryPlatform},
		},
	}
	zone := time.UTC
	if place != nil {
		ref := place.Ref
		a.Context.Location = &ref
		zone = action.Zone(place.Timezone)
	}
	a.When = action.WhenAt(now, zone)
	a.ID = action.NewID()
	return a
}

// react runs the rules on actions just recorded, in order, and returns
// how many actions their effects recorded. A failure is logged: the rules
// function, reading the Actions table's stream, applies what is left.
func (s *Service) react(ctx context.Context, actions ...action.Action) int {
	return s.Actions.React(ctx, s.log(), "a POS change", actions...)
}
