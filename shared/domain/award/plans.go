package award

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// The Add* functions add the writes of a change of an award to a
// transaction (ddb.Tx), so that the change can commit together with
// another domain's (an order's redemptions, a rule's effects): each
// returns where its items are, and Failure tells what a cancelled
// transaction means for it. A lost race (the award changed since it was
// read) is for the caller to retry with a fresh read.

// GrantWrite is what AddGrant added.
type GrantWrite struct {
	AwardAt, UserAt, MemberAt int
	AwardID                   string
	// Granted is what the grant adds after the perk's max; Available what
	// the award holds after it.
	Granted, Available int
	// Action is the AWARD_GRANTED recorded (zero when Silent).
	Action action.Action
	rec    record
}

// Failure tells what a cancelled transaction means for the grant: retry
// when the award changed since it was read; the user gone or not a member
// are errors.
func (w GrantWrite) Failure(err error) (retry bool, out error) {
	switch {
	case ddb.Failed(err, w.UserAt):
		return false, ErrUserNotFound
	case w.MemberAt >= 0 && ddb.Failed(err, w.MemberAt):
		return false, ErrNotHeld
	case ddb.Failed(err, w.AwardAt):
		return true, nil
	}
	return ledgerRace(err)
}

// ledgerRace reads a cancelled transaction whose failed item is none of
// an award change's own: a ledger entry written by another change that
// read the same award (retry), or another domain's item (err).
func ledgerRace(err error) (bool, error) {
	for _, i := range ddb.FailedConditions(err) {
		if sk, ok := ddb.CanceledItem(err, i)["sk"].(*types.AttributeValueMemberS); ok && ledger.IsEntry(sk.Value) {
			return true, nil
		}
	}
	return false, err
}

// record adds to tx the action of a change of an award and returns it.
func (s *Service) record(tx *ddb.Tx, sub Subject, typ string, now time.Time, meta map[string]any) (action.Action, error) {
	return s.Actions.Record(tx, s.act(sub, typ, now, meta))
}

// Raced reports whether a cancelled transaction failed because another
// change of an award took the number of one of its ledger entries: the
// award changed since it was read; read again and retry.
func Raced(err error) bool {
	r, _ := ledgerRace(err)
	return r
}

// AddGrant adds a grant of points of sub.Perk to the user's award to tx
// (see Grant): the award's write (see change), its EARN entry, the user's
// live check, the membership check of a CLUB or LEVEL perk and, unless
// opt.Silent, the AWARD_GRANTED action (with opt.Meta added to its
// metadata). The perk must be enabled.
func (s *Service) AddGrant(ctx context.Context, tx *ddb.Tx, sub Subject, points int, opt GrantOptions, now time.Time) (GrantWrite, error) {
	p, uid := sub.Perk, sub.Person.ID
	if !p.Enabled {
		return GrantWrite{}, ErrPerkDisabled
	}
	o := op{kind: opGrant, points: points, virtual: p.IsGlobal || p.HeldThroughSegment(), initial: p.Points.InitialOr(), max: p.Points.Max, earnedAt: opt.EarnedAt}
	o.orderID, _ = opt.Meta["orderId"].(string)
	at, out, pend, err := s.change(ctx, tx, sub, o, now)
	if err != nil {
		return GrantWrite{}, err
	}
	w := GrantWrite{AwardAt: at, AwardID: ID(uid, p.ID), MemberAt: -1, Granted: out.granted, Available: out.available, rec: pend.cur}
	w.rec.UpdatedAt = clock.Stamp(now)
	w.UserAt = tx.Add("user", s.Users.LiveCheck(sub.TenantID, uid))
	if p.HeldThroughSegment() {
		w.MemberAt = tx.Add("membership", s.Memberships.MemberCheck(sub.TenantID, p.SegmentID, uid, now))
	}
	source := opt.Source
	if source == "" {
		source = SourceAPI
	}
	meta := map[string]any{"awardId": w.AwardID, "perkId": p.ID, "points": points, "pointsGranted": w.Granted, "pointsAvailable": w.Available, "balanceAfter": w.Available, "source": source}
	if opt.OperationID != "" {
		meta["operationId"] = opt.OperationID
	}
	if sub.Place != nil {
		meta["locationId"] = sub.Place.Ref.ID
	}
	maps.Copy(meta, opt.Meta)
	if !opt.Silent {
		if w.Action, err = s.record(tx, sub, ActionGranted, now, meta); err != nil {
			return GrantWrite{}, err
		}
	}
	if err := s.movement(tx, pend, opGrant, out, w.Action.ID, meta, now); err != nil {
		return GrantWrite{}, err
	}
	return w, nil
}

// RedeemWrite is what AddRedeem added.
type RedeemWrite struct {
	AwardAt, UserAt, MemberAt int
	Action                    action.Action
	// rec is the award as the write leaves it.
	rec record
}

// Failure tells what a cancelled transaction means for the redemption:
// ErrChanged (retry) when the award changed since it was read.
func (w RedeemWrite) Failure(err error) error {
	switch {
	case ddb.Failed(err, w.UserAt):
		return ErrUserNotFound
	case w.MemberAt >= 0 && ddb.Failed(err, w.MemberAt):
		return ErrNotHeld
	case ddb.Failed(err, w.AwardAt):
		return ErrChanged
	}
	if retry, _ := ledgerRace(err); retry {
		return ErrChanged
	}
	return err
}

// AddRedeem checks that sub.Perk allows a redemption of v points now (the
// perk enabled, its locationIds at sub.Place, its dateTimeRestriction in
// sub.Place's time zone when sub.AtPlace, else the tenant's) and
// that the award allows it (at least points.min plus v left; with
// maxTotalRedemptions, at most that many units redeemed in all, units
// counting this one), and adds it to tx (see Redeem): the award's write,
// its BURN entry, the user's live check, the membership check of a CLUB
// or LEVEL perk and the AWARD_REDEEMED action (meta added to its
// metadata).
func (s *Service) AddRedeem(ctx context.Context, tx *ddb.Tx, sub Subject, v, units int, meta map[string]any, now time.Time) (RedeemWrite, error) {
	p, uid := sub.Perk, sub.Person.ID
	if !p.Enabled {
		return RedeemWrite{}, ErrPerkDisabled
	}
	if len(p.LocationIDs) > 0 {
		if sub.Place == nil {
			return RedeemWrite{}, ErrLocationRequired
		}
		if !contains(p.LocationIDs, sub.Place.Ref.ID) {
			return RedeemWrite{}, ErrLocationNotValid
		}
	}
	if p.DateTimeRestriction != nil {
		zone, err := s.windowZone(ctx, sub)
		if err != nil {
			return RedeemWrite{}, err
		}
		if !p.DateTimeRestriction.Allows(now.In(zone)) {
			return RedeemWrite{}, ErrOutsideWindow
		}
	}
	units = max(units, 1)
	o := op{kind: opRedeem, points: v, units: units, virtual: p.IsGlobal || p.HeldThroughSegment(), initial: p.Points.InitialOr(), floor: p.Points.MinOr()}
	if p.Points.MaxTotalRedemptions != nil {
		o.maxR = *p.Points.MaxTotalRedemptions
	}
	at, out, pend, err := s.change(ctx, tx, sub, o, now)
	if err != nil {
		return RedeemWrite{}, err
	}
	w := RedeemWrite{AwardAt: at, MemberAt: -1, rec: pend.cur}
	w.rec.UpdatedAt = clock.Stamp(now)
	w.UserAt = tx.Add("user", s.Users.LiveCheck(sub.TenantID, uid))
	if p.HeldThroughSegment() {
		w.MemberAt = tx.Add("membership", s.Memberships.MemberCheck(sub.TenantID, p.SegmentID, uid, now))
	}
	m := map[string]any{"awardId": ID(uid, p.ID), "perkId": p.ID, "points": v, "pointsAvailable": out.available, "balanceAfter": out.available}
	if units > 1 {
		m["units"] = units
	}
	if sub.Place != nil {
		m["locationId"] = sub.Place.Ref.ID
	}
	maps.Copy(m, meta)
	if w.Action, err = s.record(tx, sub, ActionRedeemed, now, m); err != nil {
		return RedeemWrite{}, err
	}
	if err := s.movement(tx, pend, opRedeem, out, w.Action.ID, m, now); err != nil {
		return RedeemWrite{}, err
	}
	return w, nil
}

// windowZone is the time zone of sub's dateTimeRestriction: the
// location's when the redemption is known to happen there (sub.AtPlace)
// and the location has a zone, else the tenant's (settings.timezone).
func (s *Service) windowZone(ctx context.Context, sub Subject) (*time.Location, error) {
	if sub.AtPlace && sub.Place != nil && sub.Place.Timezone != "" {
		return action.Zone(sub.Place.Timezone), nil
	}
	zone, err := s.Tenants.Zone(ctx, sub.TenantID)
	if err != nil {
		return nil, fmt.Errorf("time zone of tenant %s: %w", sub.TenantID, err)
	}
	return zone, nil
}

// RefundWrite is what AddRefund added.
type RefundWrite struct {
	AwardAt int
	Action  action.Action
	// rec is the award as the write leaves it.
	rec record
}

// Failure tells what a cancelled transaction means for the refund:
// ErrChanged (retry) when the award changed since it was read.
func (w RefundWrite) Failure(err error) error {
	if ddb.Failed(err, w.AwardAt) {
		return ErrChanged
	}
	if retry, _ := ledgerRace(err); retry {
		return ErrChanged
	}
	return err
}

// AddRefund adds to tx the refund of v redeemed points (see Refund): v
// may not exceed what was redeemed and not yet refunded
// (ErrRefundTooLarge); the award's write, its REFUND entry and the
// AWARD_REFUNDED action (meta added).
func (s *Service) AddRefund(ctx context.Context, tx *ddb.Tx, sub Subject, v int, meta map[string]any, now time.Time) (RefundWrite, error) {
	uid, perkID := sub.Person.ID, sub.Perk.ID
	at, out, pend, err := s.change(ctx, tx, sub, op{kind: opRefund, points: v}, now)
	if err != nil {
		return RefundWrite{}, err
	}
	w := RefundWrite{AwardAt: at, rec: pend.cur}
	w.rec.UpdatedAt = clock.Stamp(now)
	m := map[string]any{"awardId": ID(uid, perkID), "perkId": perkID, "points": v, "pointsAvailable": out.available, "balanceAfter": out.available}
	if sub.Place != nil {
		m["locationId"] = sub.Place.Ref.ID
	}
	maps.Copy(m, meta)
	if w.Action, err = s.record(tx, sub, ActionRefunded, now, m); err != nil {
		return RefundWrite{}, err
	}
	if err := s.movement(tx, pend, opRefund, out, w.Action.ID, m, now); err != nil {
		return RefundWrite{}, err
	}
	return w, nil
}

// ActionReversed: points a grant gave are taken back (a refunded order's
// earned points). Metadata: awardId, perkId, points (asked), pointsTaken
// (never more than the award holds), pointsAvailable after.
const ActionReversed = "AWARD_REVERSED"

// ReverseWrite is what AddReverse added.
type ReverseWrite struct {
	AwardAt int
	// Taken is what comes off (at most what the award holds); Short what
	// could not be taken back.
	Taken, Short int
	Action       action.Action
}

// AddReverse adds to tx the taking back of up to points from the user's
// award of sub.Perk (never below zero; from what the award holds after
// the transaction's earlier changes of it): the award's write, its
// REVERSAL entry and the AWARD_REVERSED action (meta added). Nothing is
// added when the award holds nothing.
func (s *Service) AddReverse(ctx context.Context, tx *ddb.Tx, sub Subject, points int, meta map[string]any, now time.Time) (ReverseWrite, error) {
	uid, p := sub.Person.ID, sub.Perk
	w := ReverseWrite{AwardAt: -1}
	if points <= 0 {
		return w, nil
	}
	if !tx.Has(s.awardItemKey(sub.TenantID, uid, p.ID)) {
		// Nothing to take from an award that holds nothing: no write.
		cur, found, err := s.st().get(ctx, sub.TenantID, uid, p.ID)
		if err != nil {
			return ReverseWrite{}, err
		}
		if !found || cur.Available <= 0 {
			w.Short = points
			return w, nil
		}
	}
	orderID, _ := meta["orderId"].(string)
	at, out, pend, err := s.change(ctx, tx, sub, op{kind: opReverse, points: points, orderID: orderID}, now)
	if err != nil {
		return ReverseWrite{}, err
	}
	w.AwardAt, w.Taken, w.Short = at, out.taken, points-out.taken
	if w.Taken == 0 {
		return w, nil
	}
	m := map[string]any{"awardId": ID(uid, p.ID), "perkId": p.ID, "points": points, "pointsTaken": w.Taken, "pointsAvailable": out.available, "balanceAfter": out.available}
	maps.Copy(m, meta)
	if w.Action, err = s.record(tx, sub, ActionReversed, now, m); err != nil {
		return ReverseWrite{}, err
	}
	if err := s.movement(tx, pend, opReverse, out, w.Action.ID, m, now); err != nil {
		return ReverseWrite{}, err
	}
	return w, nil
}

// Refundable reads how many of the points redeemed from the user's award
// of sub.Perk are not yet refunded (0 when the user holds no award), as
// the changes tx holds leave it.
func (s *Service) Refundable(ctx context.Context, tx *ddb.Tx, sub Subject) (int, error) {
	if state, ok := tx.State(s.awardItemKey(sub.TenantID, sub.Person.ID, sub.Perk.ID)); ok {
		if p, _ := state.(*pending); p != nil {
			return p.cur.Refundable, nil
		}
	}
	cur, found, err := s.st().get(ctx, sub.TenantID, sub.Person.ID, sub.Perk.ID)
	if err != nil || !found {
		return 0, err
	}
	return cur.Refundable, nil
}
