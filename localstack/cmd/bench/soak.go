package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// rssSample is the resident memory of the stack's processes at one time.
type rssSample struct {
	At     time.Duration
	Server int64
	Java   int64
}

// sampleRSS samples the server's and DynamoDB Local's VmRSS every period
// until stop is called, and returns the samples.
func sampleRSS(e *env, period time.Duration) (stop func() []rssSample) {
	var mu sync.Mutex
	var out []rssSample
	start := time.Now()
	done := make(chan struct{})
	finished := make(chan struct{})
	take := func() {
		mu.Lock()
		out = append(out, rssSample{At: time.Since(start), Server: rss(e.serverPid), Java: rss(e.javaPid)})
		mu.Unlock()
	}
	go func() {
		defer close(finished)
		tick := time.NewTicker(period)
		defer tick.Stop()
		take()
		for {
			select {
			case <-done:
				take()
				return
			case <-tick.C:
				take()
			}
		}
	}()
	return func() []rssSample {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}

// window returns the highest server and java RSS among the samples taken
// in [from, to].
func window(samples []rssSample, from, to time.Duration) (server, java int64) {
	for _, s := range samples {
		if s.At >= from && s.At <= to {
			server, java = max(server, s.Server), max(java, s.Java)
		}
	}
	return server, java
}

// soak runs the mix with set.Concurrency workers until set.SoakDuration
// has passed or set.SoakRequests were sent, counting errors instead of
// stopping at the first, and reports throughput, latencies and the
// resident memory of the stack in the first and the last minute. A
// webhook endpoint on the driver's receiver takes every event of the run;
// at the end the soak waits (bounded) for them. Any error fails it, and so
// does a webhook event missing, out of its user's order, a webhook-id
// given to a second event or a signature that does not verify (a retry,
// the same id with the same body, is counted, not failed).
func soak(ctx context.Context, e *env, set settings, rep *report, w io.Writer) error {
	// A webhook endpoint taking every event, registered before the users
	// exist, so that it gets each user's events from the first.
	rc, err := startReceiver()
	if err != nil {
		return err
	}
	defer rc.close()
	hooks := rc.sink("soak", 0)
	if _, err := e.register(ctx, hooks); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "soak: creating users")
	fx, err := e.setup(ctx, 2*set.Concurrency)
	if err != nil {
		return err
	}
	l := load{workers: set.Concurrency, requests: set.SoakRequests, seq: mixOps, users: len(fx.users), keepGoing: true,
		do: func(ctx context.Context, op string, u int) error {
			_, err := e.do(ctx, e.apiCall(fx, op, fx.users[u]))
			return err
		}}
	if set.SoakDuration > 0 {
		l.until = time.Now().Add(set.SoakDuration)
	}
	fmt.Fprintf(os.Stderr, "soak: running the mix (%s, %d requests at most; 0 is no bound)\n", set.SoakDuration, set.SoakRequests)
	stop := sampleRSS(e, 5*time.Second)
	r := l.run(ctx)
	samples := stop()

	end := r.Elapsed
	minute := min(time.Minute, end/2)
	firstServer, firstJava := window(samples, 0, minute)
	lastServer, lastJava := window(samples, end-minute, end+time.Second)
	mib := func(b int64) float64 { return float64(b) / (1 << 20) }
	all := r.All()
	rep.Rows = append(rep.Rows,
		row{Section: "soak", Figure: "requests", Value: float64(r.Requests), Unit: "req"},
		row{Section: "soak", Figure: "errors", Value: float64(r.Errors), Unit: "req", Target: "0"},
		row{Section: "soak", Figure: "throughput", Value: r.ReqPerSec(), Unit: "req/s"},
		row{Section: "soak", Figure: "mix p50", Value: ms(quantile(all, 0.5)), Unit: "ms"},
		row{Section: "soak", Figure: "mix p99", Value: ms(quantile(all, 0.99)), Unit: "ms"},
	)
	for _, op := range mixOps {
		rep.Rows = append(rep.Rows, row{Section: "soak", Figure: op + " p99", Value: ms(quantile(r.Latency[op], 0.99)), Unit: "ms"})
	}
	// Reference: the first minute; ratio: first over last (1 is flat).
	rep.Rows = append(rep.Rows,
		lower("soak", "server RSS, last minute (ref: first)", mib(lastServer), mib(firstServer), "MiB", ""),
	)
	if e.javaPid != 0 {
		rep.Rows = append(rep.Rows, lower("soak", "DynamoDB Local RSS, last minute (ref: first)", mib(lastJava), mib(firstJava), "MiB", ""))
	} else {
		rep.Notes = append(rep.Notes, "DynamoDB Local was not started by the soak (DYNAMODB_ENDPOINT), so its memory is not reported")
	}
	for _, err := range r.FirstErrors {
		rep.Notes = append(rep.Notes, "error: "+err.Error())
	}
	fmt.Fprintln(os.Stderr, "soak: waiting for the webhooks")
	wh, err := e.soakWebhooks(ctx, fx, hooks)
	if err != nil {
		return err
	}
	rep.Rows = append(rep.Rows, wh.rows()...)
	rep.Notes = append(rep.Notes, wh.notes()...)
	rep.Elapsed = end.Round(time.Second).String()
	printTable(w, *rep)
	if r.Errors > 0 {
		return fmt.Errorf("soak: %d of %d requests failed", r.Errors, r.Requests)
	}
	if err := wh.failure(); err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	return nil
}

// soakHooks is what the soak's webhook endpoint received.
type soakHooks struct {
	Stats hookStats
	// Newest is the users' newest actions GET /users/{id}/actions listed
	// at the end; Unreceived those of them that never arrived.
	Newest, Unreceived int
	Refused            int
	FirstRefusal       error
	Waited             time.Duration
}

// soakNewest is how many of each user's newest actions the soak's end
// looks for at the receiver.
const soakNewest = 10

// soakWebhooks waits (webhookWait at most, until none came for
// webhookStall) until s received the newest actions of every user of fx,
// then reads what it got. Each user's sequence must then run from 1 to
// its highest without a gap, which with the newest actions received
// means that none is missing.
func (e *env) soakWebhooks(ctx context.Context, fx *fixture, s *sink) (soakHooks, error) {
	var newest []string
	for _, u := range fx.users {
		var l struct {
			Actions []struct {
				ID string `json:"_id"`
			} `json:"actions"`
		}
		if err := e.doJSON(ctx, call{method: "GET", path: fmt.Sprintf("/users/%s/actions?limit=%d", u.ID, soakNewest), headers: e.admin(), want: 200}, &l); err != nil {
			return soakHooks{}, err
		}
		for _, a := range l.Actions {
			newest = append(newest, a.ID)
		}
	}
	missing := func() int {
		n := 0
		for _, id := range newest {
			if !s.has(id) {
				n++
			}
		}
		return n
	}
	start := time.Now()
	waitFor(ctx, start.Add(webhookWait), webhookStall, func() int { return s.received("") }, func() bool { return missing() == 0 })
	hooks, refused, first := s.got(func(h hook) bool { return h.Tenant == e.tenant })
	return soakHooks{Stats: analyse(hooks, true), Newest: len(newest), Unreceived: missing(), Refused: refused, FirstRefusal: first, Waited: time.Since(start)}, nil
}

// rows are the soak's webhook figures.
func (h soakHooks) rows() []row {
	st := h.Stats
	return []row{
		{Section: "soak", Figure: "webhook events received", Value: float64(st.Events), Unit: "events"},
		{Section: "soak", Figure: "webhook retries (a webhook-id again, same body)", Value: float64(st.Retries), Unit: "requests"},
		{Section: "soak", Figure: "webhook events missing", Value: float64(st.Missing + h.Unreceived), Unit: "events", Target: "0"},
		{Section: "soak", Figure: "webhook sequences out of order", Value: float64(st.OutOfOrder), Unit: "events", Target: "0"},
		{Section: "soak", Figure: "webhook-ids given to two events", Value: float64(st.Reused), Unit: "events", Target: "0"},
		{Section: "soak", Figure: "webhooks refused by the receiver (signature)", Value: float64(h.Refused), Unit: "requests", Target: "0"},
		{Section: "soak", Figure: "action → first attempt p50", Value: ms(quantile(st.Latency, 0.5)), Unit: "ms"},
		{Section: "soak", Figure: "action → first attempt p99", Value: ms(quantile(st.Latency, 0.99)), Unit: "ms"},
	}
}

// notes say how long the end waited and what was refused.
func (h soakHooks) notes() []string {
	out := []string{fmt.Sprintf("webhooks: %d events of %d scopes; the end waited %s for the users' %d newest actions, %d never arrived",
		h.Stats.Events, h.Stats.Scopes, h.Waited.Round(time.Millisecond), h.Newest, h.Unreceived)}
	if h.FirstRefusal != nil {
		out = append(out, "webhooks: the first request refused: "+h.FirstRefusal.Error())
	}
	return out
}

// failure is the soak's webhook failure: an event missing, a sequence out
// of order, a webhook-id given to a second event or a request that did
// not verify. A retry (the same id with the same body) is not one.
func (h soakHooks) failure() error {
	st := h.Stats
	if n := st.Missing + h.Unreceived; n > 0 || st.OutOfOrder > 0 || st.Reused > 0 || h.Refused > 0 {
		return fmt.Errorf("webhooks: %d events missing, %d out of order, %d webhook-ids given to two events, %d requests refused", n, st.OutOfOrder, st.Reused, h.Refused)
	}
	return nil
}
