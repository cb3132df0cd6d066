package checkin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Profiles finds users (the users domain's profiles).
type Profiles interface {
	Get(ctx context.Context, tenantID, userID string) (profile.Profile, error)
}

// Tenants finds tenants (tenant.Store).
type Tenants interface {
	Get(ctx context.Context, id string) (tenant.Tenant, error)
}

// maxAttempts bounds how often a write that lost a race with another
// request on the same user re-reads and retries.
const maxAttempts = 5

// Service runs the check-in domain's operations.
type Service struct {
	DB    ddb.API
	Table string
	// UsersTable is the users domain's table: a check-in is written only
	// while its user's profile exists and is not deleted.
	UsersTable string
	Users      Profiles
	Places     Places
	Tenants    Tenants
	Actions    *action.Recorder
	POS        *POSNotifier
	Clock      clock.Clock
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Create checks user userID in at a location (POST /users/{userId}/checkins)
// following the API's lifecycle: no profile photo is PROFILE_PHOTO_REQUIRED
// and nothing is written; a live check-in at the same location is
// ALREADY_CHECKED_IN; a live check-in elsewhere is replaced (deleted) by the
// new one in the same transaction, which also records CHECKIN_CREATED (and
// CHECKOUT for the replaced one). The tenant's POS is then notified.
func (s *Service) Create(ctx context.Context, caller actor.Actor, userID string, in CreateInput) (Checkin, error) {
	if err := caller.RequireUser(userID); err != nil {
		return Checkin{}, err
	}
	if err := in.Validate(); err != nil {
		return Checkin{}, err
	}
	prof, err := s.Users.Get(ctx, caller.TenantID, userID)
	if err != nil {
		return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
	}
	if !prof.HasProfilePhoto {
		return Checkin{}, ErrPhotoRequired
	}
	place, err := s.place(ctx, caller.TenantID, in.LocationID)
	if err != nil {
		return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
	}
	if place.State != LocationActive {
		return Checkin{}, ErrLocationInactive
	}
	if !place.Checkins {
		return Checkin{}, ErrCheckinsNotOffered
	}
	t, err := s.Tenants.Get(ctx, caller.TenantID)
	if err != nil {
		return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
	}
	st := s.st()
	// The first write assumes the slot is empty, as it mostly is, and reads
	// nothing: when it is not, the failed condition returns what the slot
	// holds, and the next attempt decides on that (a live check-in here is
	// refused, one elsewhere or an expired one is replaced). So a check-in
	// makes one write, and a repeat is refused by that one failed write.
	var (
		prev Checkin
		held bool
	)
	for attempt := 0; attempt < maxAttempts; attempt++ {
		now := s.Clock.Now()
		replaced := held && prev.live(now)
		if replaced && prev.LocationID == in.LocationID {
			return Checkin{}, ErrAlreadyCheckedIn
		}
		c := Checkin{
			ID: newID(), TenantID: t.ID, UserID: userID, LocationID: place.ID, LocationTitle: place.Title,
			UserFullName: prof.FullName, Type: in.Type, Trigger: in.Trigger,
			Created: clock.Stamp(now), Updated: clock.Stamp(now), ExpiresAt: now.Add(Lifetime).Unix(),
		}
		prevID := ""
		if held {
			prevID = prev.ID
		}
		put, err := st.putItem(c, prevID)
		if err != nil {
			return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
		}
		meta := map[string]any{"checkinId": c.ID, "type": c.Type, "trigger": c.Trigger}
		opts := NotifyOptions{ExpiresAt: clock.Stamp(time.Unix(c.ExpiresAt, 0))}
		var prevPlace Place
		if replaced {
			meta["replacedCheckinId"] = prev.ID
			opts.ReplacedCheckinID = prev.ID
			if prevPlace, err = s.placeOf(ctx, prev); err != nil {
				return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
			}
		}
		tx := &ddb.Tx{}
		tx.Add("checkin", put) // first: conditionFailed and heldBy read item 0
		if _, err := s.Actions.Record(tx, s.action(action.CheckinCreated, t, prof, place, now, meta)); err != nil {
			return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
		}
		if replaced {
			if _, err := s.Actions.Record(tx, s.action(action.Checkout, t, prof, prevPlace, now, checkoutMeta(prev, now, ReasonCheckedInElsewhere))); err != nil {
				return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
			}
		}
		liveAt := tx.Add("profile", profile.LiveCheck(s.UsersTable, t.ID, userID))
		err = tx.Run(ctx, s.DB)
		if ddb.Failed(err, liveAt) {
			return Checkin{}, fmt.Errorf("check in %s: %w", userID, profile.ErrNotFound)
		}
		if conditionFailed(err) {
			// The slot holds something else than this attempt assumed.
			if prev, held, err = heldBy(err); err != nil {
				return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
			}
			continue
		}
		if err != nil {
			return Checkin{}, fmt.Errorf("check in %s: %w", userID, err)
		}
		ns := []Notification{}
		if replaced {
			ns = append(ns, Notification{Event: EventCheckout, Data: prev, Options: NotifyOptions{Reason: ReasonCheckedInElsewhere}})
		}
		ns = append(ns, Notification{Event: EventCheckin, Data: c, Options: opts})
		s.POS.Send(ctx, t.Settings.POSEndpoint, t.Settings.POSSecret, ns...)
		return c, nil
	}
	return Checkin{}, fmt.Errorf("check in %s: %w", userID, ErrConcurrentCheckin)
}

// Checkout ends user userID's live check-in (DELETE /users/{userId}/checkins),
// records CHECKOUT in the same transaction and notifies the tenant's POS.
// A user who is not checked in is NOT_FOUND.
func (s *Service) Checkout(ctx context.Context, caller actor.Actor, userID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	prof, err := s.Users.Get(ctx, caller.TenantID, userID)
	if err != nil {
		return fmt.Errorf("check out %s: %w", userID, err)
	}
	t, err := s.Tenants.Get(ctx, caller.TenantID)
	if err != nil {
		return fmt.Errorf("check out %s: %w", userID, err)
	}
	st := s.st()
	for attempt := 0; attempt < maxAttempts; attempt++ {
		now := s.Clock.Now()
		prev, held, err := st.slot(ctx, t.ID, userID)
		if err != nil {
			return err
		}
		if !held || !prev.live(now) {
			return fmt.Errorf("check out %s: %w", userID, ErrNotCheckedIn)
		}
		place, err := s.placeOf(ctx, prev)
		if err != nil {
			return fmt.Errorf("check out %s: %w", userID, err)
		}
		tx := &ddb.Tx{}
		tx.Add("checkin", st.deleteItem(prev)) // first: conditionFailed reads item 0
		if _, err := s.Actions.Record(tx, s.action(action.Checkout, t, prof, place, now, checkoutMeta(prev, now, ReasonRequested))); err != nil {
			return fmt.Errorf("check out %s: %w", userID, err)
		}
		err = tx.Run(ctx, s.DB)
		if conditionFailed(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("check out %s: %w", userID, err)
		}
		s.POS.Send(ctx, t.Settings.POSEndpoint, t.Settings.POSSecret,
			Notification{Event: EventCheckout, Data: prev, Options: NotifyOptions{Reason: ReasonRequested}})
		return nil
	}
	return fmt.Errorf("check out %s: %w", userID, ErrConcurrentCheckin)
}

// Remove deletes a user's check-in, live or expired, without an action or a
// POS notification: for redacting a deleted user, whose name must not stay
// in a location's list. Removing nothing is not an error.
func (s *Service) Remove(ctx context.Context, tenantID, userID string) error {
	return s.st().remove(ctx, tenantID, userID)
}

// Current returns the user's live check-in; none is ErrNotCheckedIn. It is
// the include=checkin extra of GET /users/{userId}.
func (s *Service) Current(ctx context.Context, tenantID, userID string) (Checkin, error) {
	c, held, err := s.st().slot(ctx, tenantID, userID)
	if err != nil {
		return Checkin{}, err
	}
	if !held || !c.live(s.Clock.Now()) {
		return Checkin{}, fmt.Errorf("current check-in of %s: %w", userID, ErrNotCheckedIn)
	}
	return c, nil
}

// CheckedInAt returns the location where the user is checked in now; ok
// is false when they are checked in nowhere (or their check-in expired).
// One consistent read of the user's check-in (what awards need to know
// whether a user redeeming at a location is there).
func (s *Service) CheckedInAt(ctx context.Context, tenantID, userID string) (locationID string, ok bool, err error) {
	c, held, err := s.st().slot(ctx, tenantID, userID)
	if err != nil || !held || !c.live(s.Clock.Now()) {
		return "", false, err
	}
	return c.LocationID, true, nil
}

// ListByUser returns page q of a user's check-ins (GET
// /users/{userId}/checkins): at most one, since a user is checked in at one
// location at a time.
func (s *Service) ListByUser(ctx context.Context, caller actor.Actor, userID string, q PageQuery) (List, error) {
	if err := caller.RequireUser(userID); err != nil {
		return List{}, err
	}
	if _, err := s.Users.Get(ctx, caller.TenantID, userID); err != nil {
		return List{}, fmt.Errorf("list check-ins of %s: %w", userID, err)
	}
	all := []Checkin{}
	c, err := s.Current(ctx, caller.TenantID, userID)
	switch {
	case err == nil:
		all = append(all, c)
	case !errors.Is(err, ErrNotCheckedIn):
		return List{}, fmt.Errorf("list check-ins of %s: %w", userID, err)
	}
	page := []Checkin{}
	if q.offset() < len(all) {
		page = all[q.offset():min(len(all), q.offset()+q.PerPage)]
	}
	return List{Checkins: page, Summary: summary(len(all), len(page), q)}, nil
}

// ListByLocation returns page q of the live check-ins at a location, newest
// first (GET /locations/{locationId}/checkins, admin only).
func (s *Service) ListByLocation(ctx context.Context, caller actor.Actor, locationID string, q PageQuery) (List, error) {
	if err := caller.RequireAdmin(); err != nil {
		return List{}, err
	}
	if err := checkID("locationId", locationID); err != nil {
		return List{}, err
	}
	if _, err := s.place(ctx, caller.TenantID, locationID); err != nil {
		return List{}, fmt.Errorf("list check-ins at %s: %w", locationID, err)
	}
	items, total, err := s.st().atLocation(ctx, caller.TenantID, locationID, q, s.Clock.Now())
	if err != nil {
		return List{}, err
	}
	return List{Checkins: items, Summary: summary(total, len(items), q)}, nil
}

// place finds a location; an unknown one is ErrLocationNotFound.
func (s *Service) place(ctx context.Context, tenantID, id string) (Place, error) {
	if s.Places == nil {
		return Place{}, errors.New("no location source is configured")
	}
	p, err := s.Places.Place(ctx, tenantID, id)
	if apierr.CodeOf(err) == apierr.NotFound {
		return Place{}, ErrLocationNotFound
	}
	if err != nil {
		return Place{}, fmt.Errorf("find location %s: %w", id, err)
	}
	return p, nil
}

// placeOf returns the location of an existing check-in for its action; a
// location deleted since is described by what the check-in remembers.
func (s *Service) placeOf(ctx context.Context, c Checkin) (Place, error) {
	p, err := s.place(ctx, c.TenantID, c.LocationID)
	if errors.Is(err, ErrLocationNotFound) {
		return Place{ID: c.LocationID, Title: c.LocationTitle}, nil
	}
	return p, err
}

// action builds an action about user prof at location p.
func (s *Service) action(typ string, t tenant.Tenant, prof profile.Profile, p Place, at time.Time, meta map[string]any) action.Action {
	return action.Action{
		Type:     typ,
		TenantID: t.ID,
		When:     action.WhenAt(at, action.Zone(p.Timezone)),
		Metadata: meta,
		Context: action.Context{
			Tenant:   action.TenantRef{ID: t.ID, Title: t.Title},
			User:     &action.UserRef{ID: prof.ID, Name: prof.FullName, PrimaryPlatform: prof.PrimaryPlatform},
			Location: &action.LocationRef{ID: p.ID, Title: p.Title, Geo: p.Geo, Regions: p.Regions, Tags: p.Tags},
		},
	}
}

// checkoutMeta is the metadata of a CHECKOUT action ending c at now.
func checkoutMeta(c Checkin, now time.Time, reason string) map[string]any {
	dur := int64(0)
	if t, err := time.Parse(clock.Format, c.Created); err == nil {
		dur = int64(now.Sub(t) / time.Second)
	}
	return map[string]any{
		"checkinId": c.ID, "type": c.Type, "trigger": c.Trigger,
		"checkedInAt": c.Created, "durationSeconds": dur, "reason": reason,
	}
}

// ReasonPurchase is the reason of the checkout a completed order makes
// (in the API, a purchase checks the user out).
const ReasonPurchase = "PURCHASE"

// CheckoutWrite is what AddCheckout added to a transaction.
type CheckoutWrite struct {
	// At is the index of the check-in's delete (conditional on it being
	// the one read): a failure means it changed, read again.
	At int
	// Checkin is the check-in that ends; Action its CHECKOUT.
	Checkin Checkin
	Action  action.Action
	tenant  tenant.Tenant
}

// AddCheckout adds to tx the checkout of a user's live check-in, for a
// change of another domain that checks the user out (a completed order):
// the check-in's delete and its CHECKOUT action (reason). held is false,
// and nothing is added, when the user is not checked in. Notify sends the
// POS notification once tx committed.
func (s *Service) AddCheckout(ctx context.Context, tx *ddb.Tx, tenantID string, prof profile.Profile, reason string, now time.Time) (CheckoutWrite, bool, error) {
	st := s.st()
	prev, held, err := st.slot(ctx, tenantID, prof.ID)
	if err != nil || !held || !prev.live(now) {
		return CheckoutWrite{}, false, err
	}
	t, err := s.Tenants.Get(ctx, tenantID)
	if err != nil {
		return CheckoutWrite{}, false, fmt.Errorf("check out %s: %w", prof.ID, err)
	}
	place, err := s.placeOf(ctx, prev)
	if err != nil {
		return CheckoutWrite{}, false, fmt.Errorf("check out %s: %w", prof.ID, err)
	}
	w := CheckoutWrite{At: tx.Add("checkin", st.deleteItem(prev)), Checkin: prev, tenant: t}
	if w.Action, err = s.Actions.Record(tx, s.action(action.Checkout, t, prof, place, now, checkoutMeta(prev, now, reason))); err != nil {
		return CheckoutWrite{}, false, fmt.Errorf("check out %s: %w", prof.ID, err)
	}
	return w, true, nil
}

// Notify sends the POS notification of a checkout AddCheckout added, once
// its transaction committed (fire and forget).
func (s *Service) Notify(ctx context.Context, w CheckoutWrite, reason string) {
	s.POS.Send(ctx, w.tenant.Settings.POSEndpoint, w.tenant.Settings.POSSecret,
		Notification{Event: EventCheckout, Data: w.Checkin, Options: NotifyOptions{Reason: reason}})
}
