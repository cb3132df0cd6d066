package award

import (
	"context"
	"fmt"
	"time"

	"github.com/loyalty-platform/platform/shared/ddb"
	"github.com/loyalty-platform/platform/shared/ledger"
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
		changed, err := time.Parse(timeFormat, rec.UpdatedAt)
		return rec, err == nil && !changed.After(t), nil
	}
	out := record{ID: rec.ID, TenantID: rec.TenantID, UserID: rec.UserID, PerkID: rec.PerkID, Created: rec.Created}
	found := false
	in := ledger.Oldest(s.Table, tenantID, rec.UserID, rec.PerkID)
	stamp := t.UTC().Format(timeFormat)
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
				return out, found, nil
			}
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
			}
		}
		if next == nil {
			return out, found, nil
		}
		start = next
	}
}
