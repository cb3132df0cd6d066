package award

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// Points live in lots. Every earn (a grant, a rule's grant, an import
// row, a virtual award's initial points, an admin's increase) is a lot
// of its own, with the day it was earned and, under the perk's expiry
// policy then, the instant it expires. A burn (a redemption), a reversal
// and an admin's decrease take from the lots that expire first (lots that
// never expire last; then the oldest earned), and the ledger entry names
// the lots it drew from; a reversal takes first from the lots its order
// earned. A refund of a burn gives the points back to the lots the
// award's latest burns not yet refunded drew from (last drawn, first
// given back); a lot that expired meanwhile stays expired, so the points
// given back to it expire at once (an EXPIRY entry follows the REFUND).
//
// The award keeps its lots that still hold points and, for refunds, the
// draws of its burns not yet refunded, so that one read of the award is
// all a change needs. An award holds at most maxLots lots: beyond that a
// new earn joins the lot that expires with it (or the one that expires
// next after it, or the last one), so an award's item stays small. An
// award stored before lots existed holds its points in one lot that never
// expires (<awardId>.0).

// maxLots bounds the lots (and the draws) one award keeps.
const maxLots = 400

// lot is a parcel of earned points.
type lot struct {
	// ID is the id of the ledger entry that earned it: <awardId>.<seq>.
	ID        string `dynamodbav:"id"`
	Points    int    `dynamodbav:"points"`
	Remaining int    `dynamodbav:"remaining"`
	EarnedAt  string `dynamodbav:"earnedAt"`
	// ExpiresAt is when the lot expires ("": never).
	ExpiresAt string `dynamodbav:"expiresAt,omitempty"`
	// Activity tells that the lot expires with the award's activity
	// (AFTER_ACTIVITY): each earn or burn moves its expiry.
	Activity bool   `dynamodbav:"activity,omitempty"`
	OrderID  string `dynamodbav:"orderId,omitempty"`
	// Reminded tells that POINTS_EXPIRING was recorded for the lot's
	// current expiry.
	Reminded bool `dynamodbav:"reminded,omitempty"`
}

// draw is what a burn not yet refunded took from a lot.
type draw struct {
	Lot       string `dynamodbav:"lot"`
	Points    int    `dynamodbav:"points"`
	EarnedAt  string `dynamodbav:"earnedAt"`
	ExpiresAt string `dynamodbav:"expiresAt,omitempty"`
	Activity  bool   `dynamodbav:"activity,omitempty"`
	// OrderID is the order whose rules earned the lot: a lot given back
	// whole keeps it, so that a reversal of the order's earn still takes
	// it first.
	OrderID string `dynamodbav:"orderId,omitempty"`
}

// expired reports whether l has expired at stamp now.
func (l lot) expired(now string) bool { return l.ExpiresAt != "" && l.ExpiresAt <= now }

// spendOrder orders lots as burns take them: the first to expire first,
// those that never expire last, then the oldest earned.
func spendOrder(a, b lot) int {
	ea, eb := a.ExpiresAt, b.ExpiresAt
	if ea == "" {
		ea = "~"
	}
	if eb == "" {
		eb = "~"
	}
	return cmp.Or(cmp.Compare(ea, eb), cmp.Compare(a.EarnedAt, b.EarnedAt), cmp.Compare(a.ID, b.ID))
}

// clone returns a copy of r whose lots and draws can change.
func (r record) clone() record {
	r.Lots = slices.Clone(r.Lots)
	r.Drawn = slices.Clone(r.Drawn)
	return r
}

// reconcile makes an award read from the table hold its points in lots:
// points not in any lot (an award stored before lots existed) are one lot
// that never expires, <awardId>.0, and so are its refundable points'
// draws.
func (r *record) reconcile() {
	sum := 0
	for _, l := range r.Lots {
		sum += l.Remaining
	}
	if d := r.Available - sum; d > 0 {
		i := slices.IndexFunc(r.Lots, func(l lot) bool { return l.ID == r.ID+".0" })
		if i < 0 {
			r.Lots = append(r.Lots, lot{ID: r.ID + ".0", EarnedAt: r.Created})
			i = len(r.Lots) - 1
		}
		r.Lots[i].Points += d
		r.Lots[i].Remaining += d
	}
	drawn := 0
	for _, d := range r.Drawn {
		drawn += d.Points
	}
	if d := r.Refundable - drawn; d > 0 {
		r.Drawn = append([]draw{{Lot: r.ID + ".0", Points: d, EarnedAt: r.Created}}, r.Drawn...)
	}
}

// expire removes the lots expired at now and returns the points they held
// and what came from each.
func (r *record) expire(now string) (int, []ledger.LotPoints) {
	n := 0
	var from []ledger.LotPoints
	r.Lots = slices.DeleteFunc(r.Lots, func(l lot) bool {
		if !l.expired(now) || l.Remaining <= 0 {
			return false
		}
		n += l.Remaining
		from = append(from, ledger.LotPoints{LotID: l.ID, Points: l.Remaining, ExpiresAt: l.ExpiresAt})
		return true
	})
	r.Available -= n
	r.Expired += n
	return n, from
}

// take takes points from the lots in spend order (lots of orderID first
// when given) and returns what came from each. The caller checked that
// the lots hold them.
func (r *record) take(points int, orderID string) []ledger.LotPoints {
	order := slices.Clone(r.Lots)
	// sort.SliceStable rather than slices.SortStableFunc: a generic sort of
	// lots compiles a dozen functions, each named after the lot struct's
	// whole shape (about 23 KB of every function that changes awards; see
	// README on function sizes). spendOrder is a total order, so the
	// result is the same.
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if orderID != "" && (a.OrderID == orderID) != (b.OrderID == orderID) {
			return a.OrderID == orderID
		}
		return spendOrder(a, b) < 0
	})
	var from []ledger.LotPoints
	left := points
	for _, o := range order {
		if left == 0 {
			break
		}
		i := slices.IndexFunc(r.Lots, func(l lot) bool { return l.ID == o.ID })
		t := min(left, r.Lots[i].Remaining)
		if t <= 0 {
			continue
		}
		r.Lots[i].Remaining -= t
		left -= t
		from = append(from, ledger.LotPoints{LotID: o.ID, Points: t, ExpiresAt: o.ExpiresAt})
	}
	r.Lots = slices.DeleteFunc(r.Lots, func(l lot) bool { return l.Remaining <= 0 })
	return from
}

// drew records a burn's draws, for its refund: a lot drawn again moves
// to the end (given back first).
func (r *record) drew(from []ledger.LotPoints, lots map[string]lot) {
	for _, f := range from {
		d := draw{Lot: f.LotID, Points: f.Points, ExpiresAt: f.ExpiresAt}
		if l, ok := lots[f.LotID]; ok {
			d.EarnedAt, d.Activity, d.OrderID = l.EarnedAt, l.Activity, l.OrderID
		}
		if i := slices.IndexFunc(r.Drawn, func(x draw) bool { return x.Lot == f.LotID }); i >= 0 {
			d.Points += r.Drawn[i].Points
			r.Drawn = slices.Delete(r.Drawn, i, i+1)
		}
		r.Drawn = append(r.Drawn, d)
	}
	for len(r.Drawn) > maxLots {
		// The oldest draw joins the next: its refund goes to that lot.
		r.Drawn[1].Points += r.Drawn[0].Points
		r.Drawn = r.Drawn[1:]
	}
}

// giveBack returns points to the lots the latest draws came from (the
// refund of a burn) and returns what went to each.
func (r *record) giveBack(points int, activityExpiry string) []ledger.LotPoints {
	var to []ledger.LotPoints
	left := points
	for left > 0 && len(r.Drawn) > 0 {
		d := &r.Drawn[len(r.Drawn)-1]
		t := min(left, d.Points)
		d.Points -= t
		left -= t
		i := slices.IndexFunc(r.Lots, func(l lot) bool { return l.ID == d.Lot })
		if i < 0 {
			exp := d.ExpiresAt
			if d.Activity && activityExpiry != "" {
				exp = activityExpiry
			}
			r.Lots = append(r.Lots, lot{ID: d.Lot, EarnedAt: d.EarnedAt, ExpiresAt: exp, Activity: d.Activity, OrderID: d.OrderID})
			i = len(r.Lots) - 1
		}
		r.Lots[i].Remaining += t
		r.Lots[i].Points = max(r.Lots[i].Points, r.Lots[i].Remaining)
		to = append(to, ledger.LotPoints{LotID: d.Lot, Points: t, ExpiresAt: r.Lots[i].ExpiresAt})
		if d.Points == 0 {
			r.Drawn = r.Drawn[:len(r.Drawn)-1]
		}
	}
	if left > 0 {
		// Refundable points without a draw: the award's lot of points
		// stored before lots existed.
		id := r.ID + ".0"
		i := slices.IndexFunc(r.Lots, func(l lot) bool { return l.ID == id })
		if i < 0 {
			r.Lots = append(r.Lots, lot{ID: id, EarnedAt: r.Created})
			i = len(r.Lots) - 1
		}
		r.Lots[i].Remaining += left
		r.Lots[i].Points = max(r.Lots[i].Points, r.Lots[i].Remaining)
		to = append(to, ledger.LotPoints{LotID: id, Points: left})
	}
	return to
}

// addLot adds an earned lot and returns the id of the lot that holds it
// (the lot it joined when the award holds maxLots lots).
func (r *record) addLot(l lot) string {
	if len(r.Lots) < maxLots {
		r.Lots = append(r.Lots, l)
		return l.ID
	}
	best := -1
	for i, o := range r.Lots {
		switch {
		case o.ExpiresAt == l.ExpiresAt && o.Activity == l.Activity:
			best = i
		case best >= 0 && r.Lots[best].ExpiresAt == l.ExpiresAt:
		case l.ExpiresAt != "" && (o.ExpiresAt == "" || o.ExpiresAt > l.ExpiresAt):
			// A lot that expires later: the earn keeps at least its own
			// expiry.
			if best < 0 || spendOrder(o, r.Lots[best]) < 0 {
				best = i
			}
		}
	}
	if best < 0 {
		best = len(r.Lots) - 1
		for i, o := range r.Lots {
			if spendOrder(o, r.Lots[best]) > 0 {
				best = i
			}
		}
	}
	r.Lots[best].Points += l.Points
	r.Lots[best].Remaining += l.Remaining
	return r.Lots[best].ID
}

// renew moves the expiry of the award's AFTER_ACTIVITY lots to exp (an
// earn or a burn at at under that policy).
func (r *record) renew(at, exp string) {
	if at > r.ActivityAt {
		r.ActivityAt = at
	}
	for i := range r.Lots {
		if r.Lots[i].Activity && r.Lots[i].ExpiresAt != exp {
			r.Lots[i].ExpiresAt, r.Lots[i].Reminded = exp, false
		}
	}
}

// at returns the award as a read at now sees it: without the lots that
// expired (whether or not the expiry run wrote their EXPIRY entries yet).
func (r record) at(now time.Time) record {
	if len(r.Lots) == 0 {
		return r
	}
	r = r.clone()
	r.expire(clock.Stamp(now))
	return r
}

// Expiring is points of an award that expire at one instant.
type Expiring struct {
	Points    int    `json:"points"`
	ExpiresAt string `json:"expiresAt"`
}

// expiring returns the award's next n expiries (points by instant).
func (r record) expiring(n int) []Expiring {
	by := map[string]int{}
	for _, l := range r.Lots {
		if l.ExpiresAt != "" && l.Remaining > 0 {
			by[l.ExpiresAt] += l.Remaining
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	})
	out := []Expiring{}
	for _, k := range keys[:min(n, len(keys))] {
		out = append(out, Expiring{Points: by[k], ExpiresAt: k})
	}
	return out
}

// dueAt is when the expiry run next has work on the award: the earliest
// expiry of its lots, or reminder days before an expiry not yet reminded
// ("": none).
func (r record) dueAt(reminder time.Duration) string {
	due := ""
	for _, l := range r.Lots {
		if l.ExpiresAt == "" || l.Remaining <= 0 {
			continue
		}
		at := l.ExpiresAt
		if !l.Reminded {
			if t, err := time.Parse(clock.Format, l.ExpiresAt); err == nil {
				at = clock.Stamp(t.Add(-reminder))
			}
		}
		if due == "" || at < due {
			due = at
		}
	}
	return due
}

// lotFor returns a new lot of points earned at earned by change seq of
// award r, expiring as policy says (in zone).
func lotFor(r *record, seq, points int, earned time.Time, policy *perk.Expiry, zone *time.Location, orderID string) lot {
	l := lot{ID: fmt.Sprintf("%s.%d", r.ID, seq), Points: points, Remaining: points, EarnedAt: clock.Stamp(earned), OrderID: orderID}
	if zone == nil {
		zone = time.UTC
	}
	if _, ok := policy.Activity(); ok {
		l.Activity = true
		at := earned
		if last, err := time.Parse(clock.Format, r.ActivityAt); err == nil && last.After(at) {
			at = last
		}
		if exp, ok := policy.ActivityExpiry(at, zone); ok {
			l.ExpiresAt = clock.Stamp(exp)
		}
		return l
	}
	if exp, ok := policy.LotExpiry(earned, zone); ok {
		l.ExpiresAt = clock.Stamp(exp)
	}
	return l
}
