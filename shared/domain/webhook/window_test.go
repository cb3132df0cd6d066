package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// onQueueClock returns a harness whose clock is also the queues' (the
// stack's, so the test may not run in parallel with others of the
// package), with the sender subscribed to this tenant's messages.
func onQueueClock(t *testing.T) *ts.Harness {
	h := ts.New(t)
	h.OnQueue("webhooksender")
	st := ts.Stack(t)
	st.SetQueueClock(h.Clock)
	t.Cleanup(func() { st.SetQueueClock(nil) })
	return h
}

// runDays moves the harness and queue clock on in 6-hour steps for days,
// recording a credit of user ok (when set) at every step, and lets the
// streams and queues deliver what is due after each.
func runDays(t *testing.T, h *ts.Harness, days int, ok string) {
	t.Helper()
	for step := 0; step < days*4; step++ {
		h.Clock.Advance(6 * time.Hour)
		if ok != "" {
			h.Do("POST", "/users/"+ok+"/credits", `{"type":"BALANCE","amount":1}`, h.Admin()).Expect(t, 200, "")
		}
		h.WaitStreams()
		h.WaitQueues()
	}
}

// deliveriesOf lists an endpoint's deliveries (one page of 100) for the
// query q, by event id.
func deliveriesOf(t *testing.T, h *ts.Harness, id, q string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, d := range h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries?limit=100&"+q, nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any) {
		m := d.(map[string]any)
		out[m["eventId"].(string)] = m
	}
	return out
}

// TestRetryWindow: an event whose every attempt fails is EXHAUSTED within
// seven days of being queued, and WEBHOOK_EXHAUSTED names it. The user's
// next event waited behind it; its seven days count from when it was
// queued too, so it gets its attempts then and is EXHAUSTED by the same
// deadline instead of seven days later (nothing outlives SQS's 14-day
// retention behind a failing event). Other users' events keep succeeding,
// so the endpoint stays enabled.
func TestRetryWindow(t *testing.T) {
	h := onQueueClock(t)
	stuck, _, _ := h.ActiveUser(t, "Stuck", "Events")
	h.WaitStreams() // the user's own events go nowhere: no endpoint yet
	r := newReceiver(t)
	r.answer = func(_ int, x hit) (int, http.Header) {
		if x.Event.UserID == stuck {
			return 500, nil
		}
		return 204, nil
	}
	id, _ := register(t, h, r.URL)
	start := h.Clock.Now()
	for range 2 {
		h.Do("POST", "/users/"+stuck+"/credits", `{"type":"BALANCE","amount":2}`, h.Admin()).Expect(t, 200, "")
	}
	ok, _, _ := h.ActiveUser(t, "Fine", "Events")
	h.WaitStreams()
	h.WaitQueues()
	runDays(t, h, 9, ok)

	got := deliveriesOf(t, h, id, "userId="+stuck)
	if len(got) != 2 {
		t.Fatalf("deliveries of the failing user: %v, want its 2 credits", got)
	}
	deadline := start.Add(7*24*time.Hour + 6*time.Hour)
	for ev, d := range got {
		updated, err := time.Parse(time.RFC3339, d["updated"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if d["status"] != "EXHAUSTED" || updated.After(deadline) {
			t.Errorf("event %s: %v at %s; want EXHAUSTED by %s (seven days after it was queued)", ev, d["status"], updated, deadline)
		}
	}
	acts := h.Do("GET", "/actions?type=WEBHOOK_EXHAUSTED", nil, h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 200, "").Map(t)["actions"].([]any)
	named := map[string]bool{}
	for _, a := range acts {
		named[a.(map[string]any)["metadata"].(map[string]any)["eventId"].(string)] = true
	}
	for ev := range got {
		if !named[ev] {
			t.Errorf("no WEBHOOK_EXHAUSTED names event %s (actions %v)", ev, acts)
		}
	}
	if len(acts) != 2 {
		t.Errorf("%d WEBHOOK_EXHAUSTED actions, want 2", len(acts))
	}
	if n := len(deliveriesOf(t, h, id, "status=PENDING")); n != 0 {
		t.Errorf("%d deliveries still PENDING after nine days", n)
	}
	if ep := h.Do("GET", "/webhooks/endpoints/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); ep["enabled"] != true {
		t.Errorf("endpoint = %v, want still enabled (other users' events succeed)", ep)
	}
}

// TestFailingEndpointDisabled: an endpoint that fails every attempt for
// five days is disabled, once, with WEBHOOK_ENDPOINT_DISABLED; the events
// it kept failing are recorded FAILED when their next attempt comes, and
// nothing is sent to it any more.
func TestFailingEndpointDisabled(t *testing.T) {
	h := onQueueClock(t)
	r := newReceiver(t)
	r.answer = func(int, hit) (int, http.Header) { return 503, nil }
	id, _ := register(t, h, r.URL)
	uid, _, _ := h.ActiveUser(t, "Down", "Endpoint")
	h.WaitStreams()
	h.WaitQueues()
	runDays(t, h, 6, "")

	ep := h.Do("GET", "/webhooks/endpoints/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if ep["enabled"] != false || !strings.Contains(ep["disabledReason"].(string), "5 days") {
		t.Errorf("endpoint after six days of failures = %v, want disabled", ep)
	}
	acts := h.Do("GET", "/actions?type=WEBHOOK_ENDPOINT_DISABLED", nil, h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 200, "").Map(t)["actions"].([]any)
	if len(acts) != 1 {
		t.Errorf("%d WEBHOOK_ENDPOINT_DISABLED actions, want 1", len(acts))
	}
	before := len(r.got())
	runDays(t, h, 2, "")
	if n := len(r.got()); n != before {
		t.Errorf("a disabled endpoint got %d more requests", n-before)
	}
	got := deliveriesOf(t, h, id, "userId="+uid)
	for ev, d := range got {
		if d["status"] != "FAILED" {
			t.Errorf("event %s after the endpoint was disabled: %v, want FAILED", ev, d)
		}
	}
	if len(got) == 0 {
		t.Errorf("no deliveries of user %s", uid)
	}
}
