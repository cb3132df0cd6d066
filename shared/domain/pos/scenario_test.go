package pos_test

import (
	"fmt"
	"sync"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestPayAtPOS walks the API's typical sequence: check in at a location;
// the POS lists checked-in users and fetches the user; creates the order,
// then the transaction; PUTs the order COMPLETED; a rule earns points; a
// redemption burns some; a refund reverses the earn; the actions tell the
// story.
func TestPayAtPOS(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Pat")
	loc := shop(t, h, "Soho Kitchen")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 1)

	h.Do("POST", "/users/"+uid+"/checkins", map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}, h.Admin()).Expect(t, 201, "")
	listed := h.Do("GET", "/locations/"+loc+"/checkins", nil, h.Admin()).Expect(t, 200, "").Body
	if !contains(string(listed), uid) {
		t.Fatalf("the POS does not see the checked-in user: %s", listed)
	}
	h.Do("GET", "/users/"+uid+"?include=points,checkin", nil, h.Admin()).Expect(t, 200, "")

	order := h.Do("POST", "/users/"+uid+"/orders", map[string]any{
		"locationId": loc, "scenario": "PAYATPOS", "shortCode": "T1-001",
		"basket": []map[string]any{{"id": "latte", "category": "coffee", "title": "Latte"}},
	}, h.Admin()).Expect(t, 201, "").Map(t)
	oid := order["_id"].(string)
	if order["state"] != "OPEN" {
		t.Fatalf("new order = %v", order)
	}
	h.Do("PUT", "/orders/"+oid, map[string]any{"totalPrice": 24}, h.Admin()).Expect(t, 200, "")
	txn := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{
		"shortCode": "T1-001-P1", "totalPrice": 24, "totalPayment": 24, "paymentType": "CARD_AT_POS", "orderId": oid, "locationId": loc,
	}, h.Admin()).Expect(t, 201, "").Map(t)

	done := h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "").Map(t)
	if done["state"] != "COMPLETED" {
		t.Fatalf("completed order = %v", done)
	}
	// The rule's points are there as soon as the PUT answered.
	if got := available(t, h, uid, perk); got != 24 {
		t.Fatalf("points after the order = %d, want 24", got)
	}
	if n := len(h.Do("GET", "/users/"+uid+"/checkins", nil, h.Admin()).Expect(t, 200, "").Map(t)["checkins"].([]any)); n != 0 {
		t.Errorf("the purchase did not check the user out: %d check-ins", n)
	}
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 409, "CONFLICT")
	h.Do("PUT", "/orders/"+oid, map[string]any{"totalPrice": 1}, h.Admin()).Expect(t, 409, "CONFLICT")

	// A redemption burns some.
	h.Do("POST", "/users/"+uid+"/pointawards/"+uid+"-"+perk+"/redeem", map[string]any{"valueToRedeem": 4}, h.Admin()).Expect(t, 200, "")
	// The refund reverses the earn (never below zero: 20 are left of 24).
	ref := h.Do("PUT", "/transactions/"+txn["_id"].(string)+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ref["pointsReversed"] != 20.0 || ref["pointsNotReversed"] != 4.0 || ref["refunded"] != true {
		t.Errorf("refund = %v", ref)
	}
	if got := available(t, h, uid, perk); got != 0 {
		t.Errorf("points after the refund = %d, want 0", got)
	}
	h.Do("PUT", "/transactions/"+txn["_id"].(string)+"?refund=true", nil, h.Admin()).Expect(t, 409, "CONFLICT")

	for typ, want := range map[string]int{"CHECKIN_CREATED": 1, "CHECKOUT": 1, "TRANSACTION_CREATED": 1, "ORDER_COMPLETED": 1, "AWARD_GRANTED": 1, "AWARD_REDEEMED": 1, "TRANSACTION_REFUNDED": 1, "AWARD_REVERSED": 1} {
		if got := len(actionsOf(t, h, uid, typ)); got != want {
			t.Errorf("%s actions = %d, want %d", typ, got, want)
		}
	}
	completed := actionsOf(t, h, uid, "ORDER_COMPLETED")[0]
	if completed.Metadata["value"] != 24.0 || completed.Context.Location == nil || completed.Context.Location.ID != loc {
		t.Errorf("ORDER_COMPLETED = %+v", completed)
	}
	granted := actionsOf(t, h, uid, "AWARD_GRANTED")[0]
	if granted.Metadata["source"] != "RULE" || granted.Metadata["orderId"] != oid {
		t.Errorf("the rule's grant = %+v", granted.Metadata)
	}
}

func contains(s, sub string) bool { return len(sub) > 0 && len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestRuleConditionsAndRounding(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Rita")
	here, there := shop(t, h, "Here"), shop(t, h, "There")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, here, perk, 1.5)
	complete := func(loc string, price float64) {
		t.Helper()
		o := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "totalPrice": price}, h.Admin()).Expect(t, 201, "").Map(t)
		h.Do("PUT", "/orders/"+o["_id"].(string), map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	}
	complete(there, 100)
	if got := available(t, h, uid, perk); got != 0 {
		t.Fatalf("an order at another location earned %d", got)
	}
	complete(here, 9.99) // 14.985 -> 14
	if got := available(t, h, uid, perk); got != 14 {
		t.Fatalf("points = %d, want 14 (rounded down)", got)
	}
}

func TestTransactionIdempotency(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Ida")
	body := map[string]any{"shortCode": "R-1", "totalPrice": 5, "paymentType": "CASH_AT_POS"}
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.Do("POST", "/users/"+uid+"/transactions", body, h.Admin())
			if r.Status == 201 {
				ids[i] = r.Map(t)["_id"].(string)
			} else {
				t.Errorf("retry %d: status %d %s", i, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("retries made different transactions: %v", ids)
		}
	}
	if got := len(actionsOf(t, h, uid, "TRANSACTION_CREATED")); got != 1 {
		t.Errorf("TRANSACTION_CREATED = %d, want 1", got)
	}
	if got := len(actionsOf(t, h, uid, "ORDER_COMPLETED")); got != 1 {
		t.Errorf("generated orders completed = %d, want 1", got)
	}
	found := h.Do("GET", "/transactions?shortCode=R-1", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if found["_id"] != ids[0] || found["orderGenerated"] != true {
		t.Errorf("found = %v", found)
	}
	h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "R-1", "totalPrice": 6, "paymentType": "CASH_AT_POS"}, h.Admin()).Expect(t, 409, "CONFLICT")
	h.Do("GET", "/transactions?shortCode=nope", nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	h.Do("POST", "/transactions", map[string]any{"userId": uid, "shortCode": "R-2", "totalPrice": 1, "paymentType": "CASH"}, h.Admin()).Expect(t, 201, "")
}

func TestAppBalanceNeverNegative(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Abe")
	credit := h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": 10, "reason": "welcome"}, h.Admin()).Expect(t, 200, "").Map(t)
	if credit["balance"] != 10.0 {
		t.Fatalf("credit = %v", credit)
	}
	const n = 20
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": fmt.Sprint("APP-", i), "totalPrice": 1, "paymentType": "APP"}, h.Admin())
			codes[i] = r.Status
		}()
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, c := range codes {
		switch c {
		case 201:
			ok++
		case 422:
			refused++
		default:
			t.Errorf("status %d", c)
		}
	}
	if ok != 10 || refused != 10 {
		t.Errorf("of 20 payments of 1 from 10: %d paid, %d refused; want 10 and 10", ok, refused)
	}
	if got := balance(t, h, uid); got != 0 {
		t.Errorf("balance = %v, want 0", got)
	}
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": -1}, h.Admin()).Expect(t, 422, "INSUFFICIENT_BALANCE")
}

func TestParallelCompletionAndRefund(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Cal")
	perk := newPerk(t, h, nil)
	loc := shop(t, h, "Busy")
	pointsRule(t, h, loc, perk, 1)
	o := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "totalPrice": 7}, h.Admin()).Expect(t, 201, "").Map(t)
	oid := o["_id"].(string)
	txn := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "P-1", "totalPrice": 7, "paymentType": "CARD", "orderId": oid}, h.Admin()).Expect(t, 201, "").Map(t)
	const n = 50
	run := func(method, path string, body any) (ok, conflict int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := h.Do(method, path, body, h.Admin())
				mu.Lock()
				defer mu.Unlock()
				switch r.Status {
				case 200:
					ok++
				case 409:
					conflict++
				default:
					t.Errorf("%s %s: %d %s", method, path, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		return
	}
	if ok, _ := run("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}); ok != 1 {
		t.Errorf("completions = %d, want 1", ok)
	}
	if got := len(actionsOf(t, h, uid, "ORDER_COMPLETED")); got != 1 {
		t.Errorf("ORDER_COMPLETED = %d", got)
	}
	if got := available(t, h, uid, perk); got != 7 {
		t.Errorf("points = %d, want 7 (the rule once)", got)
	}
	if ok, _ := run("PUT", "/transactions/"+txn["_id"].(string)+"?refund=true", nil); ok != 1 {
		t.Errorf("refunds = %d, want 1", ok)
	}
	if got := available(t, h, uid, perk); got != 0 {
		t.Errorf("points after the refund = %d, want 0", got)
	}
}

func TestRedemptionsOnCompletion(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Red")
	perk := newPerk(t, h, map[string]any{"points": map[string]any{"redemption": 5}})
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "POINTS", "amount": 8, "perkId": perk}, h.Admin()).Expect(t, 200, "")
	award := uid + "-" + perk
	o := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"redemptions": []map[string]any{{"awardId": award, "quantity": 2}}}, h.Admin()).Expect(t, 201, "").Map(t)
	oid := o["_id"].(string)
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 422, "INSUFFICIENT_POINTS")
	if got := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "").Map(t)["state"]; got != "OPEN" {
		t.Fatalf("a refused completion changed the order: %v", got)
	}
	h.Do("PUT", "/orders/"+oid, map[string]any{"redemptions": []map[string]any{{"awardId": award}}}, h.Admin()).Expect(t, 200, "")
	h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	if got := available(t, h, uid, perk); got != 3 {
		t.Errorf("points = %d, want 3 (8 - the perk's redemption 5)", got)
	}
	// An APP payment's refund gives the redemption back.
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": 5}, h.Admin()).Expect(t, 200, "")
	o2 := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"redemptions": []map[string]any{{"awardId": award, "value": 3}}}, h.Admin()).Expect(t, 201, "").Map(t)
	txn := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "RD-1", "totalPrice": 5, "paymentType": "APP", "orderId": o2["_id"]}, h.Admin()).Expect(t, 201, "").Map(t)
	h.Do("PUT", "/orders/"+o2["_id"].(string), map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	if got := available(t, h, uid, perk); got != 0 {
		t.Fatalf("points = %d, want 0", got)
	}
	ref := h.Do("PUT", "/transactions/"+txn["_id"].(string)+"?refund=true", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ref["redemptionsReturned"] != 1.0 || ref["balanceRestored"] != 5.0 {
		t.Errorf("refund = %v", ref)
	}
	if got := available(t, h, uid, perk); got != 3 || balance(t, h, uid) != 5 {
		t.Errorf("after the APP refund: points %d (want 3), balance %v (want 5)", got, balance(t, h, uid))
	}
}

func TestPOSValidationAndAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Val")
	_, token, _ := h.ActiveUser(t, "Una", "User")
	other, key := h.NewTenant(h.Tenant.Settings)
	foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
	o := h.Do("POST", "/users/"+uid+"/orders", map[string]any{}, h.Admin()).Expect(t, 201, "").Map(t)
	oid := o["_id"].(string)
	tests := []struct {
		name, method, path string
		body               any
		headers            ts.Headers
		status             int
		code               string
	}{
		{"UserCreatesOrder", "POST", "/users/" + uid + "/orders", map[string]any{}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"UnknownUser", "POST", "/users/5f1c0a9b2d3e4f5a6b7c8d9e/orders", map[string]any{}, h.Admin(), 404, "NOT_FOUND"},
		{"UnknownLocation", "POST", "/users/" + uid + "/orders", map[string]any{"locationId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"BasketWithoutID", "POST", "/users/" + uid + "/orders", map[string]any{"basket": []map[string]any{{"title": "x"}}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"ForeignAward", "POST", "/users/" + uid + "/orders", map[string]any{"redemptions": []map[string]any{{"awardId": "5f1c0a9b2d3e4f5a6b7c8d9e-5f1c0a9b2d3e4f5a6b7c8d9e"}}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"NegativePrice", "PUT", "/orders/" + oid, map[string]any{"totalPrice": -1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"BadState", "PUT", "/orders/" + oid, map[string]any{"state": "PAID"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"OtherTenantsOrder", "GET", "/orders/" + oid, nil, foreign, 404, "NOT_FOUND"},
		{"UserReadsOthersOrder", "GET", "/orders/" + oid, nil, ts.Token(token), 404, "NOT_FOUND"},
		{"NoShortCode", "POST", "/users/" + uid + "/transactions", map[string]any{"totalPrice": 1, "paymentType": "CASH"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"BadPaymentType", "POST", "/users/" + uid + "/transactions", map[string]any{"shortCode": "x", "totalPrice": 1, "paymentType": "BITCOIN"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"NoUserID", "POST", "/transactions", map[string]any{"shortCode": "x", "totalPrice": 1, "paymentType": "CASH"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UnknownOrder", "POST", "/users/" + uid + "/transactions", map[string]any{"shortCode": "x", "totalPrice": 1, "paymentType": "CASH", "orderId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"RefundWithoutFlag", "PUT", "/transactions/5f1c0a9b2d3e4f5a6b7c8d9e", nil, h.Admin(), 422, "VALIDATION_FAILED"},
		{"RefundUnknown", "PUT", "/transactions/5f1c0a9b2d3e4f5a6b7c8d9e?refund=true", nil, h.Admin(), 404, "NOT_FOUND"},
		{"CreditBadType", "POST", "/users/" + uid + "/credits", map[string]any{"type": "GOLD", "amount": 1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreditPointsWithoutPerk", "POST", "/users/" + uid + "/credits", map[string]any{"type": "POINTS", "amount": 1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreditZero", "POST", "/users/" + uid + "/credits", map[string]any{"type": "BALANCE", "amount": 0}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UserCredits", "POST", "/users/" + uid + "/credits", map[string]any{"type": "BALANCE", "amount": 1}, ts.Token(token), 401, "UNAUTHORIZED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do(tc.method, tc.path, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	if n := len(actionsOf(t, h, uid, "TRANSACTION_CREATED")); n != 0 {
		t.Errorf("refused transactions recorded %d actions", n)
	}
}
