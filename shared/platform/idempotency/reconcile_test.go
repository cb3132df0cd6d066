package idempotency_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// client is one of the reconciliation test's clients: one request, sent
// once and retried three times.
type client struct {
	kind   string
	user   string
	method string
	path   string
	body   any
	// key is the client's Idempotency-Key; without one the domain's own
	// safeguard (shortCode, order state, one check-in per location)
	// applies.
	key string
	// impatient clients send the retries without waiting for the first
	// answer (as after a timeout); the others one after the other.
	impatient bool
	answers   []*ts.Resp
}

// sent counts the requests the clients sent (retries of
// IDEMPOTENCY_IN_PROGRESS included).
var sent atomic.Int64

// send sends the request; a 409 IDEMPOTENCY_IN_PROGRESS is retried after
// a pause, as its Retry-After asks (shortened for the test).
func (c *client) send(h *ts.Harness) *ts.Resp {
	hs := []ts.Headers{h.Admin()}
	if c.key != "" {
		hs = append(hs, key(c.key))
	}
	for {
		r := h.Do(c.method, c.path, c.body, hs...)
		sent.Add(1)
		if r.Status != 409 || !bytes.Contains(r.Body, []byte("IDEMPOTENCY_IN_PROGRESS")) {
			return r
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConcurrentRetriesReconcile runs 100 clients at once, each sending
// its request and retrying it 3 times: redeem, grant, credit, APP
// payment, order completion and check-in, with an Idempotency-Key, and
// the payment, completion and check-in also without (their domains'
// safeguards). Each client's request takes effect at most once (exactly
// once when any answer was a success, and every success of a client is
// the same answer), no balance or points go negative, and the actions
// log reconciles with every user's points and app balance.
func TestConcurrentRetriesReconcile(t *testing.T) {
	// Not parallel: its 100 clients fill DynamoDB Local's queue of
	// transactions (one at a time); with other tests' alongside, some wait
	// past its lock timeout and fail with a 500.
	h := ts.New(t)
	perk := pointsPerk(t, h)
	loc := shop(t, h, "Reconcile Rd")

	// Ten wallet users with 100 points and 10 of app balance (tight: the
	// payments of 4 refuse some), ten visitors who check in.
	wallets := make([]string, 10)
	visitors := make([]string, 10)
	orders := make([]string, 20) // orders[i] and orders[i+10] are wallets[i]'s
	var setup sync.WaitGroup
	for i := range wallets {
		setup.Add(2)
		go func() {
			defer setup.Done()
			wallets[i] = h.AdminUser(t, fmt.Sprint("Wal", i), "Wallet")
			grantPoints(t, h, perk, wallets[i], 100)
			h.Do("POST", "/users/"+wallets[i]+"/credits", map[string]any{"type": "BALANCE", "amount": 10}, h.Admin()).Expect(t, 200, "")
			for _, j := range []int{i, i + 10} {
				orders[j] = h.Do("POST", "/users/"+wallets[i]+"/orders", map[string]any{"locationId": loc, "totalPrice": 1}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
			}
		}()
		go func() {
			defer setup.Done()
			visitors[i] = shopper(t, h, fmt.Sprint("Vis", i))
		}()
	}
	setup.Wait()
	if t.Failed() {
		t.FailNow()
	}

	var clients []*client
	add := func(n int, kind string, withKey bool, make func(i int) (user, method, path string, body any)) {
		for i := 0; i < n; i++ {
			c := &client{kind: kind, impatient: len(clients)%2 == 0}
			c.user, c.method, c.path, c.body = make(i)
			if withKey {
				c.key = fmt.Sprintf("%s-%d", kind, i)
			}
			clients = append(clients, c)
		}
	}
	add(15, "redeem", true, func(i int) (string, string, string, any) {
		u := wallets[i%10]
		return u, "POST", redeemPath(u, perk), map[string]any{"valueToRedeem": 7}
	})
	add(15, "grant", true, func(i int) (string, string, string, any) {
		u := wallets[i%10]
		return u, "POST", "/pointperks/" + perk + "/awards", map[string]any{"userId": u, "points": 3}
	})
	add(15, "credit", true, func(i int) (string, string, string, any) {
		u := wallets[i%10]
		return u, "POST", "/users/" + u + "/credits", map[string]any{"type": "BALANCE", "amount": 2, "reason": fmt.Sprint("credit ", i)}
	})
	pay := func(prefix string) func(i int) (string, string, string, any) {
		return func(i int) (string, string, string, any) {
			u := wallets[i%10]
			return u, "POST", "/users/" + u + "/transactions", map[string]any{"shortCode": fmt.Sprintf("%s-%d", prefix, i), "totalPrice": 4, "paymentType": "APP"}
		}
	}
	add(15, "pay", true, pay("K"))
	add(10, "payNoKey", false, pay("N"))
	complete := func(offset int) func(i int) (string, string, string, any) {
		return func(i int) (string, string, string, any) {
			return wallets[(offset+i)%10], "PUT", "/orders/" + orders[offset+i], map[string]any{"state": "COMPLETED"}
		}
	}
	add(10, "complete", true, complete(0))
	add(10, "completeNoKey", false, complete(10))
	checkin := func(offset int) func(i int) (string, string, string, any) {
		return func(i int) (string, string, string, any) {
			u := visitors[offset+i]
			return u, "POST", "/users/" + u + "/checkins", map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}
		}
	}
	add(5, "checkin", true, checkin(0))
	add(5, "checkinNoKey", false, checkin(5))
	if len(clients) != 100 {
		t.Fatalf("%d clients", len(clients))
	}

	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.answers = make([]*ts.Resp, 4)
			if !c.impatient {
				for i := range c.answers {
					c.answers[i] = c.send(h)
				}
				return
			}
			var each sync.WaitGroup
			for i := range c.answers {
				each.Add(1)
				go func() {
					defer each.Done()
					c.answers[i] = c.send(h)
				}()
			}
			each.Wait()
		}()
	}
	wg.Wait()
	t.Logf("100 clients, 400 requests (%d sent with the retries of IDEMPOTENCY_IN_PROGRESS): %v", sent.Load(), time.Since(start).Round(time.Millisecond))

	// What each client saw: the successes of a client are one answer.
	succeeded := map[*client]bool{}
	for _, c := range clients {
		var first *ts.Resp
		for _, r := range c.answers {
			ok := r.Status < 300
			switch {
			case ok && first == nil:
				first = r
			case ok && !bytes.Equal(r.Body, first.Body):
				t.Errorf("%s %s: two different successes:\n%s\n%s", c.kind, c.key, first.Body, r.Body)
			case !ok && !allowed(c, r):
				t.Errorf("%s %s (impatient %v): answer %d %s", c.kind, c.key, c.impatient, r.Status, r.Body)
			}
		}
		succeeded[c] = first != nil
		if c.key != "" && first != nil {
			for _, r := range c.answers {
				if r.Status >= 300 {
					t.Errorf("%s %s: a success and a failure for one key: %d %s", c.kind, c.key, r.Status, r.Body)
				}
			}
		}
	}

	// Exactly one effect per successful client, none for the others.
	wantByUser := map[string]map[string]int{} // user -> action type -> count
	wantOrder := map[string]int{}
	wantShortCode := map[string]int{}
	for _, c := range clients {
		if wantByUser[c.user] == nil {
			wantByUser[c.user] = map[string]int{}
		}
		n := 0
		if succeeded[c] {
			n = 1
		}
		switch c.kind {
		case "redeem":
			wantByUser[c.user]["AWARD_REDEEMED"] += n
		case "grant":
			wantByUser[c.user]["AWARD_GRANTED"] += n
		case "credit":
			wantByUser[c.user]["BALANCE_CREDITED"] += n
		case "pay", "payNoKey":
			wantByUser[c.user]["TRANSACTION_CREATED"] += n
			wantShortCode[c.body.(map[string]any)["shortCode"].(string)] = n
		case "complete", "completeNoKey":
			wantOrder[c.path[len("/orders/"):]] = n
			if n == 0 {
				t.Errorf("%s %s: the order was never completed", c.kind, c.path)
			}
		case "checkin", "checkinNoKey":
			wantByUser[c.user]["CHECKIN_CREATED"] += n
			if n == 0 {
				t.Errorf("%s %s: never checked in", c.kind, c.user)
			}
		}
	}
	for _, u := range wallets {
		// The setup's grant and credit.
		wantByUser[u]["AWARD_GRANTED"]++
		wantByUser[u]["BALANCE_CREDITED"]++
	}
	gotOrder := map[string]int{}
	gotShortCode := map[string]int{}
	for u, want := range wantByUser {
		acts := userActions(t, h, u)
		got := map[string]int{}
		for _, a := range acts {
			got[a.Type]++
			switch a.Type {
			case "ORDER_COMPLETED":
				if id, _ := a.Metadata["orderId"].(string); id != "" {
					gotOrder[id]++
				}
			case "TRANSACTION_CREATED":
				gotShortCode[a.Metadata["shortCode"].(string)]++
			}
		}
		for typ, n := range want {
			if got[typ] != n {
				t.Errorf("user %s: %s actions = %d, want %d (one per successful client)", u, typ, got[typ], n)
			}
		}
		reconcile(t, h, u, perk, acts)
	}
	for id, n := range wantOrder {
		if gotOrder[id] != n {
			t.Errorf("order %s completed %d times, want %d", id, gotOrder[id], n)
		}
	}
	for code, n := range wantShortCode {
		if gotShortCode[code] != n {
			t.Errorf("transaction %s created %d times, want %d", code, gotShortCode[code], n)
		}
	}
}

// allowed reports whether a failed answer is one the client's request
// may get: a business refusal (the balance or points do not cover it), or
// the domain's answer to a repeat without a key.
func allowed(c *client, r *ts.Resp) bool {
	has := func(code string) bool { return bytes.Contains(r.Body, []byte(`"`+code+`"`)) }
	switch c.kind {
	case "redeem":
		return r.Status == 422 && has("INSUFFICIENT_POINTS")
	case "pay", "payNoKey":
		return r.Status == 422 && has("INSUFFICIENT_BALANCE")
	case "completeNoKey":
		return r.Status == 409 && has("CONFLICT")
	case "checkinNoKey":
		return r.Status == 409 && has("ALREADY_CHECKED_IN")
	}
	return false
}

func userActions(t *testing.T, h *ts.Harness, uid string) []action.Action {
	t.Helper()
	acts, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, uid, 10000)
	if err != nil {
		t.Fatalf("actions of %s: %v", uid, err)
	}
	return acts
}

// reconcile checks that the user's actions add up to their points of
// perk and their app balance, and that neither is negative.
func reconcile(t *testing.T, h *ts.Harness, uid, perk string, acts []action.Action) {
	t.Helper()
	num := func(a action.Action, k string) float64 {
		v, ok := a.Metadata[k].(float64)
		if !ok {
			t.Errorf("%s action of %s: metadata %s = %v", a.Type, uid, k, a.Metadata[k])
		}
		return v
	}
	var pts, bal float64
	for _, a := range acts {
		switch a.Type {
		case "AWARD_GRANTED":
			pts += num(a, "pointsGranted")
		case "AWARD_REDEEMED":
			pts -= num(a, "points")
		case "AWARD_REFUNDED":
			pts += num(a, "points")
		case "AWARD_REVERSED":
			pts -= num(a, "pointsTaken")
		case "BALANCE_CREDITED":
			bal += num(a, "amount")
			if after := num(a, "balance"); after < 0 {
				t.Errorf("user %s: a credit left the balance at %v", uid, after)
			}
		case "TRANSACTION_CREATED":
			if a.Metadata["paymentType"] == "APP" {
				if v, ok := a.Metadata["totalPayment"].(float64); ok {
					bal -= v
				} else {
					bal -= num(a, "totalPrice")
				}
			}
		case "TRANSACTION_REFUNDED":
			bal += num(a, "balanceRestored")
		}
	}
	gotPts := float64(points(t, h, uid)[perk])
	gotBal := balance(t, h, uid)
	if gotPts < 0 || gotBal < 0 {
		t.Errorf("user %s: points %v, balance %v: negative", uid, gotPts, gotBal)
	}
	if gotPts != pts {
		t.Errorf("user %s: points = %v, the actions add up to %v", uid, gotPts, pts)
	}
	if math.Abs(gotBal-bal) > 1e-9 {
		t.Errorf("user %s: balance = %v, the actions add up to %v", uid, gotBal, bal)
	}
}
