package pos_test

import (
	"fmt"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// creditPoints grants points of perkID to uid through a POINTS credit.
func creditPoints(t *testing.T, h *ts.Harness, uid, perkID string, points int) {
	t.Helper()
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "POINTS", "amount": points, "perkId": perkID}, h.Admin()).Expect(t, 200, "")
}

// TestOrderWithManyRedemptions checks that an order completes whatever
// its number of redemptions: each redemption checks the same user, and a
// transaction names each item once.
func TestOrderWithManyRedemptions(t *testing.T) {
	t.Parallel()
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
			t.Parallel()
			h := ts.New(t)
			uid := shopper(t, h, "Max")
			var perks []string
			var reds []map[string]any
			for i := range tc.perks {
				p := newPerk(t, h, map[string]any{"title": fmt.Sprintf("Points %d", i)})
				creditPoints(t, h, uid, p, 10)
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
	t.Parallel()
	h := ts.New(t)
	uid, perk, txn := burnAndEarn(t, h, "Eve", 4, 5, "APP")
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
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Una")
	perk := newPerk(t, h, map[string]any{"points": map[string]any{"maxTotalRedemptions": 3}})
	award := uid + "-" + perk
	creditPoints(t, h, uid, perk, 100)
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

// TestRefundBeforeTheRuleLands checks that a refund made between an
// order's completion and its rules is not lost: the rule's grant, landing
// after the refund, has the refunded share taken back in its own
// transaction.
func TestRefundBeforeTheRuleLands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		payments     []float64
		refund       int
		wantReversed int
	}{
		{"WholeRefund", []float64{24}, 0, 24},
		{"HalfRefunded", []float64{12, 12}, 1, 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			uid := shopper(t, h, "Lou")
			loc := shop(t, h, "Late Rule Bar")
			perk := newPerk(t, h, nil)
			oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			var txns []string
			for i, p := range tc.payments {
				txns = append(txns, h.Do("POST", "/users/"+uid+"/transactions", map[string]any{
					"shortCode": fmt.Sprintf("L-%d", i), "totalPrice": p, "paymentType": "CARD_AT_POS", "orderId": oid, "locationId": loc,
				}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string))
			}
			h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
			h.WaitStreams() // the stream saw the completion while the tenant had no rule
			h.Do("PUT", "/transactions/"+txns[tc.refund]+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
			// The rule lands after the refund, as a late stream delivery
			// would apply it.
			pointsRule(t, h, loc, perk, 1)
			completed := actionsOf(t, h, uid, "ORDER_COMPLETED")
			if len(completed) != 1 {
				t.Fatalf("ORDER_COMPLETED actions = %d", len(completed))
			}
			if _, err := h.Deps.Rules.Run(t.Context(), completed[0]); err != nil {
				t.Fatalf("rules: %v", err)
			}
			if got, want := available(t, h, uid, perk), 24-tc.wantReversed; got != want {
				t.Errorf("points = %d, want %d (24 earned, %d reversed on landing)", got, want, tc.wantReversed)
			}
			o := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)
			award := uid + "-" + perk
			if o["pointsEarned"].(map[string]any)[award] != 24.0 || o["pointsReversed"].(map[string]any)[award] != float64(tc.wantReversed) {
				t.Errorf("order = earned %v, reversed %v", o["pointsEarned"], o["pointsReversed"])
			}
			if got := len(actionsOf(t, h, uid, "AWARD_REVERSED")); got != 1 {
				t.Errorf("AWARD_REVERSED actions = %d, want 1", got)
			}
		})
	}
}

// TestOrderRefundedWhileOpenEarnsNothing checks that an order completes on
// the amount not refunded: its only payment refunded while OPEN, it earns
// nothing on its totalPrice.
func TestOrderRefundedWhileOpenEarnsNothing(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Oz")
	loc := shop(t, h, "Open Refunds")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "totalPrice": 30}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	a := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "O-1", "totalPrice": 20, "paymentType": "CARD_AT_POS", "orderId": oid, "locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "O-2", "totalPrice": 10, "paymentType": "CARD_AT_POS", "orderId": oid, "locationId": loc}, h.Admin()).Expect(t, 201, "")
	h.Do("PUT", "/transactions/"+a+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
	done := h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "").Map(t)
	if done["value"] != 10.0 {
		t.Errorf("value = %v, want 10 (30 less the 20 refunded while OPEN)", done["value"])
	}
	if got := available(t, h, uid, perk); got != 10 {
		t.Errorf("points = %d, want 10", got)
	}
}

// TestRefundOfADeletedUsersPayment checks that the till can refund the
// payment of a user deleted since: the balance and the awards the order
// burned come back, the earn is reversed, and the history is kept.
func TestRefundOfADeletedUsersPayment(t *testing.T) {
	t.Parallel()
	for _, payment := range []string{"APP", "CARD_AT_POS"} {
		t.Run(payment, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			uid, _, txn := burnAndEarn(t, h, "Del", 3, 8, payment)
			h.Do("DELETE", "/users/"+uid, nil, h.Admin()).Expect(t, 204, "")
			ref := h.Do("PUT", "/transactions/"+txn+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
			if ref["pointsReversed"] != 8.0 {
				t.Errorf("refund = %v, want 8 points reversed", ref)
			}
			if payment == "APP" && (ref["balanceRestored"] != 8.0 || ref["redemptionsReturned"] != 1.0) {
				t.Errorf("refund = %v, want the balance and the redemption back", ref)
			}
			if got := len(actionsOf(t, h, uid, "TRANSACTION_REFUNDED")); got != 1 {
				t.Errorf("TRANSACTION_REFUNDED actions = %d, want 1", got)
			}
		})
	}
}

// TestBasketThatCanComplete checks that what the order create accepts,
// completion can store: a basket too large for the order and its
// ORDER_COMPLETED action is refused up front, one just inside completes.
func TestBasketThatCanComplete(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Bea")
	basket := func(title string) []map[string]any {
		var b []map[string]any
		for i := range 200 {
			b = append(b, map[string]any{"id": fmt.Sprintf("item-%03d", i), "category": strings.Repeat("c", 128), "title": title})
		}
		return b
	}
	t.Run("TooLarge", func(t *testing.T) {
		h.Do("POST", "/users/"+uid+"/orders", map[string]any{"basket": basket(strings.Repeat("𝄞", 255))}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("JustInside", func(t *testing.T) {
		oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"basket": basket(strings.Repeat("é", 180))}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
		h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	})
}

// TestAwardTotalsAddUp checks that an award's totals account for every
// change of its points: available = totalGranted - totalRedeemed +
// totalRefunded - totalReversed + totalAdjusted after each step.
func TestAwardTotalsAddUp(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	var uid, perk, txn string
	check := func(step string, wantAvailable int) {
		t.Helper()
		for _, a := range h.Do("GET", "/users/"+uid+"/pointawards", nil, h.Admin()).Expect(t, 200, "").Map(t)["awards"].([]any) {
			p := a.(map[string]any)["points"].(map[string]any)
			if a.(map[string]any)["perkId"] != perk {
				continue
			}
			n := func(k string) int { return int(p[k].(float64)) }
			if got := n("totalGranted") - n("totalRedeemed") + n("totalRefunded") - n("totalReversed") + n("totalAdjusted"); got != n("available") || n("available") != wantAvailable {
				t.Errorf("%s: points = %v: the totals give %d, want available %d", step, p, got, wantAvailable)
			}
			return
		}
		t.Errorf("%s: no award", step)
	}
	uid, perk, txn = burnAndEarn(t, h, "Tot", 4, 5, "APP")
	award := uid + "-" + perk
	check("Completed", 11)
	h.Do("PUT", "/transactions/"+txn+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
	check("Refunded", 10)
	h.Do("PUT", "/pointawards/"+award, map[string]any{"points": map[string]any{"available": 7}}, h.Admin()).Expect(t, 200, "")
	check("Set", 7)
	h.Do("POST", "/users/"+uid+"/pointawards/"+award+"/redeem", map[string]any{"valueToRedeem": 2}, h.Admin()).Expect(t, 200, "")
	check("Redeemed", 5)
}

// burnAndEarn sets up an order that both burns and earns on one award: a
// shopper with 10 points of a perk and an app balance of paid, a rule
// earning 1 point per unit at a shop, an order there redeeming burn points
// of the award, paid in full by payment and completed. It returns the
// user, the perk and the transaction.
func burnAndEarn(t *testing.T, h *ts.Harness, name string, burn int, paid float64, payment string) (uid, perk, txn string) {
	t.Helper()
	uid = shopper(t, h, name)
	loc := shop(t, h, name+"'s shop")
	perk = newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	creditPoints(t, h, uid, perk, 10)
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": paid}, h.Admin()).Expect(t, 200, "")
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "redemptions": []map[string]any{{"awardId": uid + "-" + perk, "value": burn}}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	txn = h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": name + "-1", "totalPrice": paid, "paymentType": payment, "orderId": oid, "locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	return uid, perk, txn
}
