package pos_test

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// moneyEntry is an entry of GET /users/{userId}/balance/ledger.
type moneyEntry struct {
	ID           string            `json:"_id"`
	Seq          int               `json:"seq"`
	Type         string            `json:"type"`
	Amount       string            `json:"amount"`
	BalanceAfter string            `json:"balanceAfter"`
	Currency     string            `json:"currency"`
	Cause        map[string]string `json:"cause"`
	Created      string            `json:"created"`
}

// moneyLedger reads a user's whole money ledger, limit entries a page,
// and returns it oldest first.
func moneyLedger(t *testing.T, h *ts.Harness, uid string, limit int, hs ts.Headers) []moneyEntry {
	t.Helper()
	var newest []moneyEntry
	start := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("the ledger's pages never end")
		}
		q := fmt.Sprintf("?limit=%d", limit)
		if start != "" {
			q += "&startKey=" + url.QueryEscape(start)
		}
		var page struct {
			Items []moneyEntry
			Page  struct {
				Count   int
				NextKey string
			}
		}
		h.Do("GET", "/users/"+uid+"/balance/ledger"+q, nil, hs).Expect(t, 200, "").JSON(t, &page)
		if page.Page.Count != len(page.Items) || len(page.Items) > limit {
			t.Fatalf("page of %d items says count %d (limit %d)", len(page.Items), page.Page.Count, limit)
		}
		newest = append(newest, page.Items...)
		if page.Page.NextKey == "" {
			break
		}
		start = page.Page.NextKey
	}
	out := make([]moneyEntry, len(newest))
	for i, e := range newest {
		out[len(newest)-1-i] = e
	}
	return out
}

// wholeLedger checks a user's money ledger against their balance: numbered
// 1..n without gaps, each balanceAfter the running sum (never below zero),
// the sum the balance, exactly. It returns the entries, oldest first.
func wholeLedger(t *testing.T, h *ts.Harness, uid string, limit int) []moneyEntry {
	t.Helper()
	entries := moneyLedger(t, h, uid, limit, h.Admin())
	var sum money.Amount
	for i, e := range entries {
		amt, err := money.Parse(e.Amount)
		if err != nil {
			t.Fatalf("entry %d amount %q: %v", i+1, e.Amount, err)
		}
		after := money.MustParse(e.BalanceAfter)
		if sum, err = sum.Add(amt); err != nil {
			t.Fatal(err)
		}
		if e.Seq != i+1 || e.ID != fmt.Sprintf("%s.%d", uid, i+1) || sum.Cmp(after) != 0 || after.Sign() < 0 {
			t.Fatalf("entry %d is %+v: want seq %d, balanceAfter %s (all: %+v)", i+1, e, i+1, sum, entries)
		}
	}
	if bal := money.MustParse(exactBalance(t, h, uid)); bal.Cmp(sum) != 0 {
		t.Fatalf("entries sum to %s, the balance is %s", sum, bal)
	}
	return entries
}

// TestBalanceLedgerEntries: each change of the app balance (a credit, an
// APP payment, its refund) writes exactly one entry with its cause, in the
// currency's digits; what does not change the balance writes none.
func TestBalanceLedgerEntries(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := newPerk(t, h, nil)
	type want struct{ typ, amount, after string }
	tests := []struct {
		name  string
		steps func(t *testing.T, uid string) map[string]string // the cause the last entry must show
		want  []want
	}{
		{"Credit", func(t *testing.T, uid string) map[string]string {
			h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":10.5,"reason":"goodwill"}`, h.Admin()).Expect(t, 200, "")
			return map[string]string{"reason": "goodwill"}
		}, []want{{"CREDIT", "10.50", "10.50"}}},
		{"NegativeCredit", func(t *testing.T, uid string) map[string]string {
			credit(t, h, uid, "10")
			credit(t, h, uid, "-2.25")
			return nil
		}, []want{{"CREDIT", "10.00", "10.00"}, {"CREDIT", "-2.25", "7.75"}}},
		{"APPPayment", func(t *testing.T, uid string) map[string]string {
			credit(t, h, uid, "10")
			tx := h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"L-`+uid+`","totalPrice":3.5,"paymentType":"APP"}`, h.Admin()).Expect(t, 201, "").Map(t)
			return map[string]string{"transactionId": tx["_id"].(string), "orderId": tx["orderId"].(string)}
		}, []want{{"CREDIT", "10.00", "10.00"}, {"PAYMENT", "-3.50", "6.50"}}},
		{"APPPaymentOfTotalPayment", func(t *testing.T, uid string) map[string]string {
			credit(t, h, uid, "10")
			h.Do("POST", "/transactions", `{"userId":"`+uid+`","shortCode":"L-`+uid+`","totalPrice":3,"totalPayment":2.01,"paymentType":"APP"}`, h.Admin()).Expect(t, 201, "")
			return nil
		}, []want{{"CREDIT", "10.00", "10.00"}, {"PAYMENT", "-2.01", "7.99"}}},
		{"APPRefund", func(t *testing.T, uid string) map[string]string {
			credit(t, h, uid, "10")
			oid := h.Do("POST", "/users/"+uid+"/orders", nil, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			tx := h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"L-`+uid+`","totalPrice":4,"paymentType":"APP","orderId":"`+oid+`"}`, h.Admin()).Expect(t, 201, "").Map(t)
			h.Do("PUT", "/orders/"+oid, `{"state":"COMPLETED"}`, h.Admin()).Expect(t, 200, "")
			h.Do("PUT", "/transactions/"+tx["_id"].(string)+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
			return map[string]string{"transactionId": tx["_id"].(string), "orderId": oid}
		}, []want{{"CREDIT", "10.00", "10.00"}, {"PAYMENT", "-4.00", "6.00"}, {"PAYMENT_REFUND", "4.00", "10.00"}}},
		{"CardPaymentAndItsRefundWriteNone", func(t *testing.T, uid string) map[string]string {
			credit(t, h, uid, "10")
			tx := h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"L-`+uid+`","totalPrice":4,"paymentType":"CARD_AT_POS"}`, h.Admin()).Expect(t, 201, "").Map(t)
			h.Do("PUT", "/transactions/"+tx["_id"].(string)+"?refund=true", nil, h.Admin()).Expect(t, 200, "")
			return nil
		}, []want{{"CREDIT", "10.00", "10.00"}}},
		{"RefusedPaymentWritesNone", func(t *testing.T, uid string) map[string]string {
			credit(t, h, uid, "1")
			h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"L-`+uid+`","totalPrice":1.01,"paymentType":"APP"}`, h.Admin()).Expect(t, 422, "INSUFFICIENT_BALANCE")
			h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":-1.01}`, h.Admin()).Expect(t, 422, "INSUFFICIENT_BALANCE")
			return nil
		}, []want{{"CREDIT", "1.00", "1.00"}}},
		{"PointsCreditWritesNone", func(t *testing.T, uid string) map[string]string {
			h.Do("POST", "/users/"+uid+"/credits", `{"type":"POINTS","amount":5,"perkId":"`+perk+`"}`, h.Admin()).Expect(t, 200, "")
			return nil
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uid := h.AdminUser(t, "Lea", "Ledger")
			cause := tc.steps(t, uid)
			got := wholeLedger(t, h, uid, 100)
			if len(got) != len(tc.want) {
				t.Fatalf("%d entries, want %d: %+v", len(got), len(tc.want), got)
			}
			recorded, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, uid, 100)
			if err != nil {
				t.Fatal(err)
			}
			byID := map[string]action.Action{}
			for _, a := range recorded {
				byID[a.ID] = a
			}
			for i, w := range tc.want {
				e := got[i]
				if e.Type != w.typ || e.Amount != w.amount || e.BalanceAfter != w.after || e.Currency != "GBP" || e.Cause["actionId"] == "" || e.Created == "" {
					t.Errorf("entry %d = %+v, want %s %s after %s in GBP with its action", i+1, e, w.typ, w.amount, w.after)
				}
				// Its action carries the balance it left.
				if m := byID[e.Cause["actionId"]].Metadata; m["balanceAfter"] != w.after || m["currency"] != "GBP" {
					t.Errorf("entry %d's action metadata = %v, want balanceAfter %s in GBP", i+1, m, w.after)
				}
			}
			for k, v := range cause {
				if last := got[len(got)-1]; last.Cause[k] != v {
					t.Errorf("last entry's cause.%s = %q, want %q (cause %v)", k, last.Cause[k], v, last.Cause)
				}
			}
		})
	}
}

// TestBalanceLedgerReplays: a request replayed with its Idempotency-Key,
// and a POS shortCode sent again, write no second entry.
func TestBalanceLedgerReplays(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	keyed := func(key string) ts.Headers { return append(h.Admin(), "Idempotency-Key", key) }
	tests := []struct {
		name string
		send func(t *testing.T, uid string) *ts.Resp
		want int // entries after two sends
	}{
		{"Credit", func(t *testing.T, uid string) *ts.Resp {
			return h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":2}`, keyed("credit-"+uid))
		}, 2},
		{"APPPayment", func(t *testing.T, uid string) *ts.Resp {
			return h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"R-`+uid+`","totalPrice":2,"paymentType":"APP"}`, keyed("pay-"+uid))
		}, 2},
		{"APPPaymentShortCodeWithoutKey", func(t *testing.T, uid string) *ts.Resp {
			return h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"R-`+uid+`","totalPrice":2,"paymentType":"APP"}`, h.Admin())
		}, 2},
		{"APPRefund", func(t *testing.T, uid string) *ts.Resp {
			// The payment once; the refund twice with one key.
			tx := h.Do("POST", "/users/"+uid+"/transactions", `{"shortCode":"R-`+uid+`","totalPrice":2,"paymentType":"APP"}`, keyed("pay-"+uid)).Map(t)
			return h.Do("PUT", "/transactions/"+tx["_id"].(string)+"?refund=true", nil, keyed("refund-"+uid))
		}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			uid := h.AdminUser(t, "Rex", "Replay")
			credit(t, h, uid, "10")
			first := tc.send(t, uid)
			if first.Status >= 300 {
				t.Fatalf("first send: %d %s", first.Status, first.Body)
			}
			again := tc.send(t, uid)
			if again.Status != first.Status || string(again.Body) != string(first.Body) {
				t.Errorf("the repeat answered %d %s, the first %d %s", again.Status, again.Body, first.Status, first.Body)
			}
			if got := wholeLedger(t, h, uid, 100); len(got) != tc.want {
				t.Errorf("%d entries, want %d: %+v", len(got), tc.want, got)
			}
		})
	}
}

// TestBalanceLedgerConcurrent: APP payments and credits of one user at
// once all commit (the losers of a race read again), numbered without gaps,
// summing to the balance.
func TestBalanceLedgerConcurrent(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Cora", "Concurrent")
	credit(t, h, uid, "100")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			var r *ts.Resp
			if i%2 == 0 {
				r = h.Do("POST", "/users/"+uid+"/transactions", fmt.Sprintf(`{"shortCode":"C-%s-%d","totalPrice":1.25,"paymentType":"APP"}`, uid, i), h.Admin())
			} else {
				r = h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":0.75}`, h.Admin())
			}
			if r.Status != 200 && r.Status != 201 {
				t.Errorf("request %d: %d %s", i, r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	got := wholeLedger(t, h, uid, 3)
	if len(got) != 9 {
		t.Errorf("%d entries, want 9: %+v", len(got), got)
	}
	if bal := exactBalance(t, h, uid); bal != "98" {
		t.Errorf("balance = %s, want 98 (100 - 4 x 1.25 + 4 x 0.75)", bal)
	}
}

// TestBalanceLedgerAccess: the user reads their own ledger and an admin
// any user's of the tenant (a deleted user's too); another user's,
// another tenant's or an unknown user's is 404; a bad paging key is 422.
func TestBalanceLedgerAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Olive", "Owner")
	credit(t, h, uid, "5")
	_, otherToken, _ := h.ActiveUser(t, "Peter", "Peer")
	other, otherKey := h.NewTenant(tenant.Settings{})
	gone := h.AdminUser(t, "Gary", "Gone")
	credit(t, h, gone, "3")
	h.Do("DELETE", "/users/"+gone, nil, h.Admin()).Expect(t, 204, "")
	// A paging key of another user's ledger.
	for range 3 {
		credit(t, h, uid, "1")
	}
	foreign := h.Do("GET", "/users/"+uid+"/balance/ledger?limit=1", nil, h.Admin()).Expect(t, 200, "").Map(t)["page"].(map[string]any)["nextKey"].(string)

	tests := []struct {
		name, user, query string
		headers           ts.Headers
		status            int
		code              string
		entries           int
	}{
		{"Self", uid, "", ts.Token(token), 200, "", 4},
		{"Admin", uid, "", h.Admin(), 200, "", 4},
		{"AdminReadsDeletedUser", gone, "", h.Admin(), 200, "", 1},
		{"OtherUser", uid, "", ts.Token(otherToken), 404, "NOT_FOUND", 0},
		{"OtherTenant", uid, "", ts.Headers{"x-service-auth-token", otherKey, "x-application-id", other.ID}, 404, "NOT_FOUND", 0},
		{"UnknownUser", "5f1c0a9b2d3e4f5a6b7c8d9e", "", h.Admin(), 404, "NOT_FOUND", 0},
		{"Anonymous", uid, "", h.Anon(), 401, "UNAUTHORIZED", 0},
		{"BadPagingKey", uid, "?startKey=not-a-key", h.Admin(), 422, "VALIDATION_FAILED", 0},
		{"OtherLedgersPagingKey", gone, "?startKey=" + url.QueryEscape(foreign), h.Admin(), 422, "VALIDATION_FAILED", 0},
		{"BadLimit", uid, "?limit=0", h.Admin(), 422, "VALIDATION_FAILED", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("GET", "/users/"+tc.user+"/balance/ledger"+tc.query, nil, tc.headers).Expect(t, tc.status, tc.code)
			if tc.status != 200 {
				return
			}
			if n := len(r.Map(t)["items"].([]any)); n != tc.entries {
				t.Errorf("%d entries, want %d", n, tc.entries)
			}
		})
	}
	t.Run("Pages", func(t *testing.T) {
		for _, limit := range []int{1, 2, 3, 4, 100} {
			if got := moneyLedger(t, h, uid, limit, ts.Token(token)); len(got) != 4 {
				t.Errorf("limit %d: %d entries, want 4", limit, len(got))
			}
		}
	})
}

// TestBalanceLedgerGuestSignsUp: a guest whose balance changed keeps the
// balance and its ledger when it signs up, and the ledger goes on.
func TestBalanceLedgerGuestSignsUp(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	g := h.Do("POST", "/guests", map[string]any{"firstName": "Gus"}, h.Anon()).Expect(t, 201, "").Map(t)
	gid, token := g["user"].(map[string]any)["id"].(string), g["_id"].(string)
	credit(t, h, gid, "4")
	body := map[string]any{
		"firstName": "Gus", "lastName": "Guest", "password": ts.Password,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": ts.UniqueEmail("gus")}},
	}
	if id := h.Do("POST", "/users", body, ts.Token(token)).Expect(t, 201, "").Map(t)["id"]; id != gid {
		t.Fatalf("converted user %v, want the guest's %s", id, gid)
	}
	if got := credit(t, h, gid, "1"); got != "5" {
		t.Errorf("balance after the sign-up's credit = %s, want 5", got)
	}
	if got := wholeLedger(t, h, gid, 100); len(got) != 2 {
		t.Errorf("%d entries, want 2: %+v", len(got), got)
	}
}
