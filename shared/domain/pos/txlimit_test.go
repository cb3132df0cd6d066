package pos_test

import (
	"fmt"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestCompleteManyNewVirtualAwards completes, through HTTP, orders of many
// redemptions of never-used virtual awards with initial points: CLUB perks
// each held through a segment of its own, and global perks. Such a
// redemption stores its award with its INITIAL entry: award, INITIAL and
// BURN entries, AWARD_REDEEMED, the perk's liability shard, and for a CLUB
// perk the membership's check (the checks of one membership merge), 5 or
// 6 items, with 4 for the order (order, user check, ORDER_COMPLETED, the
// user's feed head): 18 CLUB awards make 112 items and 20 global ones 104,
// above DynamoDB's 100 (ddb.ErrTooManyItems, a 500). The completion stores
// those awards first in transactions of their own, then completes (two
// transactions, 94 and 84 items); one that fits completes in one. A second order on the same
// awards (stored now) completes in one.
func TestCompleteManyNewVirtualAwards(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := shop(t, h, "Many awards")
	const initial = 3
	tests := []struct {
		name       string
		club, glob int
		// txs is the completion's TransactWriteItems calls.
		txs int
	}{
		{"EighteenClubAwardsOnEighteenSegments", 18, 0, 2},
		{"TwentyGlobalAwards", 0, 20, 2},
		{"TenGlobalAwards", 0, 10, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid := shopper(t, h, "Many")
			var perks []string
			for i := 0; i < tt.club; i++ {
				seg := h.Do("POST", "/segments", map[string]any{"title": fmt.Sprintf("Segment %d", i), "type": "PERSISTENT"}, h.Admin()).
					Expect(t, 201, "").Map(t)["_id"].(string)
				h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{uid}}, h.Admin()).Expect(t, 200, "")
				perks = append(perks, newPerk(t, h, map[string]any{"title": fmt.Sprintf("Club %d", i), "template": "CLUB",
					"segmentId": seg, "points": map[string]any{"initial": initial}}))
			}
			for i := 0; i < tt.glob; i++ {
				perks = append(perks, newPerk(t, h, map[string]any{"title": fmt.Sprintf("Global %d", i), "isGlobal": true,
					"points": map[string]any{"initial": initial}}))
			}
			complete := func(t *testing.T) int {
				t.Helper()
				reds := make([]map[string]any, len(perks))
				for i, p := range perks {
					reds[i] = map[string]any{"awardId": uid + "-" + p, "value": 1}
				}
				oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "redemptions": reds}, h.Admin()).
					Expect(t, 201, "").Map(t)["_id"].(string)
				r, counted := h.DoCounted("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin())
				r.Expect(t, 200, "")
				return counted.Operation("DynamoDB", "TransactWriteItems")
			}
			if got := complete(t); got != tt.txs {
				t.Errorf("transactions of the first completion = %d, want %d", got, tt.txs)
			}
			if got := complete(t); got != 1 {
				t.Errorf("transactions of the second completion = %d, want 1 (the awards are stored)", got)
			}
			for _, p := range perks {
				if got := available(t, h, uid, p); got != initial-2 {
					t.Errorf("award %s: available = %d, want %d (the initial points, two redeemed)", p, got, initial-2)
				}
			}
			if got := len(actionsOf(t, h, uid, "AWARD_REDEEMED")); got != 2*len(perks) {
				t.Errorf("AWARD_REDEEMED = %d, want %d", got, 2*len(perks))
			}
		})
	}
}

// TestOrderTooLargeForOneTransaction checks that a completion needing
// more than 100 items (20 redemptions of CLUB awards, each on its own
// segment) is refused with 422 naming redemptions, and writes nothing.
func TestOrderTooLargeForOneTransaction(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := shop(t, h, "Too many")
	uid := shopper(t, h, "Club")
	var reds []map[string]any
	var perks []string
	for i := 0; i < 20; i++ {
		seg := h.Do("POST", "/segments", map[string]any{"title": fmt.Sprintf("Segment %d", i), "type": "PERSISTENT"}, h.Admin()).
			Expect(t, 201, "").Map(t)["_id"].(string)
		h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{uid}}, h.Admin()).Expect(t, 200, "")
		p := newPerk(t, h, map[string]any{"title": fmt.Sprintf("Club %d", i), "template": "CLUB", "segmentId": seg, "points": map[string]any{"initial": 3}})
		perks = append(perks, p)
		reds = append(reds, map[string]any{"awardId": uid + "-" + p, "value": 1})
	}
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "redemptions": reds}, h.Admin()).
		Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	if got := len(actionsOf(t, h, uid, "AWARD_REDEEMED")); got != 0 {
		t.Errorf("AWARD_REDEEMED = %d after the refusal, want 0", got)
	}
	if got := available(t, h, uid, perks[0]); got != 3 {
		t.Errorf("award available = %d after the refusal, want 3", got)
	}
	if st := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)["state"]; st != "OPEN" {
		t.Errorf("order state = %v, want OPEN", st)
	}
}
