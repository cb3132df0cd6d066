package webhook_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/stdwebhook"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// hit is one request a receiver got.
type hit struct {
	ID, Timestamp, Signature string
	Body                     []byte
	Event                    event
	At                       time.Time
}

// event is a delivered body.
type event struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Timestamp string         `json:"timestamp"`
	TenantID  string         `json:"tenantId"`
	UserID    string         `json:"userId"`
	Sequence  int64          `json:"sequence"`
	Data      map[string]any `json:"data"`
}

// receiver is a webhook endpoint on 127.0.0.1 that records every request
// and answers with what answer says (200 when nil).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hits   []hit
	answer func(n int, h hit) (status int, header http.Header)
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		h := hit{ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"), Signature: req.Header.Get("webhook-signature"), Body: b, At: time.Now()}
		_ = json.Unmarshal(b, &h.Event)
		r.mu.Lock()
		n := len(r.hits)
		r.hits = append(r.hits, h)
		answer := r.answer
		r.mu.Unlock()
		status := 200
		if answer != nil {
			var hd http.Header
			status, hd = answer(n, h)
			for k, v := range hd {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(r.Close)
	return r
}

// got returns the requests so far.
func (r *receiver) got() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

// wait waits (a minute at most) until the receiver holds n requests.
func (r *receiver) wait(t *testing.T, h *ts.Harness, n int) []hit {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if got := r.got(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver got %d requests within a minute, want %d", len(r.got()), n)
		}
		h.WaitStreams()
		h.WaitQueues()
		time.Sleep(20 * time.Millisecond)
	}
}

// verify checks a request's signature with secret as a receiver does
// (the published algorithm: stdwebhook.Verify), at the attempt's own
// timestamp.
func verify(t *testing.T, secret string, h hit) {
	t.Helper()
	hd := http.Header{}
	hd.Set("webhook-id", h.ID)
	hd.Set("webhook-timestamp", h.Timestamp)
	hd.Set("webhook-signature", h.Signature)
	var sec int64
	_ = json.Unmarshal([]byte(h.Timestamp), &sec)
	if err := stdwebhook.Verify(secret, hd, h.Body, time.Unix(sec, 0), time.Minute); err != nil {
		t.Errorf("event %s: signature does not verify with the endpoint's secret: %v", h.ID, err)
	}
}

// register creates an endpoint on url and returns its id and secret.
func register(t *testing.T, h *ts.Harness, url string, types ...string) (id, secret string) {
	t.Helper()
	body := map[string]any{"url": url, "description": "test receiver"}
	if len(types) > 0 {
		body["eventTypes"] = types
	}
	m := h.Do("POST", "/webhooks/endpoints", body, h.Admin()).Expect(t, 201, "").Map(t)
	return m["_id"].(string), m["secret"].(string)
}
