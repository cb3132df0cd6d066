package main

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/stdwebhook"
)

func TestQuantile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"Empty", nil, 0.5, 0},
		{"One", []time.Duration{7}, 0.99, 7},
		{"Median", hundred, 0.5, 50 * time.Millisecond},
		{"P99", hundred, 0.99, 99 * time.Millisecond},
		{"Max", hundred, 1, 100 * time.Millisecond},
		{"Min", hundred, 0, time.Millisecond},
		{"P99OfTen", hundred[:10], 0.99, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("quantile(%v) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}

// at is a time n milliseconds after a fixed start.
func at(n int) time.Time {
	return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Millisecond)
}

// h is a request of event id of user's sequence seq, arriving at
// millisecond arrive for an event stamped at millisecond stamp.
func h(id, user string, seq int64, stamp, arrive int) hook {
	return hook{ID: id, UserID: user, Seq: seq, Stamp: at(stamp), At: at(arrive), Sum: uint64(len(id)) + uint64(seq), Size: 100}
}

func TestAnalyse(t *testing.T) {
	tests := []struct {
		name    string
		hooks   []hook
		fromOne bool
		want    hookStats // Events, Retries, Reused, OutOfOrder, Missing, Scopes
	}{
		{"InOrder", []hook{h("a", "u1", 1, 0, 5), h("b", "u2", 1, 0, 6), h("c", "u1", 2, 1, 7)}, true,
			hookStats{Events: 3, Scopes: 2}},
		{"Retry", []hook{h("a", "u1", 1, 0, 5), h("a", "u1", 1, 0, 9), h("b", "u1", 2, 1, 10)}, true,
			hookStats{Events: 2, Retries: 1, Scopes: 1}},
		{"IDGivenToAnotherEvent", []hook{h("a", "u1", 1, 0, 5), {ID: "a", UserID: "u1", Seq: 2, Sum: 99}}, true,
			hookStats{Events: 1, Reused: 1, Scopes: 1}},
		{"OutOfOrder", []hook{h("a", "u1", 1, 0, 5), h("c", "u1", 3, 2, 6), h("b", "u1", 2, 1, 7)}, true,
			hookStats{Events: 3, OutOfOrder: 1, Scopes: 1}},
		{"TwoEventsOneSequence", []hook{h("a", "u1", 1, 0, 5), h("b", "u1", 2, 1, 6), h("c", "u1", 2, 1, 7)}, true,
			hookStats{Events: 3, OutOfOrder: 1, Scopes: 1}},
		{"Gap", []hook{h("a", "u1", 1, 0, 5), h("b", "u1", 2, 1, 6), h("d", "u1", 4, 3, 7)}, true,
			hookStats{Events: 3, Missing: 1, Scopes: 1}},
		{"FirstMissing", []hook{h("c", "u1", 3, 0, 5), h("d", "u1", 4, 1, 6)}, true,
			hookStats{Events: 2, Missing: 2, Scopes: 1}},
		{"NotFromOne", []hook{h("c", "u1", 3, 0, 5), h("d", "u1", 4, 1, 6)}, false,
			hookStats{Events: 2, Scopes: 1}},
		{"TenantNotFromOne", []hook{h("c", "", 7, 0, 5), h("d", "", 8, 1, 6), h("e", "", 10, 1, 7)}, true,
			hookStats{Events: 3, Missing: 1, Scopes: 1}},
		{"TestEventOfSequenceZero", []hook{h("t", "", 0, 0, 5), h("c", "", 7, 0, 6)}, false,
			hookStats{Events: 2, Scopes: 1}},
		{"None", nil, true, hookStats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := analyse(tt.hooks, tt.fromOne)
			g := [6]int{got.Events, got.Retries, got.Reused, got.OutOfOrder, got.Missing, got.Scopes}
			w := [6]int{tt.want.Events, tt.want.Retries, tt.want.Reused, tt.want.OutOfOrder, tt.want.Missing, tt.want.Scopes}
			if g != w {
				t.Errorf("analyse = events %d, retries %d, reused %d, out of order %d, missing %d, scopes %d; want %v", g[0], g[1], g[2], g[3], g[4], g[5], w)
			}
			if len(got.Latency) != got.Events || !slices.IsSorted(got.Latency) {
				t.Errorf("latencies %v: want one per event, sorted", got.Latency)
			}
		})
	}
}

func TestAnalyseTimes(t *testing.T) {
	// Arrivals out of time order (two groups at once): the latencies are
	// each event's first arrival less its timestamp, a retry not counted.
	st := analyse([]hook{h("a", "u1", 1, 0, 30), h("b", "u2", 1, 5, 10), h("a", "u1", 1, 0, 5000), h("c", "u2", 2, 20, 400)}, true)
	want := []time.Duration{5 * time.Millisecond, 30 * time.Millisecond, 380 * time.Millisecond}
	if !slices.Equal(st.Latency, want) {
		t.Errorf("latencies = %v, want %v", st.Latency, want)
	}
	if !st.First.Equal(at(10)) || !st.Last.Equal(at(400)) {
		t.Errorf("first, last = %v, %v; want the arrivals at 10 and 400 ms", st.First, st.Last)
	}
	if got := st.rate(at(0)); got != 3/0.4 {
		t.Errorf("rate = %v, want 3 events in 400 ms", got)
	}
	if st.Bytes != 300 {
		t.Errorf("bytes = %d, want 300 (each event once)", st.Bytes)
	}
}

func TestParseHook(t *testing.T) {
	secret, err := stdwebhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := stdwebhook.NewSecret()
	now := time.Now()
	body := []byte(`{"id":"6745a3c1e2f0a1b2c3d4e5f6","type":"BALANCE_CREDITED","timestamp":"2026-11-29T12:30:00.125Z","tenantId":"t1","userId":"u1","sequence":42,"data":{}}`)
	signed := func(secret, id string, body []byte) ([]byte, map[string][]string) {
		hd, err := stdwebhook.Headers([]string{secret}, id, now, body)
		if err != nil {
			t.Fatal(err)
		}
		return body, hd
	}
	tests := []struct {
		name    string
		secret  string
		id      string
		body    []byte
		tamper  bool
		wantErr error
	}{
		{"Valid", secret, "6745a3c1e2f0a1b2c3d4e5f6", body, false, nil},
		{"OtherSecret", other, "6745a3c1e2f0a1b2c3d4e5f6", body, false, stdwebhook.ErrInvalidSignature},
		{"BodyChanged", secret, "6745a3c1e2f0a1b2c3d4e5f6", body, true, stdwebhook.ErrInvalidSignature},
		{"IDNotTheBody's", secret, "6745a3c1e2f0a1b2c3d4e5f7", body, false, errAny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, hd := signed(tt.secret, tt.id, tt.body)
			if tt.tamper {
				b = append([]byte(nil), b...)
				b[len(b)-2] = ' '
			}
			got, err := parseHook(secret, hd, b, now)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("parseHook: %v", err)
			case tt.wantErr == errAny && err == nil, tt.wantErr != nil && tt.wantErr != errAny && !errors.Is(err, tt.wantErr):
				t.Fatalf("parseHook error = %v, want %v", err, tt.wantErr)
			case tt.wantErr != nil:
				return
			}
			if got.UserID != "u1" || got.Seq != 42 || got.Type != "BALANCE_CREDITED" || got.Tenant != "t1" || got.Size != len(body) ||
				!got.Stamp.Equal(time.Date(2026, 11, 29, 12, 30, 0, 125e6, time.UTC)) {
				t.Errorf("parseHook = %+v", got)
			}
		})
	}
}

// errAny stands for any error.
var errAny = errors.New("any error")

func TestRawEvents(t *testing.T) {
	evs := newRawEvents("bench1234", []string{"u1", "u2"}, 1500)
	for i, want := range []struct {
		u   int
		seq int64
	}{{0, 1}, {1, 1}, {0, 2}} {
		id, body, err := evs.next(want.u)
		if err != nil {
			t.Fatal(err)
		}
		if len(body) < 1500 || len(body) > 1510 {
			t.Errorf("event %d: %d bytes, want about 1500", i, len(body))
		}
		var ev event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.ID != id || ev.UserID != evs.users[want.u] || ev.Sequence != want.seq || ev.Type != rawType || ev.TenantID != "bench1234" {
			t.Errorf("event %d = %+v, want user %s's sequence %d", i, ev, evs.users[want.u], want.seq)
		}
		if _, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err != nil {
			t.Errorf("event %d: timestamp: %v", i, err)
		}
	}
}
