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
// metadata). The perk must be enabled. A grant of an award tx changes
// already is merged into that change (see ErrChanged).
func (s *Service) AddGrant(ctx context.Context, tx *ddb.Tx, sub Subject, points int, opt GrantOptions, now time.Time) (GrantWrite, error) {
	p, uid := sub.Perk, sub.Person.ID
	if !p.Enabled {
		return GrantWrite{}, ErrPerkDisabled
	}
	o := op{kind: opGrant, points: points, virtual: p.IsGlobal || p.HeldThroughSegment(), initial: p.Points.InitialOr(), max: p.Points.Max}
	w := GrantWrite{AwardID: ID(uid, p.ID), MemberAt: -1}
	prev, err := s.pendingOf(tx, sub.TenantID, uid, p.ID)
	if err != nil {
		return GrantWrite{}, err
	}
	if prev != nil {
		at, out, err := s.again(ctx, tx, prev, o, stamp(now))
		if err != nil {
			return GrantWrite{}, err
		}
		w.AwardAt, w.Granted, w.Available = at, out.granted, out.available
		w.rec = prev.cur
		w.rec.ID, w.rec.TenantID, w.rec.UserID, w.rec.PerkID = w.AwardID, sub.TenantID, uid, p.ID
		if w.rec.Created == "" {
			w.rec.Created = stamp(now)
		}
	} else {
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
		case o.virtual:
			base = o.initial
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
		if w.AwardAt, err = s.first(tx, sub.TenantID, uid, p.ID, c, stamp(now), o, true, found, cur); err != nil {
			return GrantWrite{}, err
		}
		w.Granted, w.Available = delta, next
		w.rec = cur
		w.rec.Available, w.rec.Granted = next, cur.Granted+delta
	}
	w.rec.UpdatedAt = stamp(now)
	w.UserAt = tx.Add("user", s.Users.LiveCheck(sub.TenantID, uid))
	if p.HeldThroughSegment() {
		w.MemberAt = tx.Add("membership", s.Memberships.MemberCheck(sub.TenantID, p.SegmentID, uid, now))
	}
	if !opt.Silent {
		source := opt.Source
		if source == "" {
			source = SourceAPI
		}
		meta := map[string]any{"awardId": w.AwardID, "perkId": p.ID, "points": points, "pointsGranted": w.Granted, "pointsAvailable": w.Available, "source": source}
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
	return w, nil
}

// RedeemWrite is what AddRedeem added.
type RedeemWrite struct {
	AwardAt, UserAt, MemberAt int
	virtual, merged           bool
	maxR, units               int
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
		if w.merged {
			return ErrChanged
		}
		old, found := oldItem(err, w.AwardAt)
		switch {
		case !found && !w.virtual:
			return ErrNotFound
		case found && w.maxR > 0 && old.Redemptions+w.units > w.maxR:
			return ErrRedemptionLimit
		}
		return ErrInsufficient
	}
	return err
}

// AddRedeem checks that sub.Perk allows a redemption of v points now (the
// perk enabled, its locationIds and dateTimeRestriction at sub.Place) and
// adds it to tx (see Redeem): one conditional update of the award (at
// least points.min plus v; with maxTotalRedemptions, at most that many
// units redeemed in all, units counting this one), the user's live check,
// the membership check of a CLUB or LEVEL perk and the AWARD_REDEEMED
// action (meta added to its metadata). A redemption of an award tx
// changes already is merged into that change.
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
	zone := time.UTC
	if sub.Place != nil {
		zone = action.Zone(sub.Place.Timezone)
	}
	if !p.DateTimeRestriction.Allows(now.In(zone)) {
		return RedeemWrite{}, ErrOutsideWindow
	}
	units = max(units, 1)
	floor, initial := p.Points.MinOr(), p.Points.InitialOr()
	w := RedeemWrite{virtual: p.IsGlobal || p.HeldThroughSegment(), MemberAt: -1, units: units}
	if p.Points.MaxTotalRedemptions != nil {
		w.maxR = *p.Points.MaxTotalRedemptions
	}
	if w.maxR > 0 && units > w.maxR {
		return RedeemWrite{}, ErrRedemptionLimit
	}
	o := op{kind: opRedeem, points: v, units: units, virtual: w.virtual, initial: initial, floor: floor, maxR: w.maxR}
	prev, err := s.pendingOf(tx, sub.TenantID, uid, p.ID)
	if err != nil {
		return RedeemWrite{}, err
	}
	if prev != nil {
		if w.AwardAt, _, err = s.again(ctx, tx, prev, o, stamp(now)); err != nil {
			return RedeemWrite{}, err
		}
		w.merged = true
	} else {
		cond := "attribute_exists(pk) AND available >= :need"
		values := map[string]types.AttributeValue{":need": num(floor + v), ":init": num(initial), ":v": num(v), ":units": num(units)}
		if w.maxR > 0 {
			cond += " AND redemptions <= :lastr"
			values[":lastr"] = num(w.maxR - units)
		}
		if w.virtual && initial-v >= floor {
			cond = "(" + cond + ") OR attribute_not_exists(pk)"
		}
		c := change{
			set:       "available = if_not_exists(available, :init) - :v, refundable = if_not_exists(refundable, :zero) + :v",
			add:       "redeemed :v, redemptions :units",
			condition: cond, values: values,
		}
		if w.AwardAt, err = s.first(tx, sub.TenantID, uid, p.ID, c, stamp(now), o, false, false, record{}); err != nil {
			return RedeemWrite{}, err
		}
	}
	w.UserAt = tx.Add("user", s.Users.LiveCheck(sub.TenantID, uid))
	if p.HeldThroughSegment() {
		w.MemberAt = tx.Add("membership", s.Memberships.MemberCheck(sub.TenantID, p.SegmentID, uid, now))
	}
	m := map[string]any{"awardId": ID(uid, p.ID), "perkId": p.ID, "points": v}
	if units > 1 {
		m["units"] = units
	}
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
	merged  bool
	Action  action.Action
}

// Failure tells what a cancelled transaction means for the refund.
func (w RefundWrite) Failure(err error) error {
	if ddb.Failed(err, w.AwardAt) {
		if w.merged {
			return ErrChanged
		}
		if _, found := oldItem(err, w.AwardAt); !found {
			return ErrNotFound
		}
		return ErrRefundTooLarge
	}
	return err
}

// AddRefund adds to tx the refund of v redeemed points (see Refund): the
// award's update conditional on v not exceeding what was redeemed and not
// yet refunded, and the AWARD_REFUNDED action (meta added). A refund of an
// award tx changes already is merged into that change.
func (s *Service) AddRefund(ctx context.Context, tx *ddb.Tx, sub Subject, v int, meta map[string]any, now time.Time) (RefundWrite, error) {
	uid, perkID := sub.Person.ID, sub.Perk.ID
	o := op{kind: opRefund, points: v}
	var w RefundWrite
	prev, err := s.pendingOf(tx, sub.TenantID, uid, perkID)
	if err != nil {
		return RefundWrite{}, err
	}
	if prev != nil {
		if w.AwardAt, _, err = s.again(ctx, tx, prev, o, stamp(now)); err != nil {
			return RefundWrite{}, err
		}
		w.merged = true
	} else {
		c := change{
			set:       "available = available + :v, refundable = refundable - :v",
			add:       "refunded :v",
			condition: "attribute_exists(pk) AND refundable >= :v",
			values:    map[string]types.AttributeValue{":v": num(v)},
		}
		if w.AwardAt, err = s.first(tx, sub.TenantID, uid, perkID, c, stamp(now), o, false, false, record{}); err != nil {
			return RefundWrite{}, err
		}
	}
	m := map[string]any{"awardId": ID(uid, perkID), "perkId": perkID, "points": v}
	if sub.Place != nil {
		m["locationId"] = sub.Place.Ref.ID
	}
	maps.Copy(m, meta)
	w.Action = s.act(sub, ActionRefunded, now, m)
	it, err := s.Actions.TransactItem(w.Action)
	if err != nil {
		return RefundWrite{}, err
	}
	tx.Add("action", it)
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

// AddReverse reads the user's award of sub.Perk and adds to tx the taking
// back of up to points (never below zero): the award's update conditional
// on it being unchanged since the read (a failure means retry) and the
// AWARD_REVERSED action (meta added). Nothing is added when the award
// holds nothing. A reversal on an award tx changes already is merged into
// that change (it takes from what the award holds after it).
func (s *Service) AddReverse(ctx context.Context, tx *ddb.Tx, sub Subject, points int, meta map[string]any, now time.Time) (ReverseWrite, error) {
	uid, p := sub.Person.ID, sub.Perk
	w := ReverseWrite{AwardAt: -1}
	if points <= 0 {
		return w, nil
	}
	o := op{kind: opReverse, points: points}
	prev, err := s.pendingOf(tx, sub.TenantID, uid, p.ID)
	if err != nil {
		return ReverseWrite{}, err
	}
	var after int
	if prev != nil {
		at, out, err := s.again(ctx, tx, prev, o, stamp(now))
		if err != nil {
			return ReverseWrite{}, err
		}
		w.AwardAt, w.Taken, after = at, out.taken, out.available
	} else {
		cur, found, err := s.st().get(ctx, sub.TenantID, uid, p.ID)
		if err != nil {
			return ReverseWrite{}, err
		}
		if !found || cur.Available <= 0 {
			w.Short = points
			return w, nil
		}
		w.Taken = min(points, cur.Available)
		after = cur.Available - w.Taken
		c := change{
			set: "available = :next", add: "reversed :taken", condition: "available = :cur",
			values: map[string]types.AttributeValue{":next": num(after), ":cur": num(cur.Available), ":taken": num(w.Taken)},
		}
		if w.AwardAt, err = s.first(tx, sub.TenantID, uid, p.ID, c, stamp(now), o, true, true, cur); err != nil {
			return ReverseWrite{}, err
		}
	}
	w.Short = points - w.Taken
	if w.Taken == 0 {
		return w, nil
	}
	m := map[string]any{"awardId": ID(uid, p.ID), "perkId": p.ID, "points": points, "pointsTaken": w.Taken, "pointsAvailable": after}
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
// of sub.Perk are not yet refunded (0 when the user holds no award), as
// the changes tx holds leave it.
func (s *Service) Refundable(ctx context.Context, tx *ddb.Tx, sub Subject) (int, error) {
	prev, err := s.pendingOf(tx, sub.TenantID, sub.Person.ID, sub.Perk.ID)
	if err != nil {
		return 0, err
	}
	if prev != nil && prev.read {
		return prev.cur.Refundable, nil
	}
	cur, found, err := s.st().get(ctx, sub.TenantID, sub.Person.ID, sub.Perk.ID)
	if err != nil {
		return 0, err
	}
	if prev != nil {
		p := pending{found: found, exists: found, cur: cur}
		for _, o := range prev.ops {
			_, _ = p.apply(o)
		}
		return p.cur.Refundable, nil
	}
	if !found {
		return 0, nil
	}
	return cur.Refundable, nil
}
