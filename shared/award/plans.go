package award

import (
	"context"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/action"
	"github.com/loyalty-platform/platform/shared/ddb"
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
	return false, err
}

// AddGrant reads the user's award of sub.Perk and adds a grant of points
// to tx (see Grant): the award's update conditional on it being unchanged,
// the user's live check, the membership check of a CLUB or LEVEL perk and,
// unless opt.Silent, the AWARD_GRANTED action (with opt.Meta added to its
// metadata). The perk must be enabled.
func (s *Service) AddGrant(ctx context.Context, tx *ddb.Tx, sub Subject, points int, opt GrantOptions, now time.Time) (GrantWrite, error) {
	p, uid := sub.Perk, sub.Person.ID
	if !p.Enabled {
		return GrantWrite{}, ErrPerkDisabled
	}
	st := s.st()
	cur, found, err := st.get(ctx, sub.TenantID, uid, p.ID)
	if err != nil {
		return GrantWrite{}, err
	}
	// A new award holds what it is granted; a virtual one (a global
	// perk's, a CLUB or LEVEL perk's) already showed points.initial.
	base := 0
	switch {
	case found:
		base = cur.Available
	case p.IsGlobal || p.HeldThroughSegment():
		base = p.Points.InitialOr()
	}
	next := base + points
	if p.Points.Max != nil && next > *p.Points.Max {
		next = max(*p.Points.Max, base)
	}
	delta := next - base
	c := change{set: "available = :avail", add: "granted :delta", values: map[string]types.AttributeValue{":avail": num(next), ":delta": num(delta)}}
	if found {
		c.condition = "available = :cur"
		c.values[":cur"] = num(base)
	} else {
		c.condition = "attribute_not_exists(pk)"
		cur = record{ID: ID(uid, p.ID), TenantID: sub.TenantID, UserID: uid, PerkID: p.ID, Created: stamp(now)}
	}
	w := GrantWrite{AwardID: cur.ID, Granted: delta, Available: next, MemberAt: -1}
	w.AwardAt = tx.Add("award", st.item(sub.TenantID, uid, p.ID, stamp(now), c))
	w.UserAt = tx.Add("user", s.Users.LiveCheck(sub.TenantID, uid))
	if p.HeldThroughSegment() {
		w.MemberAt = tx.Add("membership", s.Memberships.MemberCheck(sub.TenantID, p.SegmentID, uid, now))
	}
	if !opt.Silent {
		source := opt.Source
		if source == "" {
			source = SourceAPI
		}
		meta := map[string]any{"awardId": cur.ID, "perkId": p.ID, "points": points, "pointsGranted": delta, "pointsAvailable": next, "source": source}
		if opt.OperationID != "" {
			meta["operationId"] = opt.OperationID
		}
		if sub.Place != nil {
			meta["locationId"] = sub.Place.Ref.ID
		}
		maps.Copy(meta, opt.Meta)
		w.Action = s.act(sub, ActionGranted, now, meta)
		it, err := s.Actions.TransactItem(w.Action)
		if err != nil {
			return GrantWrite{}, err
		}
		tx.Add("action", it)
	}
	w.rec = cur
	w.rec.Available, w.rec.Granted, w.rec.UpdatedAt = next, cur.Granted+delta, stamp(now)
	return w, nil
}

// RedeemWrite is what AddRedeem added.
type RedeemWrite struct {
	AwardAt, UserAt, MemberAt int
	virtual, limited          bool
	maxR                      int
	Action                    action.Action
}

// Failure tells what a cancelled transaction means for the redemption.
func (w RedeemWrite) Failure(err error) error {
	switch {
	case ddb.Failed(err, w.UserAt):
		return ErrUserNotFound
	case w.MemberAt >= 0 && ddb.Failed(err, w.MemberAt):
		return ErrNotHeld
	case ddb.Failed(err, w.AwardAt):
		old, found := oldItem(err, w.AwardAt)
		switch {
		case !found && !w.virtual:
			return ErrNotFound
		case found && w.maxR > 0 && old.Redemptions >= w.maxR:
			return ErrRedemptionLimit
		}
		return ErrInsufficient
	}
	return err
}

// AddRedeem checks that sub.Perk allows a redemption of v points now (the
// perk enabled, its locationIds and dateTimeRestriction at sub.Place) and
// adds it to tx (see Redeem): one conditional update of the award (at
// least points.min plus v, fewer than maxTotalRedemptions), the user's
// live check, the membership check of a CLUB or LEVEL perk and the
// AWARD_REDEEMED action (meta added to its metadata).
func (s *Service) AddRedeem(tx *ddb.Tx, sub Subject, v int, meta map[string]any, now time.Time) (RedeemWrite, error) {
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
	zone := time.UTC
	if sub.Place != nil {
		zone = action.Zone(sub.Place.Timezone)
	}
	if !p.DateTimeRestriction.Allows(now.In(zone)) {
		return RedeemWrite{}, ErrOutsideWindow
	}
	floor, initial := p.Points.MinOr(), p.Points.InitialOr()
	w := RedeemWrite{virtual: p.IsGlobal || p.HeldThroughSegment(), MemberAt: -1}
	if p.Points.MaxTotalRedemptions != nil {
		w.maxR = *p.Points.MaxTotalRedemptions
	}
	cond := "attribute_exists(pk) AND available >= :need"
	values := map[string]types.AttributeValue{":need": num(floor + v), ":init": num(initial), ":v": num(v), ":one": num(1)}
	if w.maxR > 0 {
		cond += " AND redemptions < :maxr"
		values[":maxr"] = num(w.maxR)
	}
	if w.virtual && initial-v >= floor {
		cond = "(" + cond + ") OR attribute_not_exists(pk)"
	}
	c := change{
		set:       "available = if_not_exists(available, :init) - :v, refundable = if_not_exists(refundable, :zero) + :v",
		add:       "redeemed :v, redemptions :one",
		condition: cond, values: values,
	}
	w.AwardAt = tx.Add("award", s.st().item(sub.TenantID, uid, p.ID, stamp(now), c))
	w.UserAt = tx.Add("user", s.Users.LiveCheck(sub.TenantID, uid))
	if p.HeldThroughSegment() {
		w.MemberAt = tx.Add("membership", s.Memberships.MemberCheck(sub.TenantID, p.SegmentID, uid, now))
	}
	m := map[string]any{"awardId": ID(uid, p.ID), "perkId": p.ID, "points": v}
	if sub.Place != nil {
		m["locationId"] = sub.Place.Ref.ID
	}
	maps.Copy(m, meta)
	w.Action = s.act(sub, ActionRedeemed, now, m)
	it, err := s.Actions.TransactItem(w.Action)
	if err != nil {
		return RedeemWrite{}, err
	}
	tx.Add("action", it)
	return w, nil
}

// RefundWrite is what AddRefund added.
type RefundWrite struct {
	AwardAt int
	Action  action.Action
}

// Failure tells what a cancelled transaction means for the refund.
func (w RefundWrite) Failure(err error) error {
	if ddb.Failed(err, w.AwardAt) {
		if _, found := oldItem(err, w.AwardAt); !found {
			return ErrNotFound
		}
		return ErrRefundTooLarge
	}
	return err
}

// AddRefund adds to tx the refund of v redeemed points (see Refund): the
// award's update conditional on v not exceeding what was redeemed and not
// yet refunded, and the AWARD_REFUNDED action (meta added).
func (s *Service) AddRefund(tx *ddb.Tx, sub Subject, v int, meta map[string]any, now time.Time) RefundWrite {
	uid, perkID := sub.Person.ID, sub.Perk.ID
	c := change{
		set:       "available = available + :v, refundable = refundable - :v",
		add:       "refunded :v",
		condition: "attribute_exists(pk) AND refundable >= :v",
		values:    map[string]types.AttributeValue{":v": num(v)},
	}
	w := RefundWrite{AwardAt: tx.Add("award", s.st().item(sub.TenantID, uid, perkID, stamp(now), c))}
	m := map[string]any{"awardId": ID(uid, perkID), "perkId": perkID, "points": v}
	if sub.Place != nil {
		m["locationId"] = sub.Place.Ref.ID
	}
	maps.Copy(m, meta)
	w.Action = s.act(sub, ActionRefunded, now, m)
	if it, err := s.Actions.TransactItem(w.Action); err == nil {
		tx.Add("action", it)
	}
	return w
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

// AddReverse reads the user's award of sub.Perk and adds to tx the taking
// back of up to points (never below zero): the award's update conditional
// on it being unchanged since the read (a failure means retry) and the
// AWARD_REVERSED action (meta added). Nothing is added when the award
// holds nothing.
func (s *Service) AddReverse(ctx context.Context, tx *ddb.Tx, sub Subject, points int, meta map[string]any, now time.Time) (ReverseWrite, error) {
	uid, p := sub.Person.ID, sub.Perk
	cur, found, err := s.st().get(ctx, sub.TenantID, uid, p.ID)
	if err != nil {
		return ReverseWrite{}, err
	}
	w := ReverseWrite{AwardAt: -1}
	if !found || cur.Available <= 0 || points <= 0 {
		w.Short = max(points, 0)
		return w, nil
	}
	w.Taken = min(points, cur.Available)
	w.Short = points - w.Taken
	c := change{
		set: "available = :next", condition: "available = :cur",
		values: map[string]types.AttributeValue{":next": num(cur.Available - w.Taken), ":cur": num(cur.Available)},
	}
	w.AwardAt = tx.Add("award", s.st().item(sub.TenantID, uid, p.ID, stamp(now), c))
	m := map[string]any{"awardId": ID(uid, p.ID), "perkId": p.ID, "points": points, "pointsTaken": w.Taken, "pointsAvailable": cur.Available - w.Taken}
	maps.Copy(m, meta)
	w.Action = s.act(sub, ActionReversed, now, m)
	it, err := s.Actions.TransactItem(w.Action)
	if err != nil {
		return ReverseWrite{}, err
	}
	tx.Add("action", it)
	return w, nil
}

// Refundable reads how many of the points redeemed from the user's award
// of sub.Perk are not yet refunded (0 when the user holds no award).
func (s *Service) Refundable(ctx context.Context, sub Subject) (int, error) {
	cur, found, err := s.st().get(ctx, sub.TenantID, sub.Person.ID, sub.Perk.ID)
	if err != nil || !found {
		return 0, err
	}
	return cur.Refundable, nil
}
