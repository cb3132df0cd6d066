package checkin_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestSign(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event":"checkin"}`)
	sig := checkin.Sign("s3cret", "1700000000", body)
	// Reference value: printf '1700000000.{"event":"checkin"}' | openssl dgst -sha256 -hmac s3cret
	if sig != "sha256=141226bfb347ba3b5ee1b4e5e1ecfe4cdc397e32173a562d379f5c2cb9864f29" {
		t.Errorf("signature = %s", sig)
	}
	tests := []struct {
		name   string
		secret string
		ts     string
		body   []byte
		sig    string
		want   bool
	}{
		{"Valid", "s3cret", "1700000000", body, sig, true},
		{"WrongSecret", "other", "1700000000", body, sig, false},
		{"OtherTimestamp", "s3cret", "1700000001", body, sig, false},
		{"TamperedBody", "s3cret", "1700000000", []byte(`{"event":"checkout"}`), sig, false},
		{"Garbage", "s3cret", "1700000000", body, "sha256=00", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkin.Verify(tc.secret, tc.ts, tc.body, tc.sig); got != tc.want {
				t.Errorf("Verify = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPOSNotifications checks the notifications a tenant's POS receives and
// that a failing or slow POS never changes the API's answers.
func TestPOSNotifications(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	cafe, bar := addLocation(t, h, h.Admin(), "Cafe"), addLocation(t, h, h.Admin(), "Bar")
	p := newPOS(t)
	const secret = "pos-shared-secret"
	h.SetSettings(tenant.Settings{POSEndpoint: p.URL + "/hooks/platform", POSSecret: secret})
	h.Deps.Checkins.POS.Timeout = 300 * time.Millisecond
	id, token := photoUser(t, h, "Pia", "Pos")

	// check verifies one notification and returns its payload.
	check := func(t *testing.T, r posRequest, event string) checkin.Notification {
		t.Helper()
		stamp := r.Header.Get(checkin.HeaderTimestamp)
		sent, err := strconv.ParseInt(stamp, 10, 64)
		if err != nil || time.Since(time.Unix(sent, 0)).Abs() > time.Hour {
			t.Errorf("timestamp header %q", stamp)
		}
		if !checkin.Verify(secret, stamp, r.Body, r.Header.Get(checkin.HeaderSignature)) {
			t.Errorf("signature %q does not verify", r.Header.Get(checkin.HeaderSignature))
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get(checkin.HeaderEvent) != event || r.Header.Get(checkin.HeaderDelivery) == "" {
			t.Errorf("headers = %v", r.Header)
		}
		var n checkin.Notification
		if err := json.Unmarshal(r.Body, &n); err != nil {
			t.Fatalf("payload %s: %v", r.Body, err)
		}
		var raw map[string]any
		_ = json.Unmarshal(r.Body, &raw)
		for _, k := range []string{"event", "data", "options"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("payload has no %s: %s", k, r.Body)
			}
		}
		if n.Event != event || n.Data.UserID != id || n.Data.TenantID != h.Tenant.ID {
			t.Errorf("payload = %s", r.Body)
		}
		return n
	}

	var first map[string]any
	t.Run("Checkin", func(t *testing.T) {
		first = h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": cafe, "trigger": "BEACON"}, ts.Token(token)).Expect(t, 201, "").Map(t)
		reqs := p.take()
		if len(reqs) != 1 {
			t.Fatalf("POS received %d notifications, want 1", len(reqs))
		}
		n := check(t, reqs[0], checkin.EventCheckin)
		if n.Data.ID != first["_id"] || n.Data.LocationID != cafe || n.Data.Trigger != "BEACON" || n.Data.UserFullName != "Pia Pos" {
			t.Errorf("data = %+v", n.Data)
		}
		if n.Options.ExpiresAt == "" || n.Options.ReplacedCheckinID != "" || n.Options.Reason != "" {
			t.Errorf("options = %+v", n.Options)
		}
	})
	t.Run("CheckinElsewhere", func(t *testing.T) {
		second := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": bar}, ts.Token(token)).Expect(t, 201, "").Map(t)
		reqs := p.take()
		if len(reqs) != 2 {
			t.Fatalf("POS received %d notifications, want checkout and checkin", len(reqs))
		}
		byEvent := map[string]posRequest{}
		for _, r := range reqs {
			byEvent[r.Header.Get(checkin.HeaderEvent)] = r
		}
		out := check(t, byEvent[checkin.EventCheckout], checkin.EventCheckout)
		if out.Data.ID != first["_id"] || out.Options.Reason != checkin.ReasonCheckedInElsewhere {
			t.Errorf("checkout = %+v", out)
		}
		in := check(t, byEvent[checkin.EventCheckin], checkin.EventCheckin)
		if in.Data.ID != second["_id"] || in.Options.ReplacedCheckinID != first["_id"] {
			t.Errorf("checkin = %+v", in)
		}
	})
	t.Run("Checkout", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 204, "")
		reqs := p.take()
		if len(reqs) != 1 {
			t.Fatalf("POS received %d notifications, want 1", len(reqs))
		}
		n := check(t, reqs[0], checkin.EventCheckout)
		if n.Data.LocationID != bar || n.Options.Reason != checkin.ReasonRequested {
			t.Errorf("checkout = %+v", n)
		}
	})
	t.Run("RefusedCheckinNotifiesNothing", func(t *testing.T) {
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": "nowhere"}, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		if reqs := p.take(); len(reqs) != 0 {
			t.Errorf("POS received %d notifications", len(reqs))
		}
	})

	failures := []struct {
		name  string
		setup func()
	}{
		{"POSAnswers500", func() { p.status.Store(500) }},
		{"POSAnswersRedirect", func() { p.status.Store(302) }},
		{"POSHangs", func() { p.status.Store(0); p.block.Store(true) }},
		{"POSUnreachable", func() {
			p.block.Store(false)
			h.SetSettings(tenant.Settings{POSEndpoint: "http://127.0.0.1:1/unreachable", POSSecret: secret})
		}},
		{"POSBadURL", func() { h.SetSettings(tenant.Settings{POSEndpoint: "::not a url", POSSecret: secret}) }},
	}
	for _, tc := range failures {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup()
			start := time.Now()
			c := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": cafe}, ts.Token(token)).Expect(t, 201, "").Map(t)
			if c["locationId"] != cafe {
				t.Errorf("check-in = %v", c)
			}
			h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 204, "")
			if got := userCheckins(t, h, id); len(got) != 0 {
				t.Errorf("check-ins = %v", got)
			}
			// Each call waited at most the POS timeout (300ms here), not
			// for the hanging POS; generous bound for slow machines.
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("calls took %s", d)
			}
			p.take()
		})
	}
	t.Run("Unsigned", func(t *testing.T) {
		p.status.Store(0)
		h.SetSettings(tenant.Settings{POSEndpoint: p.URL})
		h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": cafe}, ts.Token(token)).Expect(t, 201, "")
		reqs := p.take()
		if len(reqs) != 1 || reqs[0].Header.Get(checkin.HeaderSignature) != "" || reqs[0].Header.Get(checkin.HeaderTimestamp) == "" {
			t.Errorf("unsigned notification: %d requests", len(reqs))
		}
	})
	t.Run("NoEndpoint", func(t *testing.T) {
		h.SetSettings(tenant.Settings{})
		h.Do("DELETE", "/users/"+id+"/checkins", nil, ts.Token(token)).Expect(t, 204, "")
		if reqs := p.take(); len(reqs) != 0 {
			t.Errorf("POS without an endpoint received %d notifications", len(reqs))
		}
	})
}
