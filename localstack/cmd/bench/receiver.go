package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/stdwebhook"
)

// The webhook receiver of the webhooks section and of the soak: an HTTP
// server on 127.0.0.1 in the driver's process with one path per endpoint
// (a sink). Each request's signature is checked with the sink's secret as
// a receiver checks it (shared/platform/stdwebhook), the request is
// recorded as it arrives (its webhook-id, the time, the event's timestamp,
// user and sequence, a hash of the body) and answered 204, at once or
// after the sink's delay (the slow endpoint).

// receiver is the HTTP server and its sinks.
type receiver struct {
	base string // http://127.0.0.1:<port>
	srv  *http.Server

	mu    sync.Mutex
	sinks map[string]*sink
}

// hook is one request a sink took.
type hook struct {
	ID     string // webhook-id
	Type   string
	Tenant string
	UserID string // "" for an event of the tenant
	Seq    int64
	Stamp  time.Time // the event's timestamp
	At     time.Time // when the request arrived
	Sum    uint64    // FNV-1a of the body: a retry carries the same bytes
	Size   int
}

// sink is one endpoint's path on the receiver and what it received.
type sink struct {
	name  string
	url   string
	delay time.Duration // how long it takes to answer

	mu     sync.Mutex
	secret string
	ready  chan struct{} // closed when the secret is known
	hooks  []hook
	sums   map[string]uint64 // the first body of each webhook-id
	byType map[string]int    // webhook-ids by event type
	bad    int               // requests refused: bad signature or body
	badErr error             // the first of them
}

// startReceiver listens on a free port of 127.0.0.1.
func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	r := &receiver{base: "http://" + ln.Addr().String(), sinks: map[string]*sink{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks/{sink}", r.serve)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// close stops the server at once: a slow sink's requests in flight end
// without an answer.
func (r *receiver) close() { _ = r.srv.Close() }

// sink adds the path of an endpoint that answers after delay.
func (r *receiver) sink(name string, delay time.Duration) *sink {
	s := &sink{name: name, url: r.base + "/hooks/" + name, delay: delay, ready: make(chan struct{}),
		sums: map[string]uint64{}, byType: map[string]int{}}
	r.mu.Lock()
	r.sinks[name] = s
	r.mu.Unlock()
	return s
}

// setSecret gives the sink its endpoint's secret.
func (s *sink) setSecret(secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.secret == "" {
		s.secret = secret
		close(s.ready)
	}
}

// event is the part of a delivered body the receiver reads.
type event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	TenantID  string `json:"tenantId"`
	UserID    string `json:"userId"`
	Sequence  int64  `json:"sequence"`
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	at := time.Now()
	r.mu.Lock()
	s := r.sinks[req.PathValue("sink")]
	r.mu.Unlock()
	if s == nil {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 1<<20))
	if err != nil {
		return
	}
	// An event could only come before the secret if the platform sent
	// one the moment the endpoint was created; wait for it a little.
	select {
	case <-s.ready:
	case <-time.After(5 * time.Second):
	case <-req.Context().Done():
		return
	}
	s.mu.Lock()
	secret := s.secret
	s.mu.Unlock()
	h, err := parseHook(secret, req.Header, body, at)
	if err != nil {
		s.refuse(err)
		http.Error(w, "invalid webhook", http.StatusUnauthorized)
		return
	}
	s.record(h)
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-req.Context().Done():
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// parseHook verifies a request's signature with secret, as a receiver
// does, and reads its event.
func parseHook(secret string, header http.Header, body []byte, at time.Time) (hook, error) {
	if secret == "" {
		return hook{}, errors.New("a webhook came before its endpoint's secret was known")
	}
	if err := stdwebhook.Verify(secret, header, body, at, 0); err != nil {
		return hook{}, err
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		return hook{}, fmt.Errorf("webhook %s: the body is not an event: %w", header.Get(stdwebhook.HeaderID), err)
	}
	id := header.Get(stdwebhook.HeaderID)
	if ev.ID != id {
		return hook{}, fmt.Errorf("webhook %s: the body's id is %q", id, ev.ID)
	}
	stamp, err := time.Parse(time.RFC3339Nano, ev.Timestamp)
	if err != nil {
		return hook{}, fmt.Errorf("webhook %s: timestamp %q: %w", id, ev.Timestamp, err)
	}
	f := fnv.New64a()
	_, _ = f.Write(body)
	return hook{ID: id, Type: ev.Type, Tenant: ev.TenantID, UserID: ev.UserID, Seq: ev.Sequence, Stamp: stamp, At: at, Sum: f.Sum64(), Size: len(body)}, nil
}

func (s *sink) refuse(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bad++
	if s.badErr == nil {
		s.badErr = err
	}
}

func (s *sink) record(h hook) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, h)
	if _, ok := s.sums[h.ID]; !ok {
		s.sums[h.ID] = h.Sum
		s.byType[h.Type]++
	}
}

// received returns how many events of type typ ("" for any) the sink
// got, each webhook-id once.
func (s *sink) received(typ string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if typ == "" {
		return len(s.sums)
	}
	return s.byType[typ]
}

// has reports whether the sink got webhook-id id.
func (s *sink) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sums[id]
	return ok
}

// got returns the requests the sink took, in the order they arrived, of
// the events keep accepts (nil: all), and the requests it refused.
func (s *sink) got(keep func(hook) bool) (hooks []hook, refused int, firstRefusal error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.hooks {
		if keep == nil || keep(h) {
			hooks = append(hooks, h)
		}
	}
	return hooks, s.bad, s.badErr
}

// waitFor waits until done reports true, checking every 50 ms, and gives
// up when progress (a number that grows as events arrive) stalls for
// stall, or at deadline. It reports whether done came true.
func waitFor(ctx context.Context, deadline time.Time, stall time.Duration, progress func() int, done func() bool) bool {
	last, lastAt := progress(), time.Now()
	for !done() {
		if p := progress(); p != last {
			last, lastAt = p, time.Now()
		}
		if time.Since(lastAt) > stall || time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
	return true
}

// hookStats is what a run of webhooks showed at a receiver.
type hookStats struct {
	// Events is the distinct webhook-ids; Retries the requests that
	// repeated one with the same body (a retry of a delivery); Reused
	// those that repeated one with another body (an id given to a
	// second event).
	Events, Retries, Reused int
	// OutOfOrder counts new events whose sequence was not above the last
	// one of their scope (user, or the tenant) when they arrived.
	OutOfOrder int
	// Missing counts the sequences absent between the lowest and the
	// highest of each scope (and below the lowest of a user's, from 1,
	// when the run saw every event of its users from their first).
	Missing int
	// Latency is each event's first arrival less its timestamp, sorted.
	Latency []time.Duration
	// First and Last are the arrivals of the first and the last event;
	// Bytes the size of the events' bodies, each once.
	First, Last time.Time
	Bytes       int
	// Scopes is the number of scopes (users, and the tenant) seen.
	Scopes int
}

// analyse reads the requests of a run, in the order they arrived. fromOne
// says that every user's first event (sequence 1) belongs to the run.
func analyse(hooks []hook, fromOne bool) hookStats {
	var st hookStats
	sums := map[string]uint64{}
	last := map[string]int64{}
	seqs := map[string]map[int64]bool{}
	for _, h := range hooks {
		if sum, ok := sums[h.ID]; ok {
			if sum == h.Sum {
				st.Retries++
			} else {
				st.Reused++
			}
			continue
		}
		sums[h.ID] = h.Sum
		st.Events++
		st.Bytes += h.Size
		st.Latency = append(st.Latency, h.At.Sub(h.Stamp))
		if st.First.IsZero() || h.At.Before(st.First) {
			st.First = h.At
		}
		if h.At.After(st.Last) {
			st.Last = h.At
		}
		if h.Seq == 0 {
			continue // not an action (a test event): no sequence
		}
		scope := h.UserID
		if prev, ok := last[scope]; ok && h.Seq <= prev {
			st.OutOfOrder++
		} else {
			last[scope] = h.Seq
		}
		if seqs[scope] == nil {
			seqs[scope] = map[int64]bool{}
		}
		seqs[scope][h.Seq] = true
	}
	for scope, set := range seqs {
		lo, hi, first := int64(0), int64(0), true
		for q := range set {
			if first || q < lo {
				lo = q
			}
			if first || q > hi {
				hi = q
			}
			first = false
		}
		if fromOne && scope != "" {
			lo = 1
		}
		st.Missing += int(hi-lo+1) - len(set)
	}
	st.Scopes = len(seqs)
	slices.Sort(st.Latency)
	return st
}

// rate is the events a second from start to the last arrival.
func (st hookStats) rate(start time.Time) float64 {
	if st.Events == 0 || !st.Last.After(start) {
		return 0
	}
	return float64(st.Events) / st.Last.Sub(start).Seconds()
}
