package award

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/ddb"
)

// One unit of work writes each award once. DynamoDB refuses a transaction
// that names one item twice, and one request may change one award several
// times: an order that earns (by a rule) and burns on the same award, whose
// refund then reverses the earn and gives the burn back; a rule with two
// effects on one perk. The first change of an award in a transaction is
// written as it always is (a conditional update, read-free for redeems and
// refunds); a second change of the same award reads the award once, applies
// every change of the transaction to it in order, here, with the same rules
// as the single writes' conditions, and replaces the first write with one
// write of the result, conditional on the award being as read. A failure of
// that write means the award changed since: the caller retries.

// ErrChanged is the failure of a merged award write: the award changed
// since it was read; read again and retry.
var ErrChanged = apierr.New(apierr.Conflict, "the award was changed by another request at once; retry")

// pending is what a transaction writes of one award: the changes in the
// order they were added and, once a second change needed it, the award as
// read and as the changes leave it.
type pending struct {
	ops []op
	// read is set once the award was read: found, as (as read) and cur
	// (as the changes so far leave it).
	read    bool
	found   bool
	as, cur record
	// exists tells whether the award exists once the changes so far
	// applied.
	exists    bool
	tenant    string
	uid, perk string
}

// op is one change of an award.
type op struct {
	kind opKind
	// points is what a grant adds, a redemption or refund moves, a
	// reversal takes back.
	points int
	// units is how many redemptions a redemption counts
	// (maxTotalRedemptions counts units).
	units int
	// initial is what a virtual award (a global perk's, a CLUB or LEVEL
	// perk's) holds before it is stored; floor the points a redemption
	// must leave; max the perk's points.max (nil: none); maxR its
	// maxTotalRedemptions (0: none).
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
)

// outcome is what applying an op did.
type outcome struct {
	// granted is what a grant added (after the perk's max); taken what a
	// reversal took back; available what the award holds after.
	granted, taken, available int
}

// apply applies o to the award p.cur (found tells whether it exists yet)
// as the single writes' conditions would, or returns the error their
// failure means.
func (p *pending) apply(o op) (outcome, error) {
	r := &p.cur
	exists := p.exists
	avail := r.Available
	if !exists && o.virtual {
		avail = o.initial
	}
	var out outcome
	switch o.kind {
	case opGrant:
		next := avail + o.points
		if o.max != nil && next > *o.max {
			next = max(*o.max, avail)
		}
		out.granted = next - avail
		r.Available, r.Granted = next, r.Granted+out.granted
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
	case opRefund:
		switch {
		case !exists:
			return out, ErrNotFound
		case r.Refundable < o.points:
			return out, ErrRefundTooLarge
		}
		r.Available += o.points
		r.Refundable -= o.points
		r.Refunded += o.points
	case opReverse:
		if exists && avail > 0 && o.points > 0 {
			out.taken = min(o.points, avail)
			r.Available = avail - out.taken
			r.Reversed += out.taken
		}
	}
	if o.kind != opReverse {
		p.exists = true
	}
	out.available = r.Available
	return out, nil
}

// awardItemKey is the identity of an award in a transaction (ddb.ItemKey).
func (s *Service) awardItemKey(t, uid, perkID string) string {
	return ddb.Key(s.Table, awardKey(t, uid, perkID))
}

// pendingOf returns what tx writes of the award so far (nil for nothing).
func (s *Service) pendingOf(tx *ddb.Tx, t, uid, perkID string) (*pending, error) {
	state, ok := tx.State(s.awardItemKey(t, uid, perkID))
	if !ok {
		return nil, nil
	}
	p, _ := state.(*pending)
	if p == nil {
		return nil, fmt.Errorf("award %s: the transaction names it outside the award domain", ID(uid, perkID))
	}
	return p, nil
}

// first adds the first change of an award to tx: the single write c, and
// what it is for a later change to merge with (rec: the award as read when
// the change read it).
func (s *Service) first(tx *ddb.Tx, t, uid, perkID string, c change, now string, o op, read bool, found bool, rec record) (int, error) {
	p := &pending{ops: []op{o}, tenant: t, uid: uid, perk: perkID}
	if read {
		p.read, p.found, p.exists, p.as, p.cur = true, found, found, rec, rec
		if _, err := p.apply(o); err != nil {
			return -1, err
		}
	}
	item := s.st().item(t, uid, perkID, now, c)
	return tx.Merge("award", s.awardItemKey(t, uid, perkID), func(any) (types.TransactWriteItem, any, error) {
		return item, p, nil
	})
}

// again merges a further change o of the award p into tx: it reads the
// award if no change did yet, applies every change to it and replaces
// the award's write with one write of the result.
func (s *Service) again(ctx context.Context, tx *ddb.Tx, p *pending, o op, now string) (int, outcome, error) {
	if !p.read {
		rec, found, err := s.st().get(ctx, p.tenant, p.uid, p.perk)
		if err != nil {
			return -1, outcome{}, err
		}
		p.read, p.found, p.exists, p.as, p.cur = true, found, found, rec, rec
		for _, prev := range p.ops {
			if _, err := p.apply(prev); err != nil {
				// An earlier change no longer holds on the award as it
				// is now: it changed since that change was planned.
				return -1, outcome{}, ErrChanged
			}
		}
	}
	out, err := p.apply(o)
	if err != nil {
		return -1, outcome{}, err
	}
	p.ops = append(p.ops, o)
	c := change{
		set: "available = :a, granted = :g, redeemed = :r, refunded = :rf, refundable = :rb, redemptions = :n, reversed = :rv",
		values: map[string]types.AttributeValue{
			":a": num(p.cur.Available), ":g": num(p.cur.Granted), ":r": num(p.cur.Redeemed),
			":rf": num(p.cur.Refunded), ":rb": num(p.cur.Refundable), ":n": num(p.cur.Redemptions), ":rv": num(p.cur.Reversed),
		},
	}
	if p.found {
		c.condition = "available = :ca AND granted = :cg AND redeemed = :cr AND refunded = :crf AND redemptions = :cn"
		c.values[":ca"], c.values[":cg"], c.values[":cr"] = num(p.as.Available), num(p.as.Granted), num(p.as.Redeemed)
		c.values[":crf"], c.values[":cn"] = num(p.as.Refunded), num(p.as.Redemptions)
	} else {
		c.condition = "attribute_not_exists(pk)"
	}
	item := s.st().item(p.tenant, p.uid, p.perk, now, c)
	at, err := tx.Merge("award", s.awardItemKey(p.tenant, p.uid, p.perk), func(any) (types.TransactWriteItem, any, error) {
		return item, p, nil
	})
	return at, out, err
}

// merged reports whether the award's write in tx is a merged one (its
// failure means ErrChanged).
func merged(p *pending) bool { return p != nil && len(p.ops) > 1 }

// isChanged reports whether err is ErrChanged.
func isChanged(err error) bool { return errors.Is(err, ErrChanged) }
