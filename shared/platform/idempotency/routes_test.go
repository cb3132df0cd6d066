package idempotency_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/callcount"
	"github.com/loyalty-platform/platform/shared/platform/idempotency"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// call is one request of a route that moves points or money.
type call struct {
	method, path string
	body         any
	// other is another body for the same route (the key reused).
	other any
	// status is the first answer's status.
	status int
}

// TestReplayThroughRoutes sends each route's request with a key, repeats
// it, and reuses the key with another body: the repeat answers the first
// status and body with Idempotent-Replayed and changes nothing; the reuse
// is 422 IDEMPOTENCY_KEY_REUSED and changes nothing.
func TestReplayThroughRoutes(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Rey")
	loc := shop(t, h, "Replay Road")
	perk := pointsPerk(t, h)
	grantPoints(t, h, perk, uid, 100)
	h.Do("POST", "/users/"+uid+"/credits", map[string]any{"type": "BALANCE", "amount": 100}, h.Admin()).Expect(t, 200, "")
	h.Do("POST", redeemPath(uid, perk), map[string]any{"valueToRedeem": 10}, h.Admin()).Expect(t, 200, "")
	openOrder := func() string {
		return h.Do("POST", "/users/"+uid+"/orders", map[string]any{"locationId": loc, "totalPrice": 3}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	}
	paid := h.Do("POST", "/users/"+uid+"/transactions", map[string]any{"shortCode": "RP-0", "totalPrice": 4, "paymentType": "APP"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	order1, order2 := openOrder(), openOrder()

	for _, tc := range []struct {
		name string
		call
	}{
		{"Grant", call{"POST", "/pointperks/" + perk + "/awards", map[string]any{"userId": uid, "points": 5}, map[string]any{"userId": uid, "points": 6}, 200}},
		{"GrantPerksAwards", call{"POST", "/perks/" + perk + "/awards", map[string]any{"userId": uid, "points": 5}, map[string]any{"userId": uid, "points": 6}, 200}},
		{"LegacyGrant", call{"POST", "/perks/" + perk + "/grant", map[string]any{"userId": uid, "points": 5}, map[string]any{"userId": uid, "points": 6}, 200}},
		{"Redeem", call{"POST", redeemPath(uid, perk), map[string]any{"valueToRedeem": 3}, map[string]any{"valueToRedeem": 4}, 200}},
		{"AwardRefund", call{"POST", "/users/" + uid + "/pointawards/" + uid + "-" + perk + "/refund", map[string]any{"value": 2}, map[string]any{"value": 1}, 200}},
		{"SetPoints", call{"PUT", "/pointawards/" + uid + "-" + perk, map[string]any{"points": map[string]any{"available": 77}}, map[string]any{"points": map[string]any{"available": 78}}, 200}},
		{"CreditBalance", call{"POST", "/users/" + uid + "/credits", map[string]any{"type": "BALANCE", "amount": 7}, map[string]any{"type": "BALANCE", "amount": 8}, 200}},
		{"CreditPoints", call{"POST", "/users/" + uid + "/credits", map[string]any{"type": "POINTS", "amount": 7, "perkId": perk}, map[string]any{"type": "POINTS", "amount": 8, "perkId": perk}, 200}},
		{"Order", call{"POST", "/users/" + uid + "/orders", map[string]any{"locationId": loc, "totalPrice": 2}, map[string]any{"locationId": loc, "totalPrice": 3}, 201}},
		{"OrderCompletion", call{"PUT", "/orders/" + order1, map[string]any{"state": "COMPLETED"}, map[string]any{"state": "COMPLETED", "value": 9}, 200}},
		{"Transaction", call{"POST", "/users/" + uid + "/transactions", map[string]any{"shortCode": "RP-1", "totalPrice": 5, "paymentType": "APP"}, map[string]any{"shortCode": "RP-2", "totalPrice": 5, "paymentType": "APP"}, 201}},
		{"TransactionOfOrder", call{"POST", "/transactions", map[string]any{"userId": uid, "orderId": order2, "shortCode": "RP-3", "totalPrice": 1, "paymentType": "CASH"}, map[string]any{"userId": uid, "orderId": order2, "shortCode": "RP-4", "totalPrice": 1, "paymentType": "CASH"}, 201}},
		{"TransactionRefund", call{"PUT", "/transactions/" + paid + "?refund=true", nil, map[string]any{"refund": true}, 200}},
		{"Checkin", call{"POST", "/users/" + uid + "/checkins", map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}, map[string]any{"locationId": loc, "type": "AUTOMATIC", "trigger": "GEOFENCE"}, 201}},
		{"ClientError", call{"POST", redeemPath(uid, perk), map[string]any{"valueToRedeem": 1000000}, map[string]any{"valueToRedeem": 1000001}, 422}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := key("replay-" + tc.name)
			before := state(t, h, uid)
			first := h.Do(tc.method, tc.path, tc.body, h.Admin(), k)
			if first.Status != tc.status || first.Header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("first = %d %s (replayed %q), want %d", first.Status, first.Body, first.Header.Get(idempotency.ReplayedHeader), tc.status)
			}
			after := state(t, h, uid)
			// A new OPEN order changes nothing of the user's (the replay
			// answers its id again).
			if tc.status < 300 && tc.name != "Order" && after == before {
				t.Fatalf("the first request changed nothing: %s", after)
			}
			again := h.Do(tc.method, tc.path, tc.body, h.Admin(), k)
			if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" {
				t.Errorf("repeat = %d %s (replayed %q), want the first %d %s replayed", again.Status, again.Body, again.Header.Get(idempotency.ReplayedHeader), first.Status, first.Body)
			}
			if got := state(t, h, uid); got != after {
				t.Errorf("the repeat changed the state:\n got %s\nwant %s", got, after)
			}
			h.Do(tc.method, tc.path, tc.other, h.Admin(), k).Expect(t, 422, "IDEMPOTENCY_KEY_REUSED")
			if got := state(t, h, uid); got != after {
				t.Errorf("the reused key changed the state:\n got %s\nwant %s", got, after)
			}
		})
	}
}

// TestReplayImport: a repeated import POST with the key answers the same
// operation and imports once; the key with another nonce is 422.
func TestReplayImport(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Imogen", "Import")
	perk := pointsPerk(t, h)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "awards.csv")
	_, _ = io.WriteString(fw, "user_id,perk_id,points\n"+uid+","+perk+",6\n")
	_ = mw.Close()
	nonce := ts.Nonce()
	send := func(k, nonce string) *ts.Resp {
		return h.Do("POST", "/awards/imports?dryRun=false", buf.Bytes(), h.Admin(), key(k), ts.Headers{"Content-Type", mw.FormDataContentType(), "x-platform-req-nonce", nonce})
	}
	first := send("imp-1", nonce).Expect(t, 202, "")
	again := send("imp-1", nonce).Expect(t, 202, "")
	if !bytes.Equal(first.Body, again.Body) || again.Header.Get(idempotency.ReplayedHeader) != "true" {
		t.Errorf("repeat = %s (replayed %q), want %s replayed", again.Body, again.Header.Get(idempotency.ReplayedHeader), first.Body)
	}
	send("imp-1", ts.Nonce()).Expect(t, 422, "IDEMPOTENCY_KEY_REUSED")
	h.WaitOperation(first.Map(t)["_id"].(string))
	if got := points(t, h, uid)[perk]; got != 6 {
		t.Errorf("points = %d, want 6 (one import)", got)
	}
}

// TestKeyScope: a key belongs to a tenant, a caller and a route: another
// user's, another tenant's or the service key's request with the same key
// runs on its own; the same user's other session shares it.
func TestKeyScope(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := pointsPerk(t, h)
	ann, annToken, annEmail := h.ActiveUser(t, "Ann", "Scope")
	bob, bobToken, _ := h.ActiveUser(t, "Bob", "Scope")
	grantPoints(t, h, perk, ann, 50)
	grantPoints(t, h, perk, bob, 50)
	redeem := map[string]any{"valueToRedeem": 5}
	k := key("shared-key")

	h.Do("POST", redeemPath(ann, perk), redeem, ts.Token(annToken), k).Expect(t, 200, "")
	if r := h.Do("POST", redeemPath(bob, perk), redeem, ts.Token(bobToken), k).Expect(t, 200, ""); r.Header.Get(idempotency.ReplayedHeader) != "" {
		t.Errorf("another user's request with the key was replayed")
	}
	// The admin is another caller: its request for Ann runs.
	if r := h.Do("POST", redeemPath(ann, perk), redeem, h.Admin(), k).Expect(t, 200, ""); r.Header.Get(idempotency.ReplayedHeader) != "" {
		t.Errorf("the service key's request with Ann's key was replayed")
	}
	// Ann's second session is the same caller.
	session := h.Do("GET", "/users/login", nil, h.Basic(annEmail, ts.Password, "EMAIL")).Expect(t, 200, "").Map(t)["_id"].(string)
	if r := h.Do("POST", redeemPath(ann, perk), redeem, ts.Token(session), k).Expect(t, 200, ""); r.Header.Get(idempotency.ReplayedHeader) != "true" {
		t.Errorf("Ann's other session ran the request again")
	}
	// Another route with the key is another record.
	h.Do("POST", "/users/"+ann+"/credits", map[string]any{"type": "BALANCE", "amount": 1}, h.Admin(), k).Expect(t, 200, "")
	if got, want := points(t, h, ann)[perk], 40; got != want {
		t.Errorf("Ann's points = %d, want %d", got, want)
	}
	if got, want := points(t, h, bob)[perk], 45; got != want {
		t.Errorf("Bob's points = %d, want %d", got, want)
	}

	// Another tenant, the same key on the same route.
	t2, key2 := h.NewTenant(h.Tenant.Settings)
	admin2 := ts.Headers{"x-service-auth-token", key2, "x-application-id", t2.ID}
	u2 := h.Do("POST", "/users?autoActivate=true", map[string]any{"firstName": "Tia", "lastName": "Two",
		"credentials": []map[string]any{{"provider": "EMAIL", "id": ts.UniqueEmail("tia")}}}, admin2).Expect(t, 201, "").Map(t)["id"].(string)
	credit := map[string]any{"type": "BALANCE", "amount": 1}
	if r := h.Do("POST", "/users/"+u2+"/credits", credit, admin2, k).Expect(t, 200, ""); r.Header.Get(idempotency.ReplayedHeader) != "" {
		t.Errorf("another tenant's request with the key was replayed")
	}
}

// TestReleasedAnswers: an answer of 401 or 409 is not kept, so a retry
// with the key runs again (and succeeds once the cause is gone).
func TestReleasedAnswers(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := shopper(t, h, "Rhea")
	loc := shop(t, h, "Released Row")
	_, token, _ := h.ActiveUser(t, "Una", "User")

	// 401: a USER on an admin route; the key stays free for that caller.
	credit := map[string]any{"type": "BALANCE", "amount": 2}
	for i := 0; i < 2; i++ {
		r := h.Do("POST", "/users/"+uid+"/credits", credit, ts.Token(token), key("rel-401")).Expect(t, 401, "UNAUTHORIZED")
		if r.Header.Get(idempotency.ReplayedHeader) != "" {
			t.Fatalf("a 401 was replayed")
		}
	}
	// 409: a check-in where the user is already checked in; after the
	// checkout the retry with the same key checks in.
	checkin := map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}
	h.Do("POST", "/users/"+uid+"/checkins", checkin, h.Admin()).Expect(t, 201, "")
	r := h.Do("POST", "/users/"+uid+"/checkins", checkin, h.Admin(), key("rel-409")).Expect(t, 409, "ALREADY_CHECKED_IN")
	if r.Header.Get(idempotency.ReplayedHeader) != "" {
		t.Fatalf("a 409 was replayed")
	}
	h.Do("DELETE", "/users/"+uid+"/checkins", nil, h.Admin()).Expect(t, 204, "")
	h.Do("POST", "/users/"+uid+"/checkins", checkin, h.Admin(), key("rel-409")).Expect(t, 201, "")
	if got := actionCounts(t, h, uid)["CHECKIN_CREATED"]; got != 2 {
		t.Errorf("CHECKIN_CREATED = %d, want 2", got)
	}
}

// TestKeyExpires: after idempotency.Lifetime (7 days; the harness clock
// moved; the record is still in the table) the key runs its request
// again.
func TestKeyExpires(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Eve", "Expiry")
	credit := map[string]any{"type": "BALANCE", "amount": 3}
	h.Do("POST", "/users/"+uid+"/credits", credit, h.Admin(), key("exp")).Expect(t, 200, "")
	h.Clock.Advance(idempotency.Lifetime - time.Hour)
	if r := h.Do("POST", "/users/"+uid+"/credits", credit, h.Admin(), key("exp")).Expect(t, 200, ""); r.Header.Get(idempotency.ReplayedHeader) != "true" {
		t.Fatalf("within the key's lifetime the repeat was not replayed")
	}
	h.Clock.Advance(time.Hour + time.Second)
	if r := h.Do("POST", "/users/"+uid+"/credits", credit, h.Admin(), key("exp")).Expect(t, 200, ""); r.Header.Get(idempotency.ReplayedHeader) != "" {
		t.Fatalf("after the key's lifetime the request was replayed")
	}
	if got := balance(t, h, uid); got != 6 {
		t.Errorf("balance = %v, want 6 (two credits)", got)
	}
}

// TestBadKeys: a malformed key is 422 naming the header, and nothing
// runs; without the header a repeat runs again, as before.
func TestBadKeys(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Kay", "Keys")
	path := "/users/" + uid + "/credits"
	credit := map[string]any{"type": "BALANCE", "amount": 1}
	long := make([]byte, idempotency.MaxKeyLength+1)
	for i := range long {
		long[i] = 'k'
	}
	for _, tc := range []struct{ name, key string }{
		{"Empty", ""},
		{"TooLong", string(long)},
		{"NonASCII", "schlüssel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("POST", path, credit, h.Admin(), key(tc.key)).Expect(t, 422, "VALIDATION_FAILED")
			if m := r.Map(t)["message"].(string); len(m) < len(idempotency.Header) || m[:len(idempotency.Header)] != idempotency.Header {
				t.Errorf("message %q does not name the header", m)
			}
		})
	}
	if got := balance(t, h, uid); got != 0 {
		t.Fatalf("refused keys credited %v", got)
	}
	t.Run("NoHeader", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			if r := h.Do("POST", path, credit, h.Admin()).Expect(t, 200, ""); r.Header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("a request without a key was replayed")
			}
		}
		if got := balance(t, h, uid); got != 2 {
			t.Errorf("balance = %v, want 2 (without a key each request credits)", got)
		}
	})
}

// TestKeyWithComma: the whole header value is the key, commas included
// (API Gateway delivers it whole; the api-proxy adapter would split it at
// its commas): the first request runs, a repeat replays it. A header sent
// twice reaches the function joined by a comma, as one key.
func TestKeyWithComma(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Cam", "Comma")
	path := "/users/" + uid + "/credits"
	credit := map[string]any{"type": "BALANCE", "amount": 1}
	// sendTwice sends the header twice, one value each time.
	sendTwice := func(t *testing.T, first, second string) (int, http.Header, []byte) {
		t.Helper()
		body, _ := json.Marshal(credit)
		req, _ := http.NewRequest("POST", h.Server.URL+path, bytes.NewReader(body))
		for i := 0; i+1 < len(h.Admin()); i += 2 {
			req.Header.Set(h.Admin()[i], h.Admin()[i+1])
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Add(idempotency.Header, first)
		req.Header.Add(idempotency.Header, second)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	want := 0.0
	for _, tc := range []struct{ name, key string }{
		{"Comma", "order-42,retry"},
		{"CommaAndSpace", "order-42, retry"}, // another key than "order-42,retry"
		{"Commas", ",a,,b,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := h.Do("POST", path, credit, h.Admin(), key(tc.key)).Expect(t, 200, "")
			if first.Header.Get(idempotency.ReplayedHeader) != "" {
				t.Fatalf("the first request was replayed")
			}
			want++
			again := h.Do("POST", path, credit, h.Admin(), key(tc.key)).Expect(t, 200, "")
			if again.Header.Get(idempotency.ReplayedHeader) != "true" {
				t.Fatalf("the repeat was not replayed")
			}
			if !bytes.Equal(again.Body, first.Body) {
				t.Errorf("replay %s, want the first response %s", again.Body, first.Body)
			}
			if got := balance(t, h, uid); got != want {
				t.Errorf("balance = %v, want %v (one credit per key)", got, want)
			}
		})
	}
	t.Run("SentTwice", func(t *testing.T) {
		status, header, body := sendTwice(t, "one", "two")
		if status != 200 || header.Get(idempotency.ReplayedHeader) != "" {
			t.Fatalf("header sent twice = %d (replayed %q) %s, want 200 run once", status, header.Get(idempotency.ReplayedHeader), body)
		}
		want++
		// The same key as one value "one,two".
		again := h.Do("POST", path, credit, h.Admin(), key("one,two")).Expect(t, 200, "")
		if again.Header.Get(idempotency.ReplayedHeader) != "true" || !bytes.Equal(again.Body, body) {
			t.Errorf("one,two = replayed %q %s, want the replay of %s", again.Header.Get(idempotency.ReplayedHeader), again.Body, body)
		}
		if got := balance(t, h, uid); got != want {
			t.Errorf("balance = %v, want %v", got, want)
		}
	})
}

// TestKeyCost counts what a key adds to a request's DynamoDB calls: the
// first request one PutItem (the claim) and one UpdateItem (the answer);
// a repeat is one PutItem (the failed claim returns the stored answer)
// beyond authentication, and runs nothing else.
func TestKeyCost(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid := h.AdminUser(t, "Cora", "Cost")
	path := "/users/" + uid + "/credits"
	credit := map[string]any{"type": "BALANCE", "amount": 1}
	const ddb = callcount.DynamoDB

	// A warm function: the tenant and its rules are cached by a first
	// request, as in every request after a cold start.
	h.Do("POST", path, credit, h.Admin()).Expect(t, 200, "")
	_, plain := h.DoCounted("POST", path, credit, h.Admin())
	_, first := h.DoCounted("POST", path, credit, h.Admin(), key("cost"))
	_, repeat := h.DoCounted("POST", path, credit, h.Admin(), key("cost"))
	// A refused key costs authentication only.
	_, refused := h.DoCounted("POST", path, credit, h.Admin(), key(""))
	t.Logf("DynamoDB calls: without a key %d, first with a key %d, repeat %d, authentication %d",
		plain.Service(ddb), first.Service(ddb), repeat.Service(ddb), refused.Service(ddb))

	for _, tc := range []struct {
		name      string
		got, want int
	}{
		{"FirstExtraCalls", first.Service(ddb) - plain.Service(ddb), 2},
		{"FirstExtraPutItem", first.Operation(ddb, "PutItem") - plain.Operation(ddb, "PutItem"), 1},
		{"FirstExtraUpdateItem", first.Operation(ddb, "UpdateItem") - plain.Operation(ddb, "UpdateItem"), 1},
		{"RepeatCalls", repeat.Service(ddb) - refused.Service(ddb), 1},
		{"RepeatPutItem", repeat.Operation(ddb, "PutItem") - refused.Operation(ddb, "PutItem"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %d, want %d", tc.got, tc.want)
			}
		})
	}
}
