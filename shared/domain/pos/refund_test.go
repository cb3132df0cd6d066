package pos_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestRefundShares refunds the transactions of a completed order one by
// one: each takes back the share of the earned points its money is of
// what was paid, the order's totals follow, and the last takes back all.
func TestRefundShares(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Sam")
	loc := shop(t, h, "Share Street")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	awardID := uid + "-" + perk
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": 20}, h.Admin()).Expect(t, 200, "")

	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	txns := map[string]string{}
	for _, p := range []struct {
		code, payment string
		price         float64
	}{{"S-1", "CARD_AT_POS", 30}, {"S-2", "CARD_AT_POS", 50}, {"S-3", "APP", 20}} {
		txns[p.code] = h.Do("POST", "/users/"+uid+"/transactions", map[string]any{
			"shortCode": p.code, "totalPrice": p.price, "paymentType": p.payment, "orderId": oid, "locationId": loc,
		}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	}
	done := h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "").Map(t)
	// The completion's answer already shows what the rules earned.
	if got := done["pointsEarned"].(map[string]any)[awardID]; got != 100.0 {
		t.Fatalf("pointsEarned in the completion's answer = %v, want 100 (order %v)", got, done)
	}
	if done["value"] != 100.0 {
		t.Fatalf("value = %v, want 100", done["value"])
	}

	for _, step := range []struct {
		name                          string
		code                          string
		wantReversed, wantAvailable   int
		wantTotal, wantRefundedTotal  float64
		wantBalanceRestored, wantBase float64
	}{
		{"ThirtyOfHundred", "S-1", 30, 70, 70, 30, 0, 0},
		{"AppTwentyMore", "S-3", 20, 50, 50, 50, 20, 20},
		{"LastTakesTheRest", "S-2", 50, 0, 0, 100, 0, 20},
	} {
		t.Run(step.name, func(t *testing.T) {
			ref := h.Do("PUT", "/transactions/"+txns[step.code]+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
			if got := int(ref["pointsReversed"].(float64)); got != step.wantReversed {
				t.Errorf("pointsReversed = %d, want %d", got, step.wantReversed)
			}
			if got := ref["balanceRestored"].(float64); got != step.wantBalanceRestored {
				t.Errorf("balanceRestored = %v, want %v", got, step.wantBalanceRestored)
			}
			if got := available(t, h, uid, perk); got != step.wantAvailable {
				t.Errorf("available = %d, want %d", got, step.wantAvailable)
			}
			o := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if o["transactionsTotal"] != step.wantTotal || o["refundedTotal"] != step.wantRefundedTotal {
				t.Errorf("order totals = %v / %v, want %v / %v", o["transactionsTotal"], o["refundedTotal"], step.wantTotal, step.wantRefundedTotal)
			}
			if got := balance(t, h, uid); got != step.wantBase {
				t.Errorf("app balance = %v, want %v", got, step.wantBase)
			}
		})
	}
	o := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got := o["pointsReversed"].(map[string]any)[awardID]; got != 100.0 {
		t.Errorf("order pointsReversed = %v, want 100", got)
	}
}

// TestRefundRoundsDown checks that partial refunds round the points they
// take back down and that the refunds together take back exactly what
// was earned.
func TestRefundRoundsDown(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Ron")
	loc := shop(t, h, "Round Road")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, h.Do("POST", "/users/"+uid+"/transactions", map[string]any{
			"shortCode": fmt.Sprintf("RR-%d", i), "totalPrice": 3.33, "paymentType": "CASH_AT_POS", "orderId": oid,
		}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string))
	}
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	if got := available(t, h, uid, perk); got != 9 { // 9.99 -> 9
		t.Fatalf("earned %d, want 9", got)
	}
	var got []int
	for _, id := range ids {
		got = append(got, int(h.Do("PUT", "/transactions/"+id+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)["pointsReversed"].(float64)))
	}
	if want := []int{3, 3, 3}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reversed per refund = %v, want %v", got, want)
	}
	if left := available(t, h, uid, perk); left != 0 {
		t.Errorf("left after refunding everything = %d, want 0", left)
	}
}

// TestRefundOnOpenOrder refunds a transaction before its order completes:
// the order completes on what is left and earns on that.
func TestRefundOnOpenOrder(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Ola")
	loc := shop(t, h, "Open Lane")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	first := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "OO-1", "totalPrice": 40, "paymentType": "CARD", "orderId": oid}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "OO-2", "totalPrice": 60, "paymentType": "CARD", "orderId": oid}, h.Admin()).Expect(t, 201, "")
	ref := h.Do("PUT", "/transactions/"+first+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ref["pointsReversed"] != 0.0 {
		t.Errorf("a refund before completion reversed %v", ref["pointsReversed"])
	}
	done := h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "").Map(t)
	if done["value"] != 60.0 || done["refundedTotal"] != 40.0 || done["transactionCount"] != 2.0 {
		t.Errorf("completed order = value %v refundedTotal %v transactionCount %v", done["value"], done["refundedTotal"], done["transactionCount"])
	}
	if got := available(t, h, uid, perk); got != 60 {
		t.Errorf("earned %d, want 60", got)
	}
}

// TestOrderValue checks which value an order completes on: totalPrice,
// else the value the POS gave, else the sum of its transactions.
func TestOrderValue(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Val")
	loc := shop(t, h, "Value Vale")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	for _, c := range []struct {
		name string
		body map[string]any
		paid float64
		want float64
	}{
		{"TotalPriceWins", map[string]any{"totalPrice": 12, "value": 30}, 20, 12},
		{"ValueBeforeTransactions", map[string]any{"value": 30}, 20, 30},
		{"TransactionsOtherwise", map[string]any{}, 20, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := map[string]any{"locationId": loc}
			for k, v := range c.body {
				body[k] = v
			}
			o := h.Do("POST", "/users/"+uid+"/orders", body, h.Admin()).Expect(t, 201, "").Map(t)
			oid := o["_id"].(string)
			h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "V-" + c.name, "totalPrice": c.paid, "paymentType": "CASH", "orderId": oid}, h.Admin()).Expect(t, 201, "")
			before := available(t, h, uid, perk)
			done := h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "").Map(t)
			if done["value"] != c.want {
				t.Errorf("value = %v, want %v", done["value"], c.want)
			}
			if got := available(t, h, uid, perk) - before; got != int(c.want) {
				t.Errorf("earned %d, want %v", got, c.want)
			}
		})
	}
}

// TestRefundAfterRedemptionRefunded gives an order's redemption back
// through the award endpoint first: the APP refund then gives back
// nothing more.
func TestRefundAfterRedemptionRefunded(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Dee")
	perk := newPerk(t, h, nil)
	award := uid + "-" + perk
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "POINTS", "amount": 10, "perkId": perk}, h.Admin()).Expect(t, 200, "")
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": 5}, h.Admin()).Expect(t, 200, "")
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"redemptions": []map[string]any{{"awardId": award, "value": 4}}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	txn := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "D-1", "totalPrice": 5, "paymentType": "APP", "orderId": oid}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	h.Do("POST", "/users/"+uid+"/pointawards/"+award+"/refund", map[string]any{"value": 4}, h.Admin()).Expect(t, 200, "")
	if got := available(t, h, uid, perk); got != 10 {
		t.Fatalf("points after the award refund = %d, want 10", got)
	}
	ref := h.Do("PUT", "/transactions/"+txn+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ref["redemptionsReturned"] != 0.0 || ref["balanceRestored"] != 5.0 {
		t.Errorf("refund = %v", ref)
	}
	if got := available(t, h, uid, perk); got != 10 {
		t.Errorf("points after the APP refund = %d, want 10 (not given back twice)", got)
	}
}

// TestReversalTakesOrderLotsGivenBack checks that a lot an order earned
// keeps its order when a burn took it whole and a refund of the burn gave
// it back: the refund of the order's transaction takes that lot back, not
// an older lot that burns would take first.
func TestReversalTakesOrderLotsGivenBack(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Lot")
	loc := shop(t, h, "Lot Lane")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	award := uid + "-" + perk
	// An older lot of 10 (a credit), then the order's lot of 10.
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "POINTS", "amount": 10, "perkId": perk}, h.Admin()).Expect(t, 200, "")
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	txn := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{
		"shortCode": "L-1", "totalPrice": 10, "paymentType": "CARD_AT_POS", "orderId": oid, "locationId": loc,
	}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	lotsOf := func() []string {
		t.Helper()
		var out []string
		for _, x := range h.Do("GET", "/users/"+uid+"/pointawards/"+award+"/ledger", nil, h.Admin()).Expect(t, 200, "").Map(t)["lots"].([]any) {
			l := x.(map[string]any)
			out = append(out, fmt.Sprintf("%v:%v", l["lotId"], l["remaining"]))
		}
		return out
	}
	before := lotsOf()
	if len(before) != 2 {
		t.Fatalf("lots before = %v, want the credit's and the order's", before)
	}
	// Both lots burnt whole, then given back.
	h.Do("POST", "/users/"+uid+"/pointawards/"+award+"/redeem", map[string]any{"valueToRedeem": 20}, h.Admin()).Expect(t, 200, "")
	h.Do("POST", "/users/"+uid+"/pointawards/"+award+"/refund", map[string]any{"value": 20}, h.Admin()).Expect(t, 200, "")
	if got := lotsOf(); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("lots given back = %v, want %v", got, before)
	}
	ref := h.Do("PUT", "/transactions/"+txn+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ref["pointsReversed"] != 10.0 {
		t.Fatalf("pointsReversed = %v, want 10", ref["pointsReversed"])
	}
	if got, want := lotsOf(), before[:1]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lots after the reversal = %v, want the credit's alone %v (the order's lot taken back)", got, want)
	}
}

// TestRefundLandsWhileRuleGrants refunds a transaction of an order while
// the rule's grant on the order is being prepared (after the POS read the
// order to record the points earned, before the grant's transaction
// commits): the grant reads the order again and takes the refunded share
// back at once, in the completion's own request, which answers it.
func TestRefundLandsWhileRuleGrants(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Race")
	loc := shop(t, h, "Race Road")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)
	award := uid + "-" + perk
	oid := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	var txns []string
	for i, price := range []float64{10, 30} {
		txns = append(txns, h.Do("POST", "/users/"+uid+"/transactions", map[string]any{
			"shortCode": fmt.Sprintf("R-%d", i), "totalPrice": price, "paymentType": "CARD_AT_POS", "orderId": oid, "locationId": loc,
		}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string))
	}
	var once sync.Once
	// The rules the completion runs are the pos function's.
	h.Deps.Fn.POS.Rules.OnGrant.Add(func(ctx context.Context, tx *ddb.Tx, g rule.Granted) error {
		if g.OrderID == oid {
			once.Do(func() {
				h.Do("PUT", "/transactions/"+txns[0]+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
			})
		}
		return nil
	})
	done := h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "").Map(t)
	earned, _ := done["pointsEarned"].(map[string]any)
	reversed, _ := done["pointsReversed"].(map[string]any)
	if earned[award] != 40.0 || reversed[award] != 10.0 {
		t.Errorf("completion answered pointsEarned %v, pointsReversed %v; want 40 and 10 for %s", earned, reversed, award)
	}
	if got := available(t, h, uid, perk); got != 30 {
		t.Errorf("available = %d, want 30 (40 earned, the refunded quarter taken back)", got)
	}
}

// TestBalanceCredits checks that a credit answers the balance it left:
// decimals add exactly, and parallel credits each see their own.
func TestBalanceCredits(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Cy")
	credit := func(amount float64) (float64, int) {
		r := h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": amount}, h.Admin())
		if r.Status != 200 {
			return 0, r.Status
		}
		return r.Map(t)["balance"].(float64), r.Status
	}
	t.Run("DecimalsAddExactly", func(t *testing.T) {
		if got, _ := credit(0.1); got != 0.1 {
			t.Fatalf("balance = %v, want 0.1", got)
		}
		if got, _ := credit(0.2); got != 0.3 {
			t.Fatalf("balance = %v, want 0.3", got)
		}
		if got, _ := credit(-0.3); got != 0 {
			t.Fatalf("balance = %v, want 0", got)
		}
	})
	t.Run("ParallelCreditsSeeTheirOwn", func(t *testing.T) {
		const n = 12
		var wg sync.WaitGroup
		got := make([]float64, n)
		codes := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], codes[i] = credit(1)
			}()
		}
		wg.Wait()
		ok := []float64{}
		for i := range n {
			switch codes[i] {
			case 200:
				ok = append(ok, got[i])
			case 409:
			default:
				t.Fatalf("credit %d answered %d", i, codes[i])
			}
		}
		sort.Float64s(ok)
		for i, b := range ok {
			if b != float64(i+1) {
				t.Fatalf("answered balances = %v: each credit must see the balance it left", ok)
			}
		}
		if b := balance(t, h, uid); b != float64(len(ok)) {
			t.Errorf("balance = %v after %d credits", b, len(ok))
		}
	})
}
