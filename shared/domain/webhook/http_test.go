package webhook_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestEndpoints walks an endpoint's life through HTTP: create (the secret
// once), read, list, change, rotate, delete; another tenant and a user
// never reach it.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	created := h.Do("POST", "/webhooks/endpoints", map[string]any{"url": "https://hooks.example.com/in", "eventTypes": []string{"CHECKIN_CREATED"}, "description": "crm"}, h.Admin()).Expect(t, 201, "").Map(t)
	id := created["_id"].(string)
	if s, _ := created["secret"].(string); !strings.HasPrefix(s, "whsec_") || len(s) != len("whsec_")+44 {
		t.Errorf("secret = %q, want whsec_ and base64 of 32 bytes", s)
	}
	if created["enabled"] != true {
		t.Errorf("enabled = %v, want true by default", created["enabled"])
	}
	got := h.Do("GET", "/webhooks/endpoints/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if _, ok := got["secret"]; ok {
		t.Errorf("GET shows the secret")
	}
	list := h.Do("GET", "/webhooks/endpoints", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if items := list["items"].([]any); len(items) != 1 || items[0].(map[string]any)["_id"] != id {
		t.Errorf("list = %v, want the one endpoint", items)
	}
	upd := h.Do("PUT", "/webhooks/endpoints/"+id, map[string]any{"eventTypes": []string{}, "description": nil, "enabled": false}, h.Admin()).Expect(t, 200, "").Map(t)
	if upd["enabled"] != false || len(upd["eventTypes"].([]any)) != 0 || upd["description"] != nil || upd["url"] != "https://hooks.example.com/in" {
		t.Errorf("after PUT = %v", upd)
	}
	rot := h.Do("POST", "/webhooks/endpoints/"+id+"/secret/rotate", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if rot["secret"] == created["secret"] || !strings.HasPrefix(rot["secret"].(string), "whsec_") {
		t.Errorf("rotated secret = %v", rot["secret"])
	}

	t.Run("OtherTenant", func(t *testing.T) {
		_, key := h.NewTenant(tenant.Settings{})
		other := ts.Headers{"x-service-auth-token", key}
		h.Do("GET", "/webhooks/endpoints/"+id, nil, other).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/webhooks/endpoints/"+id, map[string]any{"enabled": true}, other).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/webhooks/endpoints/"+id, nil, other).Expect(t, 404, "NOT_FOUND")
		h.Do("POST", "/webhooks/endpoints/"+id+"/test", nil, other).Expect(t, 404, "NOT_FOUND")
		h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries", nil, other).Expect(t, 404, "NOT_FOUND")
		if items := h.Do("GET", "/webhooks/endpoints", nil, other).Expect(t, 200, "").Map(t)["items"].([]any); len(items) != 0 {
			t.Errorf("the other tenant lists %d endpoints, want 0", len(items))
		}
	})
	t.Run("User", func(t *testing.T) {
		_, token, _ := h.ActiveUser(t, "Una", "User")
		h.Do("GET", "/webhooks/endpoints", nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
		h.Do("POST", "/webhooks/endpoints", map[string]any{"url": "https://a.example.com"}, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
	h.Do("DELETE", "/webhooks/endpoints/"+id, nil, h.Admin()).Expect(t, 204, "")
	h.Do("GET", "/webhooks/endpoints/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	h.Do("DELETE", "/webhooks/endpoints/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
}

// TestEndpointValidation: bad bodies are 422 naming the field and change
// nothing.
func TestEndpointValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id, _ := register(t, h, "https://hooks.example.com/x")
	tests := []struct {
		name, method, path string
		body               any
	}{
		{"MissingURL", "POST", "/webhooks/endpoints", map[string]any{"eventTypes": []string{}}},
		{"NotAURL", "POST", "/webhooks/endpoints", map[string]any{"url": "hooks"}},
		{"FTP", "POST", "/webhooks/endpoints", map[string]any{"url": "ftp://hooks.example.com/"}},
		{"UnknownType", "POST", "/webhooks/endpoints", map[string]any{"url": "https://a.example.com", "eventTypes": []string{"NOPE"}}},
		{"TypeTwice", "POST", "/webhooks/endpoints", map[string]any{"url": "https://a.example.com", "eventTypes": []string{"CHECKOUT", "CHECKOUT"}}},
		{"UnknownField", "POST", "/webhooks/endpoints", map[string]any{"url": "https://a.example.com", "secret": "whsec_x"}},
		{"ControlCharacter", "POST", "/webhooks/endpoints", map[string]any{"url": "https://a.example.com", "description": "a\x00b"}},
		{"LongURL", "POST", "/webhooks/endpoints", map[string]any{"url": "https://a.example.com/" + strings.Repeat("a", 2100)}},
		{"EmptyPatch", "PUT", "/webhooks/endpoints/" + id, map[string]any{}},
		{"NullTypes", "PUT", "/webhooks/endpoints/" + id, map[string]any{"eventTypes": nil}},
		{"NullEnabled", "PUT", "/webhooks/endpoints/" + id, map[string]any{"enabled": nil}},
		{"ReplayNoWindow", "POST", "/webhooks/endpoints/" + id + "/replay", map[string]any{}},
		{"ReplayBackwards", "POST", "/webhooks/endpoints/" + id + "/replay", map[string]any{"from": "2026-11-20T00:00:00Z", "to": "2026-11-19T00:00:00Z"}},
		{"ReplayTooOld", "POST", "/webhooks/endpoints/" + id + "/replay", map[string]any{"from": time.Now().Add(-31 * 24 * time.Hour).Format(time.RFC3339), "to": time.Now().Format(time.RFC3339)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do(tc.method, tc.path, tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	for _, q := range []string{"status=SENT", "eventType=NOPE", "userId=a.b"} {
		t.Run("Deliveries "+q, func(t *testing.T) {
			h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries?"+q, nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	if items := h.Do("GET", "/webhooks/endpoints", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any); len(items) != 1 {
		t.Errorf("%d endpoints after the refused calls, want 1", len(items))
	}
}

// TestEndpointLimit: a tenant has at most settings.webhookEndpoints
// endpoints; deleting one makes room.
func TestEndpointLimit(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"webhookEndpoints": 2}}, h.Admin()).Expect(t, 200, "")
	a, _ := register(t, h, "https://a.example.com")
	register(t, h, "https://b.example.com")
	h.Do("POST", "/webhooks/endpoints", map[string]any{"url": "https://c.example.com"}, h.Admin()).Expect(t, 409, "CONFLICT")
	h.Do("DELETE", "/webhooks/endpoints/"+a, nil, h.Admin()).Expect(t, 204, "")
	register(t, h, "https://c.example.com")
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"webhookEndpoints": 0}}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
}

// TestDeliversSignedOrderedEvents: actions of several types for two users
// reach an endpoint signed with its secret, with the actions' ids, each
// user's sequence increasing by one in the order received; a filtered
// endpoint gets only its types.
func TestDeliversSignedOrderedEvents(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	all, only := newReceiver(t), newReceiver(t)
	_, secret := register(t, h, all.URL+"/hook")
	register(t, h, only.URL+"/hook", "BALANCE_CREDITED")

	users := make([]string, 2)
	for i := range users {
		users[i], _, _ = h.ActiveUser(t, "Web", fmt.Sprintf("Hook%d", i))
	}
	for round := 0; round < 3; round++ {
		for _, u := range users {
			h.Do("POST", "/users/"+u+"/credits", `{"type":"BALANCE","amount":1.5}`, h.Admin()).Expect(t, 200, "")
		}
	}
	// Every action of the two users, as the actions log has them.
	want := map[string]string{}
	for _, u := range users {
		for _, a := range h.Do("GET", "/users/"+u+"/actions?limit=100", nil, h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 200, "").Map(t)["actions"].([]any) {
			m := a.(map[string]any)
			want[m["_id"].(string)] = m["type"].(string)
		}
	}
	hits := all.wait(t, h, len(want))
	time.Sleep(200 * time.Millisecond)
	hits = all.got()
	seen := map[string]bool{}
	last := map[string]int64{}
	for _, x := range hits {
		verify(t, secret, x)
		if x.ID != x.Event.ID {
			t.Errorf("webhook-id %s, body id %s", x.ID, x.Event.ID)
		}
		if seen[x.ID] {
			t.Errorf("event %s delivered twice", x.ID)
		}
		seen[x.ID] = true
		if typ, ok := want[x.ID]; !ok || typ != x.Event.Type {
			t.Errorf("event %s %s is no action of the users (want %q)", x.ID, x.Event.Type, typ)
		}
		if x.Event.TenantID != h.Tenant.ID || x.Event.Data["_id"] != x.ID {
			t.Errorf("event %s: tenantId %s, data._id %v", x.ID, x.Event.TenantID, x.Event.Data["_id"])
		}
		if x.Event.UserID == "" {
			continue
		}
		if prev, ok := last[x.Event.UserID]; ok && x.Event.Sequence != prev+1 {
			t.Errorf("user %s: sequence %d after %d, want %d", x.Event.UserID, x.Event.Sequence, prev, prev+1)
		}
		last[x.Event.UserID] = x.Event.Sequence
		if x.Event.Type == "BALANCE_CREDITED" && x.Event.Data["balanceAfter"] == nil {
			t.Errorf("BALANCE_CREDITED %s has no data.balanceAfter", x.ID)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("%d events delivered, want %d", len(seen), len(want))
	}
	filtered := only.wait(t, h, 6)
	for _, x := range filtered {
		if x.Event.Type != "BALANCE_CREDITED" {
			t.Errorf("the filtered endpoint got %s", x.Event.Type)
		}
	}
	if len(filtered) != 6 {
		t.Errorf("the filtered endpoint got %d events, want 6", len(filtered))
	}
	// The deliveries list says the same.
	id := h.Do("GET", "/webhooks/endpoints", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)[0].(map[string]any)["_id"].(string)
	dl := h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries?status=DELIVERED&userId="+users[0], nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
	for _, d := range dl {
		m := d.(map[string]any)
		if m["status"] != "DELIVERED" || m["userId"] != users[0] || m["attempt"] != float64(1) || m["responseStatus"] != float64(200) {
			t.Errorf("delivery %v", m)
		}
	}
	if len(dl) == 0 {
		t.Errorf("no DELIVERED deliveries listed for user %s", users[0])
	}
	// Page by page (the deliveries are spread over shards the list merges):
	// every delivered event once, newest event first.
	var listed []string
	for next := ""; ; {
		page := h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries?limit=3&startKey="+next, nil, h.Admin()).Expect(t, 200, "").Map(t)
		for _, d := range page["items"].([]any) {
			listed = append(listed, d.(map[string]any)["eventId"].(string))
		}
		next, _ = page["page"].(map[string]any)["nextKey"].(string)
		if next == "" || len(listed) > 2*len(want) {
			break
		}
	}
	if !slices.IsSortedFunc(listed, func(a, b string) int { return strings.Compare(b, a) }) {
		t.Errorf("deliveries not newest first: %v", listed)
	}
	if got := len(listed); got != len(want) || len(slices.Compact(slices.Clone(listed))) != got {
		t.Errorf("%d deliveries listed (%d distinct), want %d", got, len(slices.Compact(slices.Clone(listed))), len(want))
	}
}

// TestTestEvent: POST .../test sends one signed webhook.test event.
func TestTestEvent(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	r := newReceiver(t)
	id, secret := register(t, h, r.URL)
	sent := h.Do("POST", "/webhooks/endpoints/"+id+"/test", nil, h.Admin()).Expect(t, 202, "").Map(t)
	got := r.wait(t, h, 1)
	if got[0].ID != sent["id"] || got[0].Event.Type != "webhook.test" || got[0].Event.Sequence != 0 {
		t.Errorf("test event = %+v, sent %v", got[0].Event, sent)
	}
	verify(t, secret, got[0])
}

// TestRetriesKeepTheID: an endpoint that fails the first attempts gets the
// same webhook-id again after the schedule's waits (the harness's clock
// and the queues' moved together), and the delivery ends DELIVERED on
// attempt 3; a later event of the same user waits behind it.
func TestRetriesKeepTheID(t *testing.T) {
	h := onQueueClock(t)
	r := newReceiver(t)
	r.answer = func(n int, _ hit) (int, http.Header) {
		if n < 2 {
			return 500, nil
		}
		return 204, nil
	}
	id, _ := register(t, h, r.URL)
	uid, _, _ := h.ActiveUser(t, "Re", "Try")
	first := r.wait(t, h, 1)[0]
	h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":2}`, h.Admin()).Expect(t, 200, "")
	h.WaitStreams()
	h.WaitQueues()
	if got := r.got(); len(got) != 1 {
		t.Fatalf("%d requests before the first retry was due, want 1 (the later event waits)", len(got))
	}
	d := h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries?status=PENDING", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
	if len(d) != 1 || d[0].(map[string]any)["eventId"] != first.ID || d[0].(map[string]any)["nextAttemptAt"] == nil {
		t.Fatalf("pending deliveries = %v", d)
	}
	for _, wait := range []time.Duration{6 * time.Second, 6 * time.Minute} {
		h.Clock.Advance(wait)
		h.WaitQueues()
	}
	got := r.wait(t, h, 3)
	if got[1].ID != first.ID || got[2].ID != first.ID {
		t.Errorf("retries carried ids %s, %s; want %s", got[1].ID, got[2].ID, first.ID)
	}
	got = r.wait(t, h, 4)
	if got[3].Event.Sequence <= first.Event.Sequence || got[3].Event.UserID != uid {
		t.Errorf("after the retried event came %+v", got[3].Event)
	}
	ok := h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries?status=DELIVERED", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
	var attempts []float64
	for _, x := range ok {
		attempts = append(attempts, x.(map[string]any)["attempt"].(float64))
	}
	if !slices.Contains(attempts, 3) {
		t.Errorf("delivered attempts %v, want one on attempt 3", attempts)
	}
}

// TestGoneDisables: 410 disables the endpoint and records
// WEBHOOK_ENDPOINT_DISABLED; its later events are not sent.
func TestGoneDisables(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	r := newReceiver(t)
	r.answer = func(int, hit) (int, http.Header) { return 410, nil }
	id, _ := register(t, h, r.URL)
	h.Do("POST", "/webhooks/endpoints/"+id+"/test", nil, h.Admin()).Expect(t, 202, "")
	r.wait(t, h, 1)
	h.WaitQueues()
	ep := h.Do("GET", "/webhooks/endpoints/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ep["enabled"] != false || !strings.Contains(fmt.Sprint(ep["disabledReason"]), "410") {
		t.Errorf("endpoint after 410 = %v", ep)
	}
	acts := h.Do("GET", "/actions?type=WEBHOOK_ENDPOINT_DISABLED", nil, h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 200, "").Map(t)["actions"].([]any)
	if len(acts) != 1 {
		t.Errorf("%d WEBHOOK_ENDPOINT_DISABLED actions, want 1", len(acts))
	}
	h.ActiveUser(t, "After", "Gone")
	h.WaitStreams()
	h.WaitQueues()
	if n := len(r.got()); n != 1 {
		t.Errorf("a disabled endpoint got %d requests, want 1", n)
	}
}

// TestRotationSignsWithBoth: after a rotation a delivery carries two
// signatures, one verifying with each secret.
func TestRotationSignsWithBoth(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	r := newReceiver(t)
	id, old := register(t, h, r.URL)
	next := h.Do("POST", "/webhooks/endpoints/"+id+"/secret/rotate", nil, h.Admin()).Expect(t, 200, "").Map(t)["secret"].(string)
	h.Do("POST", "/webhooks/endpoints/"+id+"/test", nil, h.Admin()).Expect(t, 202, "")
	got := r.wait(t, h, 1)[0]
	if n := len(strings.Fields(got.Signature)); n != 2 {
		t.Errorf("signature header %q holds %d signatures, want 2", got.Signature, n)
	}
	verify(t, old, got)
	verify(t, next, got)
}

// TestReplay re-sends a window in order with the original ids, as an
// operation.
func TestReplay(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	r := newReceiver(t)
	id, _ := register(t, h, r.URL)
	from := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	uid, _, _ := h.ActiveUser(t, "Re", "Play")
	for i := 0; i < 3; i++ {
		h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":1}`, h.Admin()).Expect(t, 200, "")
	}
	live := r.wait(t, h, 4)
	time.Sleep(200 * time.Millisecond)
	live = r.got()
	to := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	op := h.Do("POST", "/webhooks/endpoints/"+id+"/replay", map[string]any{"from": from, "to": to}, h.Admin()).Expect(t, 202, "").Map(t)
	done := h.WaitOperation(op["_id"].(string))
	res := done["result"].(map[string]any)
	if res["imported"] != float64(len(live)) {
		t.Errorf("replay result %v, want %d re-sent", res, len(live))
	}
	all := r.wait(t, h, 2*len(live))
	replayed := all[len(live):]
	for i, x := range replayed {
		if x.ID != live[i].ID || x.Event.Sequence != live[i].Event.Sequence {
			t.Errorf("replayed #%d = %s seq %d, want %s seq %d", i, x.ID, x.Event.Sequence, live[i].ID, live[i].Event.Sequence)
		}
	}
}
