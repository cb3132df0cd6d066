package pos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// exact returns a number field of a response as the text the server wrote
// (never through a float64).
func exact(t *testing.T, r *ts.Resp, field string) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	n, ok := m[field].(json.Number)
	if !ok {
		t.Fatalf("%s is not a number in %s", field, r.Body)
	}
	return n.String()
}

// exactBalance is the user's app balance as GET /users/{userId} writes it.
func exactBalance(t *testing.T, h *ts.Harness, uid string) string {
	t.Helper()
	return exact(t, h.Do("GET", "/users/"+uid, nil, h.Admin()).Expect(t, 200, ""), "balance")
}

// credit credits the user's app balance by amount (JSON text) and returns
// the balance it left, exactly.
func credit(t *testing.T, h *ts.Harness, uid, amount string) string {
	t.Helper()
	return exact(t, h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":`+amount+`}`, h.Admin()).Expect(t, 200, ""), "balance")
}

// refused expects a 422 VALIDATION_FAILED whose message is want.
func refused(t *testing.T, r *ts.Resp, want string) {
	t.Helper()
	var e struct{ Code, Message string }
	r.Expect(t, 422, "VALIDATION_FAILED").JSON(t, &e)
	if e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
}

// TestHostileAmounts: the amounts that once broke the balance (a payment
// of 1e-15 leaving 99.999999999999999, 1e-100 a 500, a credit of
// -0.0000001 lost on a large balance) are each a clean 422 naming the
// field, and nothing changes.
func TestHostileAmounts(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Hal", "Hostile")
	if got := credit(t, h, uid, "100"); got != "100" {
		t.Fatalf("balance after crediting 100 = %s", got)
	}
	const places = "at most 2 decimal places (GBP)"
	tests := []struct {
		name, method, path, body, want string
	}{
		{"TinyAPPPayment", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-1","totalPrice":1e-15,"paymentType":"APP"}`, "totalPrice: " + places},
		{"TinyAPPPaymentWithUserInBody", "POST", "/transactions", `{"userId":"` + uid + `","shortCode":"H-2","totalPrice":1e-15,"paymentType":"APP"}`, "totalPrice: " + places},
		{"TinyTotalPayment", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-3","totalPrice":1,"totalPayment":0.000000000000001,"paymentType":"APP"}`, "totalPayment: " + places},
		{"VanishingPayment", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-4","totalPrice":1e-100,"paymentType":"APP"}`, "totalPrice: " + places},
		{"VanishingTip", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-5","totalPrice":1,"totalTip":1e-100,"paymentType":"CASH"}`, "totalTip: " + places},
		{"HugePayment", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-6","totalPrice":1e30,"paymentType":"APP"}`, "totalPrice: is too large"},
		{"ThirdPenny", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-7","totalPrice":0.333,"paymentType":"APP"}`, "totalPrice: " + places},
		{"NegativePayment", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-8","totalPrice":-5,"paymentType":"APP"}`, "totalPrice: must be a number from 0 to 1000000000"},
		{"VanishingOrderTotal", "POST", "/users/" + uid + "/orders", `{"totalPrice":1e-100}`, "totalPrice: " + places},
		{"VanishingBasketPrice", "POST", "/users/" + uid + "/orders", `{"basket":[{"id":"tea","price":1e-15}]}`, "basket[0].price: " + places},
		{"TinyOrderValue", "POST", "/users/" + uid + "/orders", `{"value":0.001}`, "value: " + places},
		{"VanishingCredit", "POST", "/users/" + uid + "/credits", `{"type":"BALANCE","amount":1e-100}`, "amount: " + places},
		{"TinyDebit", "POST", "/users/" + uid + "/credits", `{"type":"BALANCE","amount":-0.0000001}`, "amount: " + places},
		{"FractionalPoints", "POST", "/users/" + uid + "/credits", `{"type":"POINTS","perkId":"p","amount":1e-15}`, "amount: must be whole points from 1 to 1000000000"},
		{"AmountAsString", "POST", "/users/" + uid + "/transactions", `{"shortCode":"H-9","totalPrice":"12.50","paymentType":"APP"}`, "totalPrice: must be of type number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, h.Do(tc.method, tc.path, tc.body, h.Admin()), tc.want)
			if got := exactBalance(t, h, uid); got != "100" {
				t.Errorf("balance = %s, want 100 exactly", got)
			}
		})
	}
	for _, code := range []string{"H-1", "H-2", "H-4"} {
		h.Do("GET", "/transactions?shortCode="+code, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	}

	// The balance still takes credits and pays exactly what it holds.
	if got := credit(t, h, uid, "0.01"); got != "100.01" {
		t.Errorf("balance after crediting 0.01 = %s, want 100.01", got)
	}
	h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"H-10","totalPrice":100.01,"paymentType":"APP"}`, h.Admin()).Expect(t, 201, "")
	if got := exactBalance(t, h, uid); got != "0" {
		t.Errorf("balance after paying all of it = %s, want 0", got)
	}
	h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"H-11","totalPrice":0.01,"paymentType":"APP"}`, h.Admin()).Expect(t, 422, "INSUFFICIENT_BALANCE")

	t.Run("TinyDebitOnLargeBalance", func(t *testing.T) {
		big := h.AdminUser(t, "Rich", "Hostile")
		credit(t, h, big, "1000000000")
		if got := credit(t, h, big, "1000000000"); got != "2000000000" {
			t.Fatalf("balance = %s, want 2000000000", got)
		}
		refused(t, h.Do("POST", "/users/"+big+"/credits", `{"type":"BALANCE","amount":-0.0000001}`, h.Admin()), "amount: "+places)
		if got := credit(t, h, big, "-0.01"); got != "1999999999.99" {
			t.Errorf("balance after -0.01 = %s, want 1999999999.99", got)
		}
		if got := exactBalance(t, h, big); got != "1999999999.99" {
			t.Errorf("GET balance = %s, want 1999999999.99", got)
		}
		if n := len(actionsOf(t, h, big, "BALANCE_CREDITED")); n != 3 {
			t.Errorf("BALANCE_CREDITED actions = %d, want 3 (the refused credit records none)", n)
		}
	})
}

// TestExactSums: ten payments of 0.10 are 1.00 exactly, on the balance and
// on an order's totals, and the balance then pays exactly 1.00.
func TestExactSums(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Penny", "Exact")
	for range 10 {
		credit(t, h, uid, "0.10")
	}
	if got := exactBalance(t, h, uid); got != "1" {
		t.Fatalf("10 × 0.10 credited = %s, want 1", got)
	}
	oid := h.Do("POST", "/users/"+uid+"/orders", nil, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	var first string
	for i := range 10 {
		txn := h.Do("POST", "/users/"+uid+"/transactions", fmt.Sprintf(`{"shortCode":"E-%d","totalPrice":0.10,"paymentType":"APP","orderId":"%s"}`, i, oid), h.Admin()).Expect(t, 201, "")
		if got := exact(t, txn, "totalPrice"); got != "0.1" {
			t.Errorf("totalPrice = %s, want 0.1", got)
		}
		if i == 0 {
			first = txn.Map(t)["_id"].(string)
		}
	}
	if got := exactBalance(t, h, uid); got != "0" {
		t.Errorf("balance after paying 10 × 0.10 = %s, want 0", got)
	}
	order := h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "")
	if got, v := exact(t, order, "transactionsTotal"), exact(t, order, "value"); got != "1" || v != "1" {
		t.Errorf("transactionsTotal = %s, value = %s, want 1 and 1", got, v)
	}
	ref := h.Do("PUT", "/transactions/"+first+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
	if got := exact(t, ref, "balanceRestored"); got != "0.1" {
		t.Errorf("balanceRestored = %s, want 0.1", got)
	}
	order = h.Do("GET", "/orders/"+oid, nil, h.Admin()).Expect(t, 200, "")
	if got, r := exact(t, order, "transactionsTotal"), exact(t, order, "refundedTotal"); got != "0.9" || r != "0.1" {
		t.Errorf("after the refund transactionsTotal = %s, refundedTotal = %s, want 0.9 and 0.1", got, r)
	}
	if got := exactBalance(t, h, uid); got != "0.1" {
		t.Errorf("balance after the refund = %s, want 0.1", got)
	}

	// 0.1 + 0.2 is 0.3, and a rule's pointsPerUnit reads it exactly: 10
	// per unit on 0.3 is 3.
	loc := shop(t, h, "Exact Cafe")
	perk := newPerk(t, h, nil)
	pointsRule(t, h, loc, perk, 10)
	o2 := h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	for i, p := range []string{"0.1", "0.2"} {
		h.Do("POST", "/users/"+uid+"/transactions", fmt.Sprintf(`{"shortCode":"F-%d","totalPrice":%s,"paymentType":"CASH","orderId":"%s"}`, i, p, o2), h.Admin()).Expect(t, 201, "")
	}
	done := h.Do("PUT", "/orders/"+o2, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
	if got := exact(t, done, "value"); got != "0.3" {
		t.Errorf("order value = %s, want 0.3", got)
	}
	if got := available(t, h, uid, perk); got != 3 {
		t.Errorf("points on 0.3 at 10 per unit = %d, want 3", got)
	}
}

// TestCurrencyDigits: the tenant's currency decides the decimal places an
// amount may have: JPY none, BHD three.
func TestCurrencyDigits(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Yuki", "Yen")
	h.SetSettings(tenant.Settings{Currency: "JPY"})
	tests := []struct {
		name, method, path, body, want string
	}{
		{"HalfYenPayment", "POST", "/users/" + uid + "/transactions", `{"shortCode":"Y-1","totalPrice":1.5,"paymentType":"CASH"}`, "totalPrice: must be a whole amount: JPY has no minor unit"},
		{"HalfYenCredit", "POST", "/users/" + uid + "/credits", `{"type":"BALANCE","amount":1.5}`, "amount: must be a whole amount: JPY has no minor unit"},
		{"HalfYenBasketPrice", "POST", "/users/" + uid + "/orders", `{"basket":[{"id":"tea","price":0.5}]}`, "basket[0].price: must be a whole amount: JPY has no minor unit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, h.Do(tc.method, tc.path, tc.body, h.Admin()), tc.want)
		})
	}
	if got := credit(t, h, uid, "1500.00"); got != "1500" {
		t.Errorf("balance after crediting 1500.00 yen = %s, want 1500", got)
	}
	txn := h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"Y-2","totalPrice":1500,"paymentType":"APP"}`, h.Admin()).Expect(t, 201, "")
	if got := exact(t, txn, "totalPrice"); got != "1500" {
		t.Errorf("totalPrice = %s, want 1500", got)
	}

	h.SetSettings(tenant.Settings{Currency: "BHD"})
	if got := credit(t, h, uid, "1.234"); got != "1.234" {
		t.Errorf("balance after crediting 1.234 BHD = %s, want 1.234", got)
	}
	refused(t, h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":0.0005}`, h.Admin()), "amount: at most 3 decimal places (BHD)")
	if got := exactBalance(t, h, uid); !strings.HasPrefix(got, "1.234") {
		t.Errorf("balance = %s, want 1.234", got)
	}
}

// TestShortCodeMessages: GET /transactions?shortCode= tells a missing code,
// a too long one and one holding a control character apart (a present value
// is never told it is required), and so does a transaction's shortCode.
func TestShortCodeMessages(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Sam", "Short")
	for _, c := range []struct{ name, query, want string }{
		{"missing", "", "shortCode: is required (1 to 64 characters)"},
		{"control character", "a%14b", "shortCode: must not hold control characters"},
		{"too long", strings.Repeat("x", 65), "shortCode: must be 1 to 64 characters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			refused(t, h.Do("GET", "/transactions?shortCode="+c.query, nil, h.Admin()), c.want)
		})
	}
	t.Run("body control character", func(t *testing.T) {
		refused(t, h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "a\x14b", "totalPrice": 1, "paymentType": "CASH"}, h.Admin()), "shortCode: must not hold control characters")
	})
}
