package award

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/ddb"
	"github.com/loyalty-platform/platform/shared/ledger"
	"github.com/loyalty-platform/platform/shared/perk"
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
	// ops counts the changes; entries the ledger entries they wrote.
	ops, entries int
	tenant       string
	uid, perk    string
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
}

type opKind int

const (
	opGrant opKind = iota + 1
	opRedeem
	opRefund
	opReverse
	opSet
)

// entryType is the ledger entry type of each kind of change.
var entryType = map[opKind]string{
	opGrant: ledger.Earn, opRedeem: ledger.Burn, opRefund: ledger.Refund, opReverse: ledger.Reversal, opSet: ledger.Adjust,
}

// outcome is what applying an op did.
type outcome struct {
	// granted is what a grant added (after the perk's max); taken what a
	// reversal took back; moved the signed change of available (0: no
	// movement, no entry); available what the award holds after.
	granted, taken, moved, available int
	// units is how many redemptions a redemption counted.
	units int
	// initial is the EARN entry of a virtual award's initial points that
	// the change stores (0: none).
	initial int
}

// apply applies o to p.cur as the award's rules say, or returns the
// error that refuses it.
func (p *pending) apply(o op) (outcome, error) {
	r := &p.cur
	exists := p.exists
	avail := r.Available
	var out outcome
	if !exists && o.virtual {
		avail = o.initial
	}
	switch o.kind {
	case opGrant:
		next := avail + o.points
		if limit := ceiling(o.max); next > limit {
			next = max(limit, avail)
		}
		out.granted = next - avail
		r.Granted += out.granted
		out.moved = next - avail
		r.Available = next
	case opRedeem:
		switch {
		case !exists && !o.virtual:
			return out, ErrNotFound
		case o.maxR > 0 && r.Redemptions+o.units > o.maxR:
			return out, ErrRedemptionLimit
		case avail < o.floor+o.points:
			return out, ErrInsufficient
		}
		r.Available = avail - o.points
		r.Refundable += o.points
		r.Redeemed += o.points
		r.Redemptions += o.units
		out.moved, out.units = -o.points, o.units
	case opRefund:
		switch {
		case !exists:
			return out, ErrNotFound
		case r.Refundable < o.points:
			return out, ErrRefundTooLarge
		}
		r.Available = avail + o.points
		r.Refundable -= o.points
		r.Refunded += o.points
		out.moved = o.points
	case opReverse:
		if !exists || avail <= 0 || o.points <= 0 {
			out.available = avail
			return out, nil
		}
		out.taken = min(o.points, avail)
		r.Available = avail - out.taken
		r.Reversed += out.taken
		out.moved = -out.taken
	case opSet:
		if !exists && !o.virtual {
			return out, ErrNotFound
		}
		out.moved = o.points - avail
		r.Adjusted += out.moved
		r.Available = o.points
	}
	if !exists && o.virtual && o.initial != 0 {
		out.initial = o.initial
	}
	p.exists = true
	out.available = r.Available
	return out, nil
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
// result (replacing an earlier write of it in tx), with the ledger entry
// of a virtual award's initial points when this change stores it. It
// returns the award's index in tx, what o did and the award's pending
// state, for the change's own entry (entry).
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
			rec = record{ID: ID(uid, perkID), TenantID: t, UserID: uid, PerkID: perkID, Created: stamp(now)}
		}
		p = &pending{found: found, exists: found, as: rec, cur: rec, tenant: t, uid: uid, perk: perkID}
	}
	out, err := p.apply(o)
	if err != nil {
		return -1, outcome{}, nil, err
	}
	p.ops++
	if out.initial != 0 {
		e := ledger.Entry{Type: ledger.Earn, Points: out.initial, BalanceAfter: out.initial, Cause: ledger.Cause{Source: SourceInitial}}
		if err := s.entry(tx, p, e, now); err != nil {
			return -1, outcome{}, nil, err
		}
	}
	if out.moved != 0 {
		// The change's own entry comes next (entry): the award's count
		// includes it.
		p.cur.Seq = p.as.Seq + p.entries + 1
	} else {
		p.cur.Seq = p.as.Seq + p.entries
	}
	at, err := s.writeAward(tx, p, now)
	return at, out, p, err
}

// entry adds to tx the next ledger entry of award p.
func (s *Service) entry(tx *ddb.Tx, p *pending, e ledger.Entry, now time.Time) error {
	p.entries++
	e.Seq = p.as.Seq + p.entries
	e.Created = stamp(now)
	it, err := ledger.Item(s.Table, p.tenant, p.uid, p.perk, e)
	if err != nil {
		return err
	}
	tx.Add("ledger", it)
	return nil
}

// movement adds the ledger entry of a change that moved points (nothing
// for one that did not): its type, the signed points, the balance after
// and its cause (the change's action and metadata).
func (s *Service) movement(tx *ddb.Tx, p *pending, kind opKind, out outcome, actionID string, meta map[string]any, now time.Time) error {
	if out.moved == 0 {
		return nil
	}
	e := ledger.Entry{Type: entryType[kind], Points: out.moved, BalanceAfter: out.available, Cause: ledger.CauseOf(actionID, meta)}
	if kind == opRedeem && out.units > 1 {
		e.Units = out.units
	}
	return s.entry(tx, p, e, now)
}

// writeAward puts the write of award p's current state in tx: its
// counters, conditional on the award being as read (its entry count, or
// its absence).
func (s *Service) writeAward(tx *ddb.Tx, p *pending, now time.Time) (int, error) {
	c := change{
		set: "available = :a, granted = :g, redeemed = :r, refunded = :rf, refundable = :rb, redemptions = :n, reversed = :rv, adjusted = :ad, seq = :seq",
		values: map[string]types.AttributeValue{
			":a": num(p.cur.Available), ":g": num(p.cur.Granted), ":r": num(p.cur.Redeemed),
			":rf": num(p.cur.Refunded), ":rb": num(p.cur.Refundable), ":n": num(p.cur.Redemptions),
			":rv": num(p.cur.Reversed), ":ad": num(p.cur.Adjusted), ":seq": num(p.cur.Seq),
		},
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
	item := s.st().item(p.tenant, p.uid, p.perk, stamp(now), c)
	return tx.Merge("award", s.awardItemKey(p.tenant, p.uid, p.perk), func(any) (types.TransactWriteItem, any, error) {
		return item, p, nil
	})
}

// isChanged reports whether err is ErrChanged.
func isChanged(err error) bool { return errors.Is(err, ErrChanged) }
