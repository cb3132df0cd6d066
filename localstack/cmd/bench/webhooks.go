package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// The webhooks section: a burst of actions (BALANCE credits, each one
// BALANCE_CREDITED action) with an endpoint on the driver's receiver
// (receiver.go), measured from each action's timestamp to its first
// attempt's arrival, against the same number of raw signed POSTs of the
// same size to the same receiver and, through the local stack's SQS
// stand-in, raw SQS messages received and POSTed as the sender does
// (rawhooks.go); then the same burst with a second endpoint beside the
// first that answers after slowDelay, whose p99 is set against the first
// burst's.

// webhookUsers is about how many users a burst's credits are spread over
// (rounded up to whole users per worker; TestTinyRun lowers it).
var webhookUsers = 100

// creditType is the action a BALANCE credit records, the one event type
// the section's endpoints take.
const creditType = "BALANCE_CREDITED"

// opCredit names the burst's request.
const opCredit = "POST /users/{id}/credits"

// slowDelay is how long the slow endpoint takes to answer (TestTinyRun
// shortens it).
var slowDelay = 10 * time.Second

// How long the driver waits for a run's events: until none has come for
// webhookStall, or webhookWait in all.
var (
	webhookStall = 60 * time.Second
	webhookWait  = 10 * time.Minute
)

// benchWebhooks runs the webhooks section into rep.
func benchWebhooks(ctx context.Context, e *env, root string, set settings, rep *report) error {
	rc, err := startReceiver()
	if err != nil {
		return err
	}
	defer rc.close()
	c := set.Concurrency
	n := c * ((webhookUsers + c - 1) / c)
	fmt.Fprintf(os.Stderr, "bench: webhooks: creating %d users\n", n)
	users, err := e.plainUsers(ctx, n)
	if err != nil {
		return err
	}

	// The burst with one endpoint, after a test event that shows the
	// receiver reachable and the signatures verified.
	alone := rc.sink("alone", 0)
	aloneID, err := e.register(ctx, alone, creditType)
	if err != nil {
		return err
	}
	if err := e.testEvent(ctx, alone, aloneID); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: webhooks: a burst of %d credits\n", set.WebhookActions)
	a, err := e.burst(ctx, set, users, alone, webhookStall)
	if err != nil {
		return err
	}
	if err := e.unregister(ctx, aloneID); err != nil {
		return err
	}
	size := 0
	if a.Stats.Events > 0 {
		size = a.Stats.Bytes / a.Stats.Events
	}

	// The references: raw POSTs, then raw SQS, of as many events of that
	// size.
	fmt.Fprintf(os.Stderr, "bench: webhooks: %d raw POSTs of %d bytes\n", a.Actions, size)
	rawHTTP, err := rawPosts(ctx, e, rc.sink("raw-http", 0), users, a.Actions, c, size)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: webhooks: %d raw SQS messages, received and POSTed\n", a.Actions)
	rawQueue, err := rawSQS(ctx, e, root, rc.sink("raw-sqs", 0), users, a.Actions, c, size)
	if err != nil {
		return err
	}

	// The same burst with a slow endpoint beside the fast one.
	fmt.Fprintf(os.Stderr, "bench: webhooks: the burst again, with an endpoint that answers in %s beside\n", slowDelay)
	slow, fast := rc.sink("slow", slowDelay), rc.sink("fast", 0)
	slowID, err := e.register(ctx, slow, creditType)
	if err != nil {
		return err
	}
	fastID, err := e.register(ctx, fast, creditType)
	if err != nil {
		return err
	}
	// A batch of the delivery queue may hold ten of the slow endpoint's
	// events: the fast one may see nothing for that long.
	b, err := e.burst(ctx, set, users, fast, webhookStall+10*slowDelay)
	if err != nil {
		return err
	}
	slowHooks, slowRefused, _ := slow.got(credits(e.tenant))
	s := analyse(slowHooks, false)
	for _, id := range []string{slowID, fastID} {
		if err := e.unregister(ctx, id); err != nil {
			return err
		}
	}

	rep.Rows = append(rep.Rows, webhookRows(a, b, s, rawHTTP, rawQueue, len(users), c)...)
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("webhooks: events of %d bytes on average; the references sent as many signed POSTs of that size to the same receiver, %d at once", size, c),
		fmt.Sprintf("webhooks: with the slow endpoint beside, the fast one received %d of %d events in %s; the slow one meanwhile %d (its sequences out of order %d, refused %d)",
			b.Stats.Events, b.Actions, b.Stats.Last.Sub(b.Start).Round(time.Millisecond), s.Events, s.OutOfOrder, slowRefused))
	for _, r := range []burstRun{a, b} {
		if r.Refused > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("webhooks: the receiver refused %d requests, the first: %v", r.Refused, r.FirstRefusal))
		}
	}
	return nil
}

// webhookRows are the section's rows: a is the burst with one endpoint, b
// the burst with the slow endpoint beside (s what it received meanwhile).
func webhookRows(a, b burstRun, s hookStats, rawHTTP, rawQueue rawRun, users, workers int) []row {
	const sec = "webhooks"
	st := a.Stats
	q := func(l []time.Duration, p float64) float64 { return ms(quantile(l, p)) }
	maxOf := func(l []time.Duration) float64 {
		if len(l) == 0 {
			return 0
		}
		return ms(l[len(l)-1])
	}
	n := float64(a.Actions)
	return []row{
		higher(sec, fmt.Sprintf("burst: credits (%d over %d users, %d in flight)", a.Actions, users, workers), a.API.ReqPerSec(), 0, "actions/s", ""),
		higher(sec, "events delivered (ref: raw POSTs)", st.rate(a.Start), rawHTTP.Stats.rate(rawHTTP.Start), "events/s", ""),
		lower(sec, "action → first attempt p50 (ref: raw POST)", q(st.Latency, 0.5), q(rawHTTP.Stats.Latency, 0.5), "ms", ""),
		lower(sec, "action → first attempt p99 (ref: raw POST)", q(st.Latency, 0.99), q(rawHTTP.Stats.Latency, 0.99), "ms", "< 5000 ms"),
		lower(sec, "action → first attempt max (ref: raw POST)", maxOf(st.Latency), maxOf(rawHTTP.Stats.Latency), "ms", ""),
		higher(sec, "events delivered (ref: raw SQS, then POST)", st.rate(a.Start), rawQueue.Stats.rate(rawQueue.Start), "events/s", ""),
		lower(sec, "action → first attempt p50 (ref: raw SQS, then POST)", q(st.Latency, 0.5), q(rawQueue.Stats.Latency, 0.5), "ms", ""),
		lower(sec, "action → first attempt p99 (ref: raw SQS, then POST)", q(st.Latency, 0.99), q(rawQueue.Stats.Latency, 0.99), "ms", ""),
		higher(sec, "events received once (ref: credits)", float64(st.Events), n, "events", "1.00"),
		{Section: sec, Figure: "retries (a webhook-id again)", Value: float64(st.Retries), Unit: "requests", Target: "0"},
		{Section: sec, Figure: "webhook-ids given to two events", Value: float64(st.Reused), Unit: "events", Target: "0"},
		{Section: sec, Figure: "per-user sequences out of order", Value: float64(st.OutOfOrder), Unit: "events", Target: "0"},
		{Section: sec, Figure: "per-user sequences missing", Value: float64(st.Missing), Unit: "events", Target: "0"},
		{Section: sec, Figure: "refused by the receiver (signature)", Value: float64(a.Refused), Unit: "requests", Target: "0"},
		lower(sec, fmt.Sprintf("with a %s endpoint beside: p50 (ref: alone)", slowDelay), q(b.Stats.Latency, 0.5), q(st.Latency, 0.5), "ms", ""),
		lower(sec, fmt.Sprintf("with a %s endpoint beside: p99 (ref: alone)", slowDelay), q(b.Stats.Latency, 0.99), q(st.Latency, 0.99), "ms", "≈ 1"),
		higher(sec, fmt.Sprintf("with a %s endpoint beside: events received (ref: credits)", slowDelay), float64(b.Stats.Events), float64(b.Actions), "events", "1.00"),
		{Section: sec, Figure: fmt.Sprintf("with a %s endpoint beside: per-user sequences out of order", slowDelay), Value: float64(b.Stats.OutOfOrder), Unit: "events", Target: "0"},
		higher(sec, fmt.Sprintf("the %s endpoint meanwhile: events received (ref: credits)", slowDelay), float64(s.Events), float64(b.Actions), "events", ""),
	}
}

// credits keeps the BALANCE_CREDITED events of tenant.
func credits(tenant string) func(hook) bool {
	return func(h hook) bool { return h.Type == creditType && h.Tenant == tenant }
}

// plainUsers creates n activated users through the API (no session, no
// photo) and returns their ids.
func (e *env) plainUsers(ctx context.Context, n int) ([]string, error) {
	ids := make([]string, n)
	err := parallel(ctx, n, 4, func(ctx context.Context, i int) error {
		var u struct {
			ID string `json:"id"`
		}
		if err := e.doJSON(ctx, call{method: "POST", path: "/users?autoActivate=true", headers: e.admin(), want: 201,
			body: map[string]any{"firstName": "Hook", "lastName": fmt.Sprintf("User%d", i),
				"credentials": []map[string]any{{"provider": "EMAIL", "id": fmt.Sprintf("hook.%d.%s@example.com", i, randomHex(3))}}}}, &u); err != nil {
			return err
		}
		ids[i] = u.ID
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create the users: %w", err)
	}
	return ids, nil
}

// register creates an endpoint of the driver's tenant on sink s that
// takes the event types types (none: every type), gives s its secret and
// returns the endpoint's id.
func (e *env) register(ctx context.Context, s *sink, types ...string) (string, error) {
	body := map[string]any{"url": s.url, "description": "bench receiver " + s.name}
	if len(types) > 0 {
		body["eventTypes"] = types
	}
	var ep struct {
		ID     string `json:"_id"`
		Secret string `json:"secret"`
	}
	if err := e.doJSON(ctx, call{method: "POST", path: "/webhooks/endpoints", headers: e.admin(), want: 201, body: body}, &ep); err != nil {
		return "", fmt.Errorf("register a webhook endpoint: %w", err)
	}
	s.setSecret(ep.Secret)
	return ep.ID, nil
}

// unregister deletes endpoint id: what is queued for it is dropped.
func (e *env) unregister(ctx context.Context, id string) error {
	if _, err := e.do(ctx, call{method: "DELETE", path: "/webhooks/endpoints/" + id, headers: e.admin(), want: 204}); err != nil {
		return fmt.Errorf("delete a webhook endpoint: %w", err)
	}
	return nil
}

// testEvent has the platform send endpoint id's test event and waits (30
// s at most) until sink s verified it.
func (e *env) testEvent(ctx context.Context, s *sink, id string) error {
	const typ = "webhook.test"
	if _, err := e.do(ctx, call{method: "POST", path: "/webhooks/endpoints/" + id + "/test", headers: e.admin(), want: 202}); err != nil {
		return err
	}
	got := func() int { return s.received(typ) }
	if !waitFor(ctx, time.Now().Add(30*time.Second), 30*time.Second, got, func() bool { return got() > 0 }) {
		_, refused, first := s.got(nil)
		return fmt.Errorf("webhooks: the receiver got no test event within 30 s (%d requests refused; the first: %v; the server's log: %s)", refused, first, e.logPath)
	}
	return nil
}

// burstRun is one burst of credits and what an endpoint received of it.
type burstRun struct {
	// Actions is the credits made; API their requests.
	Actions int
	API     result
	// Start is when the first credit was sent.
	Start time.Time
	// Stats are the endpoint's BALANCE_CREDITED events.
	Stats        hookStats
	Refused      int
	FirstRefusal error
}

// burst makes set.WebhookActions BALANCE credits of 1 with set.Concurrency
// workers, each on users of its own, as fast as the stack takes them, and
// waits until sink s received as many BALANCE_CREDITED events (or none
// came for stall).
func (e *env) burst(ctx context.Context, set settings, users []string, s *sink, stall time.Duration) (burstRun, error) {
	before := s.received(creditType)
	start := time.Now()
	api := load{workers: set.Concurrency, requests: set.WebhookActions, seq: []string{opCredit}, users: len(users),
		do: func(ctx context.Context, _ string, u int) error {
			_, err := e.do(ctx, call{method: "POST", path: "/users/" + users[u] + "/credits", headers: e.admin(), want: 200,
				body: map[string]any{"type": "BALANCE", "amount": 1}})
			return err
		}}.run(ctx)
	if api.Errors > 0 {
		return burstRun{}, fmt.Errorf("webhooks burst: %v", api.FirstErrors[0])
	}
	n := before + api.Requests
	got := func() int { return s.received(creditType) }
	waitFor(ctx, time.Now().Add(webhookWait), stall, got, func() bool { return got() >= n })
	hooks, refused, first := s.got(credits(e.tenant))
	r := burstRun{Actions: api.Requests, API: api, Start: start, Stats: analyse(hooks, false), Refused: refused, FirstRefusal: first}
	if r.Stats.Events == 0 {
		return r, fmt.Errorf("webhooks: no %s event of %d credits reached the receiver within %s (%d requests refused; the first: %v; the server's log: %s)",
			creditType, api.Requests, stall, refused, first, e.logPath)
	}
	return r, nil
}

// rawEvents makes the bodies of the references: events shaped like the
// platform's, padded to about size bytes, with the timestamp of the moment
// they are made, each user's sequence counting up from 1.
type rawEvents struct {
	tenant string
	users  []string
	size   int
	seq    []atomic.Int64
}

func newRawEvents(tenant string, users []string, size int) *rawEvents {
	return &rawEvents{tenant: tenant, users: users, size: size, seq: make([]atomic.Int64, len(users))}
}

// rawType is the type of the references' events.
const rawType = "RAW"

// next returns a new event of user index u.
func (r *rawEvents) next(u int) (id string, body []byte, err error) {
	type data struct {
		Pad string `json:"pad"`
	}
	ev := struct {
		event
		Data data `json:"data"`
	}{event: event{ID: newID(), Type: rawType, Timestamp: time.Now().UTC().Format(time.RFC3339Nano), TenantID: r.tenant,
		UserID: r.users[u], Sequence: r.seq[u].Add(1)}}
	body, err = json.Marshal(ev)
	if err != nil {
		return "", nil, err
	}
	if pad := r.size - len(body); pad > 0 {
		ev.Data.Pad = strings.Repeat("x", pad)
		body, err = json.Marshal(ev)
	}
	return ev.ID, body, err
}
