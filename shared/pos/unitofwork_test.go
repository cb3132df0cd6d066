package pos_test

import (
	"fmt"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// credit grants points of perkID to uid through a POINTS credit.
func credit(t *testing.T, h *ts.Harness, uid, perkID string, points int) {
	t.Helper()
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "POINTS", "amount": points, "perkId": perkID}, h.Admin()).Expect(t, 200, "")
}

// TestOrderWithManyRedemptions checks that an order completes whatever
// its number of redemptions: each redemption checks the same user, and a
// transaction names each item once.
func TestOrderWithManyRedemptions(t *testing.T) {
	tests := []struct {
		name  string
		perks int
	}{
		{"TwoRedemptions", 2},
		{"ThreeRedemptions", 3},
		{"TwentyRedemptions", 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := ts.New(t)
			uid := shopper(t, h, "Max")
			var perks []string
			var reds []map[string]any
			for i := range tc.perks {
				p := newPerk(t, h, map[string]any{"title": fmt.Sprintf("Points %d", i)})
				credit(t, h, uid, p, 10)
				perks = append(perks, p)
				reds = append(reds, map[string]any{"awardId": uid + "-" + p, "value": 1 + i%3, "quantity": 2})
			}
			oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"redemptions": reds}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			done := h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "").Map(t)
			if done["state"] != "COMPLETED" {
				t.Fatalf("order = %v", done)
			}
			for i, p := range perks {
				if got, want := available(t, h, uid, p), 10-2*(1+i%3); got != want {
					t.Errorf("award %d holds %d, want %d", i, got, want)
				}
			}
			if got := len(actionsOf(t, h, uid, "AWARD_REDEEMED")); got != tc.perks {
				t.Errorf("AWARD_REDEEMED actions = %d, want %d", got, tc.perks)
			}
		})
	}
}

// TestAppRefundOfAnOrderThatEarnedAndBurnedOneAward checks that refunding
// an APP payment of an order that both burned an award and earned on it
// (by a rule) gives the burn back and takes the earn back in one write of
// the award.
func TestAppRefundOfAnOrderThatEarnedAndBurnedOneAward(t *testing.T) {
	h := ts.New(t)
	uid := shopper(t, h, "Eve")
	loc := shop(t, h, "Covent Garden")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	award := uid + "-" + perk
	credit(t, h, uid, perk, 10)
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": 5}, h.Admin()).Expect(t, 200, "")
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "redemptions": []map[string]any{{"awardId": award, "value": 4}}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	txn := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "E-1", "totalPrice": 5, "paymentType": "APP", "orderId": oid, "locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	if got := available(t, h, uid, perk); got != 11 {
		t.Fatalf("points after the order = %d, want 11 (10 - 4 burned + 5 earned)", got)
	}
	ref := h.Do("PUT", "/transactions/"+txn+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ref["redemptionsReturned"] != 1.0 || ref["pointsReversed"] != 5.0 || ref["pointsNotReversed"] != 0.0 || ref["balanceRestored"] != 5.0 {
		t.Errorf("refund = %v", ref)
	}
	if got := available(t, h, uid, perk); got != 10 {
		t.Errorf("points after the refund = %d, want 10", got)
	}
	if got := balance(t, h, uid); got != 5 {
		t.Errorf("balance after the refund = %v, want 5", got)
	}
	for typ, want := range map[string]int{"AWARD_REFUNDED": 1, "AWARD_REVERSED": 1} {
		if got := len(actionsOf(t, h, uid, typ)); got != want {
			t.Errorf("%s actions = %d, want %d", typ, got, want)
		}
	}
	h.Do("PUT", "/transactions/"+txn+"?refund=true", nil, h.Admin()).Expect(t, 409, "CONFLICT")
}

// TestMaxTotalRedemptionsCountsUnits checks that a perk's
// maxTotalRedemptions counts units: one order line of quantity 50 is 50
// redemptions.
func TestMaxTotalRedemptionsCountsUnits(t *testing.T) {
	h := ts.New(t)
	uid := shopper(t, h, "Una")
	perk := newPerk(t, h, map[string]any{"points": map[string]any{"maxTotalRedemptions": 3}})
	award := uid + "-" + perk
	credit(t, h, uid, perk, 100)
	order := func(qty int) string {
		return h.Do("POST", "/users/"+uid+"/orders", map[string]any{"redemptions": []map[string]any{{"awardId": award, "value": 1, "quantity": qty}}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	}
	t.Run("QuantityAboveTheLimit", func(t *testing.T) {
		h.Do("PUT", "/orders/"+order(50), map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 422, "REDEMPTION_LIMIT_REACHED")
		if got := available(t, h, uid, perk); got != 100 {
			t.Errorf("points = %d, want 100 (nothing burned)", got)
		}
	})
	t.Run("QuantityWithinTheLimit", func(t *testing.T) {
		h.Do("PUT", "/orders/"+order(2), map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	})
	t.Run("QuantityPastWhatIsLeft", func(t *testing.T) {
		h.Do("PUT", "/orders/"+order(2), map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 422, "REDEMPTION_LIMIT_REACHED")
	})
	t.Run("TheLastUnit", func(t *testing.T) {
		h.Do("POST", "/users/"+uid+"/pointawards/"+award+"/redeem", map[string]any{"valueToRedeem": 1}, h.Admin()).Expect(t, 200, "")
		h.Do("POST", "/users/"+uid+"/pointawards/"+award+"/redeem", map[string]any{"valueToRedeem": 1}, h.Admin()).Expect(t, 422, "REDEMPTION_LIMIT_REACHED")
	})
	if got := available(t, h, uid, perk); got != 97 {
		t.Errorf("points = %d, want 97", got)
	}
}
