package award

import (
	"context"
	"fmt"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// asOf returns award rec as it stood at t, from its ledger: the balance
// of its last entry at or before t and the totals of its entries up to
// it (found false when the award held nothing then: it had no entry yet).
// An award stored before the ledger (no entries) is known only from its
// last change on: as it is now when t is at or after that change, unknown
// (found false) before. A virtual award that never changed stands as it
// is.
func (s *Service) asOf(ctx context.Context, tenantID string, rec record, stored bool, t time.Time) (record, bool, error) {
	if !stored {
		return rec, true, nil
	}
	if rec.Seq == 0 {
		changed, err := time.Parse(clock.Format, rec.UpdatedAt)
		return rec, err == nil && !changed.After(t), nil
	}
	out := record{ID: rec.ID, TenantID: rec.TenantID, UserID: rec.UserID, PerkID: rec.PerkID, Created: rec.Created}
	found := false
	// The lots as the entries leave them, so that lots that expired by t
	// without an EXPIRY entry yet do not count (as reads at t did not).
	lots := replay{}
	done := func() (record, bool, error) {
		at := clock.Stamp(t)
		n := lots.expiredBy(at)
		out.Available -= n
		out.Expired += n
		for id, l := range lots {
			if l.expiresAt == "" || l.expiresAt > at {
				out.Lots = append(out.Lots, lot{ID: id, Remaining: l.remaining, ExpiresAt: l.expiresAt})
			}
		}
		return out, found, nil
	}
	in := ledger.Oldest(s.Table, tenantID, rec.UserID, rec.PerkID)
	stamp := clock.Stamp(t)
	var start ddb.Item
	for {
		items, next, err := ddb.QueryPage(ctx, s.DB, in, start, 1000, nil)
		if err != nil {
			return record{}, false, fmt.Errorf("ledger of %s: %w", rec.ID, err)
		}
		for _, it := range items {
			e, err := ledger.Decode(it)
			if err != nil {
				return record{}, false, err
			}
			// Entries are numbered in commit order; their stamps follow
			// it (to the clocks of the functions that wrote them).
			if e.Created > stamp {
				return done()
			}
			lots.apply(e)
			found = true
			out.Available, out.Seq, out.UpdatedAt = e.BalanceAfter, e.Seq, e.Created
			switch e.Type {
			case ledger.Earn:
				if e.Cause.Source != SourceInitial {
					out.Granted += e.Points
				}
			case ledger.Burn:
				out.Redeemed -= e.Points
				out.Refundable -= e.Points
				out.Redemptions += max(e.Units, 1)
			case ledger.Refund:
				out.Refunded += e.Points
				out.Refundable -= e.Points
			case ledger.Reversal:
				out.Reversed -= e.Points
			case ledger.Adjust:
				out.Adjusted += e.Points
			case ledger.Expiry:
				out.Expired -= e.Points
			}
		}
		if next == nil {
			return done()
		}
		start = next
	}
}

// replay follows an award's lots through its entries: what each holds and
// when it expires.
type replay map[string]*replayLot

type replayLot struct {
	remaining int
	expiresAt string
	activity  bool
}

// apply applies entry e's movements of lots.
func (r replay) apply(e ledger.Entry) {
	sign := 1
	if e.Points < 0 {
		sign = -1
	}
	for _, l := range e.Lots {
		cur := r[l.LotID]
		if cur == nil {
			cur = &replayLot{}
			r[l.LotID] = cur
		}
		cur.remaining += sign * l.Points
		cur.expiresAt, cur.activity = l.ExpiresAt, l.Activity
		if cur.remaining <= 0 {
			delete(r, l.LotID)
		}
	}
	if e.Renews != "" {
		for _, l := range r {
			if l.activity {
				l.expiresAt = e.Renews
			}
		}
	}
}

// expiredBy returns the points of the lots expired at stamp now.
func (r replay) expiredBy(now string) int {
	n := 0
	for _, l := range r {
		if l.expiresAt != "" && l.expiresAt <= now {
			n += l.remaining
		}
	}
	return n
}
