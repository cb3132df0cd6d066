package award

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// One unit of work writes each award once, with one ledger entry per
// movement. A change of an award reads it (once per transaction), applies
// the change here, with the rules a redemption, refund, grant or reversal
// keeps (a domain error is answered before anything is written), and
// writes the award's new counters conditional on its entry count (`seq`)
// being the one read, together with the change's ledger entry (numbered
// seq+1, conditional on being new). One request may change one award
// several times: an order that earns (by a rule) and burns on the same
// award, whose refund then gives the burn back and reverses the earn; a
// rule with two effects on one perk. Each further change in the
// transaction applies to the award as the earlier ones left it and
// replaces the award's write with one write of the result (ddb.Tx.Merge);
// DynamoDB never sees the award twice. A failed condition means the award
// changed since it was read: the caller reads again (ErrChanged).

// ErrChanged is the failure of an award write: the award changed since it
// was read; read again and retry.
var ErrChanged = apierr.New(apierr.Conflict, "the award was changed by another request at once; retry")

// SourceInitial is the source of the EARN entry of a virtual award's
// points.initial, written with the award's first change.
const SourceInitial = "INITIAL"

// pending is what a transaction writes of one award: the award as read
// (found tells whether it was stored) and as the changes so far leave it.
type pending struct {
	found   bool
	as, cur record
	// exists tells whether the award exists once the changes so far
	// applied (a virtual award is stored by its first change).
	exists bool
	// ops counts the changes; entries the ledger entries they numbered.
	ops, entries int
	tenant       string
	uid, perk    string
	// reminder is how long before an expiry the expiry run reminds
	// (the tenant's setting; 0: the default).
	reminder time.Duration
}

// expiresAny reports whether any lot of r expires.
func (r record) expiresAny() bool {
	for _, l := range r.Lots {
		if l.ExpiresAt != "" {
			return true
		}
	}
	return false
}

// op is one change of an award.
type op struct {
	kind opKind
	// points is what a grant adds, a redemption or refund moves, a
	// reversal takes back, a setting sets.
	points int
	// units is how many redemptions a redemption counts
	// (maxTotalRedemptions counts units).
	units int
	// virtual tells whether the award is a global, CLUB or LEVEL perk's
	// (held before it is stored, with initial points); floor is the
	// points a redemption must leave; max the perk's points.max (nil:
	// none); maxR its maxTotalRedemptions (0: none).
	virtual bool
	initial int
	floor   int
	max     *int
	maxR    int
	// now is when the change happens; earnedAt when a grant's points were
	// earned (zero: now); policy and zone decide the expiry of the lots
	// the change earns; orderID is the order a grant earned for or a
	// reversal takes back from (its lots first).
	now      time.Time
	earnedAt time.Time
	policy   *perk.Expiry
	zone     *time.Location
	orderID  string
}

type opKind int

const (
	opGrant opKind = iota + 1
	opRedeem
	opRefund
	opReverse
	opSet
	// opExpire only writes off expired lots and records reminders (the
	// expiry run).
	opExpire
)

// entryType is the ledger entry type of each kind of change.
var entryType = map[opKind]string{
	opGrant: ledger.Earn, opRedeem: ledger.Burn, opRefund: ledger.Refund, opReverse: ledger.Reversal, opSet: ledger.Adjust,
}

// outcome is what applying an op did.
type outcome struct {
	// granted is what a grant added (after the perk's max); taken what a
	// reversal took back; moved the signed change of available by the
	// change itself (0: no movement, no entry of its own); available what
	// the award holds after the whole change.
	granted, taken, moved, available int
	// units is how many redemptions a redemption counted.
	units int
	// seq, after, lots and renews are the change's own entry's number,
	// balance after, lots and AFTER_ACTIVITY renewal.
	seq, after int
	lots       []ledger.LotPoints
	renews     string
	// pre and post are the entries written around the change's own: the
	// EXPIRY of lots that expired before it and a virtual award's initial
	// points (pre), the EXPIRY of points earned or given back to lots
	// already expired (post). expired is the points they expired.
	pre, post []ledger.Entry
	expired   int
}

// apply applies o to p.cur as the award's rules say, or returns the
// error that refuses it (and changes nothing). Lots that expired before
// o.now are written off first.
func (p *pending) apply(o op) (outcome, error) {
	r := p.cur.clone()
	exists := p.exists
	entries := p.entries
	reserve := func() int { entries++; return p.as.Seq + entries }
	now := clock.Stamp(o.now)
	var out outcome
	if exists {
		if n, from := r.expire(now); n > 0 {
			out.pre = append(out.pre, ledger.Entry{Seq: reserve(), Type: ledger.Expiry, Points: -n, BalanceAfter: r.Available, Lots: from, Cause: ledger.Cause{Source: SourceExpiry}})
			out.expired += n
		}
	} else if o.virtual && o.initial > 0 {
		// A virtual award's initial points are a lot earned when the
		// award is stored (its first change).
		seq := reserve()
		l := lotFor(&r, seq, o.initial, o.now, o.policy, o.zone, "")
		r.addLot(l)
		r.Available = o.initial
		e := ledger.Entry{Seq: seq, Type: ledger.Earn, Points: o.initial, BalanceAfter: o.initial,
			Lots: []ledger.LotPoints{{LotID: l.ID, Points: o.initial, ExpiresAt: l.ExpiresAt, Activity: l.Activity}}, Cause: ledger.Cause{Source: SourceInitial}}
		out.pre = append(out.pre, e)
	}
	avail := r.Available
	lotsByID := map[string]lot{}
	for _, l := range r.Lots {
		lotsByID[l.ID] = l
	}
	activity := func(at time.Time) {
		if exp, ok := o.policy.ActivityExpiry(at, zoneOr(o.zone)); ok {
			r.renew(clock.Stamp(at), clock.Stamp(exp))
			out.renews = clock.Stamp(exp)
		}
	}
	switch o.kind {
	case opGrant:
		next := avail + o.points
		if limit := ceiling(o.max); next > limit {
			next = max(limit, avail)
		}
		out.granted = next - avail
		r.Granted += out.granted
		out.moved = out.granted
		r.Available = next
		if out.granted > 0 {
			out.seq = reserve()
			earned := o.now
			if !o.earnedAt.IsZero() {
				earned = o.earnedAt
			}
			activity(earned)
			l := lotFor(&r, out.seq, out.granted, earned, o.policy, o.zone, o.orderID)
			id := r.addLot(l)
			out.lots = []ledger.LotPoints{{LotID: id, Points: out.granted, ExpiresAt: l.ExpiresAt, Activity: l.Activity}}
		}
	case opRedeem:
		switch {
		case !exists && !o.virtual:
			return out, ErrNotFound
		case o.maxR > 0 && r.Redemptions+o.units > o.maxR:
			return out, ErrRedemptionLimit
		case avail < o.floor+o.points:
			return out, ErrInsufficient
		}
		out.lots = r.take(o.points, "")
		r.drew(out.lots, lotsByID)
		r.Available = avail - o.points
		r.Refundable += o.points
		r.Redeemed += o.points
		r.Redemptions += o.units
		out.moved, out.units = -o.points, o.units
		out.seq = reserve()
		activity(o.now)
	case opRefund:
		switch {
		case !exists:
			return out, ErrNotFound
		case r.Refundable < o.points:
			return out, ErrRefundTooLarge
		}
		renewal := ""
		if exp, ok := o.policy.ActivityExpiry(timeOr(r.ActivityAt, o.now), zoneOr(o.zone)); ok {
			renewal = clock.Stamp(exp)
		}
		out.lots = r.giveBack(o.points, renewal)
		r.Available = avail + o.points
		r.Refundable -= o.points
		r.Refunded += o.points
		out.moved = o.points
		out.seq = reserve()
	case opReverse:
		if !exists || avail <= 0 || o.points <= 0 {
			out.available = avail
			p.cur, p.exists, p.entries = r, exists, entries
			return out, nil
		}
		out.taken = min(o.points, avail)
		out.lots = r.take(out.taken, o.orderID)
		r.Available = avail - out.taken
		r.Reversed += out.taken
		out.moved = -out.taken
		out.seq = reserve()
	case opSet:
		if !exists && !o.virtual {
			return out, ErrNotFound
		}
		out.moved = o.points - avail
		r.Adjusted += out.moved
		r.Available = o.points
		switch {
		case out.moved > 0:
			out.seq = reserve()
			l := lotFor(&r, out.seq, out.moved, o.now, o.policy, o.zone, "")
			id := r.addLot(l)
			out.lots = []ledger.LotPoints{{LotID: id, Points: out.moved, ExpiresAt: l.ExpiresAt, Activity: l.Activity}}
		case out.moved < 0:
			out.seq = reserve()
			out.lots = r.take(-out.moved, "")
		}
	case opExpire:
		if !exists {
			return out, ErrNotFound
		}
	}
	out.after = r.Available
	if out.moved != 0 {
		// Points earned or given back to lots already expired (an earn
		// dated in the past, a refund to an expired lot) expire at once.
		if n, from := r.expire(now); n > 0 {
			out.post = append(out.post, ledger.Entry{Seq: reserve(), Type: ledger.Expiry, Points: -n, BalanceAfter: r.Available, Lots: from, Cause: ledger.Cause{Source: SourceExpiry}})
			out.expired += n
		}
	}
	p.cur, p.exists, p.entries = r, true, entries
	out.available = r.Available
	return out, nil
}

// SourceExpiry is the source of EXPIRY entries.
const SourceExpiry = "EXPIRY"

func zoneOr(z *time.Location) *time.Location {
	if z == nil {
		return time.UTC
	}
	return z
}

// timeOr parses stamp s, or returns t when s is empty or not a stamp.
func timeOr(s string, t time.Time) time.Time {
	if v, err := time.Parse(clock.Format, s); err == nil {
		return v
	}
	return t
}

// ceiling is the most points an award may hold: the perk's points.max,
// never above perk.MaxPoints (1e9) whatever path grants.
func ceiling(max *int) int {
	if max != nil && *max < perk.MaxPoints {
		return *max
	}
	return perk.MaxPoints
}

// awardItemKey is the identity of an award in a transaction (ddb.ItemKey).
func (s *Service) awardItemKey(t, uid, perkID string) string {
	return ddb.Key(s.Table, awardKey(t, uid, perkID))
}

// change applies o to the user's award of sub.Perk in tx: it reads the
// award unless tx changes it already, applies o and writes the award's
// result (replacing an earlier write of it in tx), with the ledger
// entries the change writes beside its own (the EXPIRY of lots that
// expired, with its POINTS_EXPIRED action, and a virtual award's initial
// points when this change stores it). It returns the award's index in
// tx, what o did and the award's pending state, for the change's own
// entry (movement).
func (s *Service) change(ctx context.Context, tx *ddb.Tx, sub Subject, o op, now time.Time) (int, outcome, *pending, error) {
	t, uid, perkID := sub.TenantID, sub.Person.ID, sub.Perk.ID
	key := s.awardItemKey(t, uid, perkID)
	var p *pending
	if state, ok := tx.State(key); ok {
		if p, _ = state.(*pending); p == nil {
			return -1, outcome{}, nil, fmt.Errorf("award %s: the transaction names it outside the award domain", ID(uid, perkID))
		}
	} else {
		rec, found, err := s.st().get(ctx, t, uid, perkID)
		if err != nil {
			return -1, outcome{}, nil, err
		}
		if !found {
			rec = record{ID: ID(uid, perkID), TenantID: t, UserID: uid, PerkID: perkID, Created: clock.Stamp(now)}
		}
		rec.reconcile()
		p = &pending{found: found, exists: found, as: rec, cur: rec.clone(), tenant: t, uid: uid, perk: perkID}
	}
	o.now, o.policy = now, sub.Perk.Points.Expiry
	if (o.policy.Expires() || p.cur.expiresAny()) && s.Tenants != nil {
		if err := s.expirySettings(ctx, t, &o, p); err != nil {
			return -1, outcome{}, nil, err
		}
	}
	out, err := p.apply(o)
	if err != nil {
		return -1, outcome{}, nil, err
	}
	p.ops++
	if err := s.sideEntries(tx, sub, p, out, now); err != nil {
		return -1, outcome{}, nil, err
	}
	p.cur.Seq = p.as.Seq + p.entries
	at, err := s.writeAward(tx, p, now)
	return at, out, p, err
}

// expirySettings reads the tenant's time zone (for the expiry of the
// lots o earns) and reminder (for the award's key in the expiry index).
func (s *Service) expirySettings(ctx context.Context, t string, o *op, p *pending) error {
	zone, err := s.Tenants.Zone(ctx, t)
	if err != nil {
		return fmt.Errorf("time zone of tenant %s: %w", t, err)
	}
	days, err := s.Tenants.ExpiringDays(ctx, t)
	if err != nil {
		return fmt.Errorf("settings of tenant %s: %w", t, err)
	}
	o.zone, p.reminder = zone, time.Duration(days)*24*time.Hour
	return nil
}

// ActionPointsExpired: points of an award's lots expired (metadata:
// awardId, perkId, points, lots [{lotId, points, expiresAt}],
// pointsAvailable after).
const ActionPointsExpired = "POINTS_EXPIRED"

// ActionPointsExpiring: points of an award expire soon (metadata:
// awardId, perkId, points, expiring [{points, expiresAt}],
// pointsAvailable), recorded by the expiry run once per lot and expiry,
// reminder days before (tenant setting pointsExpiringDays, default 30).
const ActionPointsExpiring = "POINTS_EXPIRING"

// sideEntries adds the entries a change writes beside its own: the EXPIRY
// of lots that expired (with the POINTS_EXPIRED action they cause) and a
// virtual award's initial points.
func (s *Service) sideEntries(tx *ddb.Tx, sub Subject, p *pending, out outcome, now time.Time) error {
	if len(out.pre)+len(out.post) == 0 {
		return nil
	}
	actionID := ""
	if out.expired > 0 {
		var lots []ledger.LotPoints
		for _, e := range append(slices.Clone(out.pre), out.post...) {
			if e.Type == ledger.Expiry {
				lots = append(lots, e.Lots...)
			}
		}
		meta := map[string]any{"awardId": ID(p.uid, p.perk), "perkId": p.perk, "points": out.expired, "lots": lotsMeta(lots), "pointsAvailable": out.available, "balanceAfter": out.available}
		a, err := s.record(tx, sub, ActionPointsExpired, now, meta)
		if err != nil {
			return err
		}
		actionID = a.ID
	}
	for _, e := range append(slices.Clone(out.pre), out.post...) {
		if e.Type == ledger.Expiry {
			e.Cause.ActionID = actionID
		}
		if err := s.entry(tx, p, e, now); err != nil {
			return err
		}
	}
	return nil
}

// lotsMeta is lots as action metadata.
func lotsMeta(lots []ledger.LotPoints) []any {
	out := make([]any, 0, len(lots))
	for _, l := range lots {
		m := map[string]any{"lotId": l.LotID, "points": l.Points}
		if l.ExpiresAt != "" {
			m["expiresAt"] = l.ExpiresAt
		}
		out = append(out, m)
	}
	return out
}

// entry adds ledger entry e (numbered by apply) of award p to tx.
func (s *Service) entry(tx *ddb.Tx, p *pending, e ledger.Entry, now time.Time) error {
	e.Created = clock.Stamp(now)
	it, err := ledger.Item(s.Table, p.tenant, p.uid, p.perk, e)
	if err != nil {
		return err
	}
	tx.Add("ledger", it)
	return nil
}

// movement adds the ledger entry of a change that moved points (nothing
// for one that did not): its type, the signed points, the balance after,
// the lots it moved and its cause (the change's action and metadata).
func (s *Service) movement(tx *ddb.Tx, p *pending, kind opKind, out outcome, actionID string, meta map[string]any, now time.Time) error {
	if out.moved == 0 {
		return nil
	}
	e := ledger.Entry{Seq: out.seq, Type: entryType[kind], Points: out.moved, BalanceAfter: out.after, Lots: out.lots, Renews: out.renews, Cause: ledger.CauseOf(actionID, meta)}
	if kind == opRedeem && out.units > 1 {
		e.Units = out.units
	}
	return s.entry(tx, p, e, now)
}

// reminderOf is how long before an expiry the expiry run reminds of
// award p's lots: the tenant's setting, read with the change.
func reminderOf(p *pending) time.Duration {
	if p.reminder > 0 {
		return p.reminder
	}
	return tenant.DefaultPointsExpiringDays * 24 * time.Hour
}

// writeAward puts the write of award p's current state in tx: its
// counters and lots and the liability marker, conditional on the award
// being as read (its entry count, or its absence, and the marker's
// absence when it was read without it), and its key in the expiry run's
// index (when its lots expire); and what it changes in the perk's
// liability (a shard's Update, liability.go).
func (s *Service) writeAward(tx *ddb.Tx, p *pending, now time.Time) (int, error) {
	item, err := s.awardWrite(p, now)
	if err != nil {
		return -1, err
	}
	at, err := tx.Merge("award", s.awardItemKey(p.tenant, p.uid, p.perk), func(any) (types.TransactWriteItem, any, error) {
		return item, p, nil
	})
	if err != nil {
		return -1, err
	}
	return at, s.writeLiability(tx, p, now)
}

// awardWrite returns the write of award p's current state (see writeAward).
func (s *Service) awardWrite(p *pending, now time.Time) (types.TransactWriteItem, error) {
	lots, err := attributevalue.Marshal(append([]lot{}, p.cur.Lots...))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode lots of %s: %w", p.cur.ID, err)
	}
	drawn, err := attributevalue.Marshal(append([]draw{}, p.cur.Drawn...))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode draws of %s: %w", p.cur.ID, err)
	}
	c := change{
		set: "available = :a, granted = :g, redeemed = :r, refunded = :rf, refundable = :rb, redemptions = :n, reversed = :rv, adjusted = :ad, expired = :ex, seq = :seq, lots = :lots, drawn = :drawn, " +
			"liabilityCounted = :counted",
		values: map[string]types.AttributeValue{
			":a": num(p.cur.Available), ":g": num(p.cur.Granted), ":r": num(p.cur.Redeemed),
			":rf": num(p.cur.Refunded), ":rb": num(p.cur.Refundable), ":n": num(p.cur.Redemptions),
			":rv": num(p.cur.Reversed), ":ad": num(p.cur.Adjusted), ":ex": num(p.cur.Expired), ":seq": num(p.cur.Seq),
			":lots": lots, ":drawn": drawn, ":counted": &types.AttributeValueMemberBOOL{Value: true},
		},
	}
	if p.cur.ActivityAt != "" {
		c.set += ", activityAt = :act"
		c.values[":act"] = str(p.cur.ActivityAt)
	}
	if due := p.cur.dueAt(reminderOf(p)); due != "" {
		c.set += ", gsi2pk = :dpk, gsi2sk = :dsk"
		c.values[":dpk"], c.values[":dsk"] = str(duePK(p.tenant, p.uid)), str(dueSK(due, p.uid, p.perk))
	} else {
		c.remove = "gsi2pk, gsi2sk"
	}
	switch {
	case !p.found:
		c.condition = "attribute_not_exists(pk)"
	case p.as.Seq == 0:
		// An award stored before the ledger (no entry count yet), or one
		// whose changes so far moved no points (a grant of 0 to a new
		// award: stored with seq 0).
		c.condition = "(attribute_not_exists(seq) OR seq = :cseq) AND available = :ca AND redemptions = :cn AND refundable = :crb"
		c.values[":cseq"], c.values[":ca"], c.values[":cn"], c.values[":crb"] = num(0), num(p.as.Available), num(p.as.Redemptions), num(p.as.Refundable)
	default:
		// The entry count decides; the balance as well, so that a write
		// from outside the ledger (an older version of the code during a
		// deployment) is not overwritten either.
		c.condition = "seq = :cseq AND available = :ca"
		c.values[":cseq"], c.values[":ca"] = num(p.as.Seq), num(p.as.Available)
	}
	if p.found && !p.as.LiabilityCounted {
		// Read without the marker: this write adds the whole award to the
		// liability, unless a rebuild counted it meanwhile (read again).
		c.condition += " AND attribute_not_exists(liabilityCounted)"
	}
	return s.st().item(p.tenant, p.uid, p.perk, clock.Stamp(now), c), nil
}

// isChanged reports whether err is ErrChanged.
func isChanged(err error) bool { return errors.Is(err, ErrChanged) }
