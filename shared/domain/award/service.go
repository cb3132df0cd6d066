package award

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Person is who a user is, as actions name them.
type Person struct {
	ID              string
	Name            string
	PrimaryPlatform string
}

// Place is a location as a redemption or grant needs it: for the action's
// context and for the time zone of a dateTimeRestriction.
type Place struct {
	Ref      action.LocationRef
	Timezone string
}

// Perks reads perks (the perk domain).
type Perks interface {
	Find(ctx context.Context, tenantID, id string) (perk.Perk, error)
	All(ctx context.Context, tenantID string) ([]perk.Perk, error)
}

// Users reads users and checks, inside a transaction, that a user is live
// (the users domain).
type Users interface {
	Person(ctx context.Context, tenantID, userID string) (Person, error)
	LiveCheck(tenantID, userID string) types.TransactWriteItem
}

// Memberships are the segment memberships that decide who holds a CLUB or
// LEVEL perk (the audiences domain).
type Memberships interface {
	// SegmentsOf returns the segments a user is a live member of.
	SegmentsOf(ctx context.Context, tenantID, userID string) ([]string, error)
	// MemberCheck is a ConditionCheck that the user is a live member of
	// the segment at now.
	MemberCheck(tenantID, segmentID, userID string, now time.Time) types.TransactWriteItem
	// Members returns up to max live members of a segment; more is an
	// error.
	Members(ctx context.Context, tenantID, segmentID string, max int) ([]string, error)
}

// Places reads locations (the locations domain).
type Places interface {
	Place(ctx context.Context, tenantID, locationID string) (Place, error)
}

// Tenants names tenants (for actions) and gives their time zone
// (settings.timezone, for a dateTimeRestriction). Both come from the same
// tenant item in the function's tenant cache: read at most once per
// request (none when warm), whichever asks first.
type Tenants interface {
	Title(ctx context.Context, tenantID string) (string, error)
	Zone(ctx context.Context, tenantID string) (*time.Location, error)
	// ExpiringDays is how many days before points expire the expiry run
	// records POINTS_EXPIRING (settings.pointsExpiringDays).
	ExpiringDays(ctx context.Context, tenantID string) (int, error)
}

// Checkins tells where a user is checked in right now (the check-in
// domain): ok is false when they are checked in nowhere (or the check-in
// expired).
type Checkins interface {
	CheckedInAt(ctx context.Context, tenantID, userID string) (locationID string, ok bool, err error)
}

// Overlay is an INTERNAL award enrichment as awards show it: its fields
// replace the perk's presentation fields.
type Overlay struct {
	ID                          string
	Title                       *string
	Token                       *string
	Template                    *string
	BasketQualification         *perk.BasketQualification
	DateTimeRestriction         *perk.DateTimeRestriction
	Points                      *perk.Points
	Discount                    *perk.Discount
	Visualisation               *perk.Visualisation
	VisualisationOnCurrentStamp map[string]any
	ExcludeDiscountIDs          []string
}

// Enrichments returns a tenant's INTERNAL enrichments by perk id (the
// enrichment domain).
type Enrichments interface {
	Internal(ctx context.Context, tenantID string) (map[string]Overlay, error)
}

// Service runs the award domain's operations.
type Service struct {
	DB          ddb.API
	Table       string
	Clock       clock.Clock
	Cursor      ddb.Cursor
	Perks       Perks
	Users       Users
	Memberships Memberships
	Places      Places
	Tenants     Tenants
	// Checkins decide whether a user redeeming at a location is there
	// (nil: never, so the tenant's zone applies).
	Checkins    Checkins
	Enrichments Enrichments
	// Actions records the actions of award changes; the reactions
	// registered on it (the rules) run on them before a request answers.
	Actions *action.Recorder
}

// react runs the rules on actions just recorded; a failure is logged (the
// stream consumer applies what is left).
func (s *Service) react(ctx context.Context, actions ...action.Action) {
	s.Actions.React(ctx, slog.Default(), "an award change", actions...)
}

func (s *Service) st() *store { return &store{db: s.DB, table: s.Table} }

// maxAttempts bounds the retries of one award write that lost a race (a
// concurrent change of the same award, or a transaction conflict).
const maxAttempts = 12

// backoff waits a little, growing with the attempt, with jitter so that
// racing writers spread out.
func backoff(ctx context.Context, attempt int) {
	d := time.Duration(5+rand.IntN(10*(attempt+1))) * time.Millisecond
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// parallel runs fns at once and returns the first error.
func parallel(fns ...func() error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(fns))
	for i, f := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Subject is what one write of an award needs to know: the tenant, the
// perk, the user and, when given, the location.
type Subject struct {
	TenantID    string
	TenantTitle string
	Perk        perk.Perk
	Person      Person
	Place       *Place
	// AtPlace says that the redemption is known to happen at Place: the
	// caller is an admin (the location's POS, a service key or an admin
	// session) or the user is checked in there now. Only then is a
	// dateTimeRestriction evaluated in Place's time zone; otherwise in
	// the tenant's (settings.timezone), so that naming a far location
	// cannot move the window.
	AtPlace bool
}

// load reads what a write needs (Load) for a caller.
func (s *Service) load(ctx context.Context, caller actor.Actor, perkID, userID, locationID string) (Subject, error) {
	return s.Load(ctx, caller.TenantID, caller.TenantTitle, perkID, userID, locationID)
}

// Load reads what a write needs, at once: the perk, the user, the location
// (when locationID is set) and the tenant's title (unless given). An
// unknown perk is ErrPerkNotFound, an unknown location ErrUnknownLocation,
// an unknown user the users domain's 404.
func (s *Service) Load(ctx context.Context, tenantID, tenantTitle, perkID, userID, locationID string) (Subject, error) {
	sub := Subject{TenantID: tenantID, TenantTitle: tenantTitle}
	fns := []func() error{
		func() (err error) {
			sub.Perk, err = s.Perks.Find(ctx, tenantID, perkID)
			if errors.Is(err, perk.ErrNotFound) {
				return ErrPerkNotFound
			}
			return err
		},
		func() (err error) {
			sub.Person, err = s.Users.Person(ctx, tenantID, userID)
			return err
		},
	}
	if locationID != "" {
		fns = append(fns, func() error {
			p, err := s.Places.Place(ctx, tenantID, locationID)
			if apierr.CodeOf(err) == apierr.NotFound {
				return ErrUnknownLocation
			}
			sub.Place = &p
			return err
		})
	}
	if sub.TenantTitle == "" && s.Tenants != nil {
		fns = append(fns, func() (err error) {
			sub.TenantTitle, err = s.Tenants.Title(ctx, tenantID)
			return err
		})
	}
	if err := parallel(fns...); err != nil {
		// A missing perk is reported before a missing user.
		for _, e := range []error{ErrPerkNotFound, ErrUnknownLocation} {
			if errors.Is(err, e) {
				return Subject{}, e
			}
		}
		if e, ok := apierr.As(err); ok {
			return Subject{}, e
		}
		return Subject{}, err
	}
	return sub, nil
}

// LoadFor is Load for a user the caller read already, a deleted user
// too (the refund of an order paid before the deletion: a user's history
// is kept): the perk and the tenant's title.
func (s *Service) LoadFor(ctx context.Context, tenantID, tenantTitle, perkID string, person Person) (Subject, error) {
	sub := Subject{TenantID: tenantID, TenantTitle: tenantTitle, Person: person}
	var err error
	if sub.Perk, err = s.Perks.Find(ctx, tenantID, perkID); err != nil {
		if errors.Is(err, perk.ErrNotFound) {
			return Subject{}, ErrPerkNotFound
		}
		return Subject{}, err
	}
	if sub.TenantTitle == "" && s.Tenants != nil {
		if sub.TenantTitle, err = s.Tenants.Title(ctx, tenantID); err != nil {
			return Subject{}, err
		}
	}
	return sub, nil
}

// act returns the action of a change of an award.
func (s *Service) act(sub Subject, typ string, now time.Time, meta map[string]any) action.Action {
	a := action.Action{
		Type: typ, TenantID: sub.TenantID, Metadata: meta,
		Context: action.Context{
			Tenant: action.TenantRef{ID: sub.TenantID, Title: sub.TenantTitle},
			User:   &action.UserRef{ID: sub.Person.ID, Name: sub.Person.Name, PrimaryPlatform: sub.Person.PrimaryPlatform},
		},
	}
	zone := time.UTC
	if sub.Place != nil {
		ref := sub.Place.Ref
		a.Context.Location = &ref
		zone = action.Zone(sub.Place.Timezone)
	}
	a.When = action.WhenAt(now, zone)
	a.ID = action.NewID()
	return a
}

// writeTx runs a transaction of an award write built by build, retrying
// when it lost a race: build is called again for each attempt. It returns
// the failing condition's cause through classify (nil means retry).
func (s *Service) writeTx(ctx context.Context, build func(now time.Time) (*ddb.Tx, error), classify func(err error) (retry bool, out error)) error {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			backoff(ctx, attempt)
		}
		tx, err := build(s.Clock.Now())
		if err != nil {
			return err
		}
		err = tx.Run(ctx, s.DB)
		if err == nil {
			return nil
		}
		if ddb.IsTransactionConflict(err) {
			continue
		}
		if ddb.CanceledReasons(err) == nil {
			return err
		}
		retry, out := classify(err)
		if !retry {
			return out
		}
	}
	return ErrConcurrent
}

// GrantInput is the body of the grant operations.
type GrantInput struct {
	UserID string `json:"userId"`
	// Points defaults to the perk's points.initial.
	Points     *int   `json:"points"`
	LocationID string `json:"locationId"`
	// EarnedAt is when the points were earned (RFC 3339; absent: now), at
	// most now and at least 10 years back: a merchant migrating from
	// another platform brings lots with their real dates, and a lot
	// already past its expiry is granted and expires at once.
	EarnedAt *string `json:"earnedAt"`
}

// maxEarnedAge is how far back a grant's earnedAt may go.
const maxEarnedAge = 10 * 366 * 24 * time.Hour

// ParseEarnedAt reads a grant's earnedAt (RFC 3339) at now; field names
// it in the error.
func ParseEarnedAt(field, v string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	switch {
	case err != nil:
		return time.Time{}, apierr.Invalid(field, "must be an RFC 3339 date-time such as 2026-03-14T12:00:00Z")
	case t.After(now):
		return time.Time{}, apierr.Invalid(field, "must not be in the future")
	case t.Before(now.Add(-maxEarnedAge)):
		return time.Time{}, apierr.Invalid(field, "must be at most 10 years back")
	}
	return t.UTC(), nil
}

// Validate checks a grant body.
func (in *GrantInput) Validate() error {
	if in.UserID == "" {
		return apierr.Invalid("userId", "is required")
	}
	if !web.ValidID(in.UserID) {
		return ErrUserNotFound
	}
	if in.Points != nil && (*in.Points < 0 || *in.Points > perk.MaxPoints) {
		return apierr.Invalid("points", "must be an integer from 0 to %d", perk.MaxPoints)
	}
	if in.LocationID != "" && !web.ValidID(in.LocationID) {
		return ErrUnknownLocation
	}
	return nil
}

// GrantOptions say where a grant comes from and whether it records its
// action.
type GrantOptions struct {
	Source      string
	OperationID string
	// Silent records no AWARD_GRANTED action (imports with
	// suppressEvents).
	Silent bool
	// Meta is added to the action's metadata (a rule's ids, an order).
	Meta map[string]any
	// EarnedAt is when the points were earned (zero: now).
	EarnedAt time.Time
}

// Grant grants points of a perk to a user (POST /pointperks/{perkId}/awards
// and POST /perks/{perkId}/awards, admin): a user who holds an award of the
// perk gets its points increased, never a second award; a new award holds
// the points granted (a virtual award starts from points.initial, which it
// showed). The result is clamped to the perk's points.max. The
// award and its AWARD_GRANTED action are one transaction, conditional on
// the award being unchanged since it was read (a lost race re-reads), on
// the user being live and, for a CLUB or LEVEL perk, on the user being a
// member of its segment.
func (s *Service) Grant(ctx context.Context, caller actor.Actor, perkID string, in GrantInput, opt GrantOptions) (Award, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Award{}, err
	}
	if !web.ValidID(perkID) {
		return Award{}, ErrPerkNotFound
	}
	if err := in.Validate(); err != nil {
		return Award{}, err
	}
	if in.EarnedAt != nil {
		t, err := ParseEarnedAt("earnedAt", *in.EarnedAt, s.Clock.Now())
		if err != nil {
			return Award{}, err
		}
		opt.EarnedAt = t
	}
	sub, err := s.load(ctx, caller, perkID, in.UserID, in.LocationID)
	if err != nil {
		return Award{}, fmt.Errorf("grant %s to %s: %w", perkID, in.UserID, err)
	}
	if !sub.Perk.Enabled {
		return Award{}, ErrPerkDisabled
	}
	points := sub.Perk.Points.InitialOr()
	if in.Points != nil {
		points = *in.Points
	}
	if opt.Source == "" {
		opt.Source = SourceAPI
	}
	rec, err := s.grant(ctx, sub, points, opt)
	if err != nil {
		return Award{}, fmt.Errorf("grant %s to %s: %w", perkID, in.UserID, err)
	}
	return s.present(ctx, sub.TenantID, sub.Perk, rec, true)
}

// grant applies one grant (see Grant) and returns the award as stored.
func (s *Service) grant(ctx context.Context, sub Subject, points int, opt GrantOptions) (record, error) {
	var w GrantWrite
	err := s.writeTx(ctx, func(now time.Time) (*ddb.Tx, error) {
		tx := &ddb.Tx{}
		var err error
		w, err = s.AddGrant(ctx, tx, sub, points, opt, now)
		return tx, err
	}, func(err error) (bool, error) { return w.Failure(err) })
	if err == nil {
		metrics.Count(ctx, sub.TenantID, metrics.AwardsGranted, 1)
		s.react(ctx, w.Action)
	}
	return w.rec, err
}

// RedeemInput is the body of the redeem operations.
type RedeemInput struct {
	// ValueToRedeem is the points to take off (required, at least 1).
	ValueToRedeem *int   `json:"valueToRedeem"`
	LocationID    string `json:"locationId"`
}

// Redeem takes points off an award (POST
// /users/{userId}/awards/{awardId}/redeem and the pointawards path; the
// user or an admin). One conditional write: the award must hold at least
// the perk's points.min plus the value, and have had fewer than
// maxTotalRedemptions redemptions; the perk must be enabled, allow the
// location (locationIds) and the time (dateTimeRestriction, in the
// location's time zone when the caller is an admin or the user is checked
// in there, else in the tenant's: see Subject.AtPlace); the user must
// hold the award. The AWARD_REDEEMED action is in the same transaction.
func (s *Service) Redeem(ctx context.Context, caller actor.Actor, userID, awardID string, in RedeemInput) (Award, error) {
	if err := caller.RequireUser(userID); err != nil {
		return Award{}, err
	}
	uid, perkID, ok := ParseID(awardID)
	if !ok || uid != userID {
		return Award{}, ErrNotFound
	}
	if in.ValueToRedeem == nil {
		return Award{}, apierr.Invalid("valueToRedeem", "is required")
	}
	v := *in.ValueToRedeem
	if v < 1 || v > perk.MaxPoints {
		return Award{}, apierr.Invalid("valueToRedeem", "must be an integer from 1 to %d", perk.MaxPoints)
	}
	if in.LocationID != "" && !web.ValidID(in.LocationID) {
		return Award{}, ErrUnknownLocation
	}
	sub, err := s.load(ctx, caller, perkID, uid, in.LocationID)
	if errors.Is(err, ErrPerkNotFound) {
		return Award{}, ErrNotFound
	}
	if err != nil {
		return Award{}, fmt.Errorf("redeem award %s: %w", awardID, err)
	}
	if sub.AtPlace, err = s.atPlace(ctx, caller, sub); err != nil {
		return Award{}, fmt.Errorf("redeem award %s: %w", awardID, err)
	}
	var w RedeemWrite
	err = s.writeTx(ctx, func(now time.Time) (*ddb.Tx, error) {
		tx := &ddb.Tx{}
		var err error
		w, err = s.AddRedeem(ctx, tx, sub, v, 1, nil, now)
		return tx, err
	}, func(err error) (bool, error) { e := w.Failure(err); return isChanged(e), e })
	if err != nil {
		return Award{}, fmt.Errorf("redeem award %s: %w", awardID, err)
	}
	metrics.Count(ctx, sub.TenantID, metrics.AwardsRedeemed, 1)
	s.react(ctx, w.Action)
	// The answer is the award as the write left it (the write read it).
	return s.present(ctx, sub.TenantID, sub.Perk, w.rec, true)
}

// atPlace reports whether a redemption of sub by caller happens at the
// location it names (Subject.AtPlace): an admin is the location's POS; a
// user is there only while checked in there. The check-in is read only
// when it matters: a user naming a location, for a perk with a
// dateTimeRestriction.
func (s *Service) atPlace(ctx context.Context, caller actor.Actor, sub Subject) (bool, error) {
	switch {
	case sub.Place == nil:
		return false, nil
	case caller.IsAdmin():
		return true, nil
	case sub.Perk.DateTimeRestriction == nil || s.Checkins == nil:
		return false, nil
	}
	at, ok, err := s.Checkins.CheckedInAt(ctx, sub.TenantID, sub.Person.ID)
	if err != nil {
		return false, err
	}
	return ok && at == sub.Place.Ref.ID, nil
}

// RefundInput is the body of the refund operations.
type RefundInput struct {
	// Value is the points to give back (required, at least 1).
	Value      *int   `json:"value"`
	LocationID string `json:"locationId"`
}

// Refund gives redeemed points back to an award (POST
// /users/{userId}/awards/{awardId}/refund and the pointawards path,
// admin): never more in total than was redeemed (REFUND_EXCEEDS_REDEEMED
// beyond). The points come back even beyond the perk's max (they were
// the award's). One conditional write with its AWARD_REFUNDED action.
func (s *Service) Refund(ctx context.Context, caller actor.Actor, userID, awardID string, in RefundInput) (Award, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Award{}, err
	}
	uid, perkID, ok := ParseID(awardID)
	if !ok || uid != userID {
		return Award{}, ErrNotFound
	}
	if in.Value == nil {
		return Award{}, apierr.Invalid("value", "is required")
	}
	v := *in.Value
	if v < 1 || v > perk.MaxPoints {
		return Award{}, apierr.Invalid("value", "must be an integer from 1 to %d", perk.MaxPoints)
	}
	if in.LocationID != "" && !web.ValidID(in.LocationID) {
		return Award{}, ErrUnknownLocation
	}
	sub, err := s.load(ctx, caller, perkID, uid, in.LocationID)
	if errors.Is(err, ErrPerkNotFound) {
		return Award{}, ErrNotFound
	}
	if err != nil {
		return Award{}, fmt.Errorf("refund award %s: %w", awardID, err)
	}
	var w RefundWrite
	err = s.writeTx(ctx, func(now time.Time) (*ddb.Tx, error) {
		tx := &ddb.Tx{}
		var err error
		w, err = s.AddRefund(ctx, tx, sub, v, nil, now)
		return tx, err
	}, func(err error) (bool, error) { e := w.Failure(err); return isChanged(e), e })
	if err != nil {
		return Award{}, fmt.Errorf("refund award %s: %w", awardID, err)
	}
	s.react(ctx, w.Action)
	return s.present(ctx, sub.TenantID, sub.Perk, w.rec, true)
}

// SetInput is the body of PUT /pointawards/{awardId}.
type SetInput struct {
	Points *struct {
		Available *int `json:"available"`
	} `json:"points"`
}

// Set sets an award's available points (PUT /pointawards/{awardId},
// admin), within 0 and the perk's max. It records no action (spec). The
// user must hold the award (a granted award, a global perk's, or a CLUB or
// LEVEL perk's while a member).
func (s *Service) Set(ctx context.Context, caller actor.Actor, awardID string, in SetInput) error {
	if err := caller.RequireAdmin(); err != nil {
		return err
	}
	uid, perkID, ok := ParseID(awardID)
	if !ok {
		return ErrNotFound
	}
	if in.Points == nil {
		return apierr.Invalid("points", "is required: {\"points\": {\"available\": <number>}}")
	}
	if in.Points.Available == nil {
		return apierr.Invalid("points.available", "is required")
	}
	v := *in.Points.Available
	if v < 0 || v > perk.MaxPoints {
		return apierr.Invalid("points.available", "must be an integer from 0 to %d", perk.MaxPoints)
	}
	p, err := s.Perks.Find(ctx, caller.TenantID, perkID)
	if errors.Is(err, perk.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("set award %s: %w", awardID, err)
	}
	if p.Points.Max != nil && v > *p.Points.Max {
		return apierr.Invalid("points.available", "must be at most the perk's points.max (%d)", *p.Points.Max)
	}
	virtual := p.IsGlobal || p.HeldThroughSegment()
	sub := Subject{TenantID: caller.TenantID, TenantTitle: caller.TenantTitle, Perk: p, Person: Person{ID: uid}}
	var awardAt, userAt, memberAt int
	return s.writeTx(ctx, func(now time.Time) (*ddb.Tx, error) {
		// The setting is recorded as the difference it makes (an ADJUST
		// entry, the award's adjusted total).
		tx := &ddb.Tx{}
		at, out, pend, err := s.change(ctx, tx, sub, op{kind: opSet, points: v, virtual: virtual, initial: p.Points.InitialOr()}, now)
		if err != nil {
			return nil, err
		}
		awardAt = at
		if err := s.movement(tx, pend, opSet, out, "", map[string]any{"source": SourceAPI}, now); err != nil {
			return nil, err
		}
		userAt = tx.Add("user", s.Users.LiveCheck(caller.TenantID, uid))
		memberAt = -1
		if p.HeldThroughSegment() {
			memberAt = tx.Add("membership", s.Memberships.MemberCheck(caller.TenantID, p.SegmentID, uid, now))
		}
		return tx, nil
	}, func(err error) (bool, error) {
		switch {
		case ddb.Failed(err, userAt):
			return false, ErrNotFound
		case memberAt >= 0 && ddb.Failed(err, memberAt):
			return false, ErrNotHeld
		case ddb.Failed(err, awardAt):
			return true, nil // changed since it was read
		}
		return ledgerRace(err)
	})
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
