package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/allowance"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// TestCaps reserves SMS and e-mails of one tenant past its caps: the
// refusal is MESSAGE_LIMIT_REACHED with the time to the next hour and
// records MessagesRefused for the tenant; the channels and tenants count
// apart, and a cancelled reservation frees its slot.
func TestCaps(t *testing.T) {
	// Not parallel: it captures the default logger (slog.SetDefault),
	// which every new harness replaces.
	h := ts.New(t)
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	clk := &clock.Manual{}
	now := clk.Now()
	clk.Advance(now.Truncate(time.Hour).Add(time.Hour).Sub(now))
	caps := &notify.Caps{
		Counter:    &allowance.Counter{DB: h.Deps.DB, Table: h.Deps.Config.Tables.Sessions, Clock: clk},
		SMSPerHour: 2, EmailsPerHour: 1,
	}
	ctx := context.Background()
	tenantID := h.Tenant.ID
	var first notify.Reservation
	for i := range 2 {
		r, err := caps.Reserve(ctx, tenantID, notify.SMS, nil)
		if err != nil {
			t.Fatalf("SMS %d under the cap: %v", i, err)
		}
		if i == 0 {
			first = r
		}
	}
	if logs.Len() != 0 {
		t.Errorf("log lines under the cap: %s", logs.String())
	}
	_, err := caps.Reserve(ctx, tenantID, notify.SMS, nil)
	e, ok := apierr.As(err)
	if !ok || e.Code != apierr.MessageLimitReached || e.RetryAfter < time.Second || e.RetryAfter > time.Hour {
		t.Fatalf("SMS past the cap: %v, want MESSAGE_LIMIT_REACHED with a Retry-After up to an hour", err)
	}
	if e.Code.Status() != 429 {
		t.Errorf("status %d, want 429", e.Code.Status())
	}
	var metric map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "metric" {
			metric = m
		}
	}
	if metric == nil || metric[metrics.MessagesRefused] != float64(1) || metric["Tenant"] != tenantID {
		t.Errorf("no MessagesRefused metric line for the tenant in %s", logs.String())
	}

	t.Run("EmailsApart", func(t *testing.T) {
		if _, err := caps.Reserve(ctx, tenantID, notify.Email, nil); err != nil {
			t.Errorf("e-mail: %v", err)
		}
		if _, err := caps.Reserve(ctx, tenantID, notify.Email, nil); apierr.CodeOf(err) != apierr.MessageLimitReached {
			t.Errorf("second e-mail: %v, want MESSAGE_LIMIT_REACHED", err)
		}
	})
	t.Run("OtherTenant", func(t *testing.T) {
		other, _ := h.NewTenant(h.Tenant.Settings)
		if _, err := caps.Reserve(ctx, other.ID, notify.SMS, nil); err != nil {
			t.Errorf("another tenant: %v", err)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		caps.Cancel(ctx, first)
		if _, err := caps.Reserve(ctx, tenantID, notify.SMS, nil); err != nil {
			t.Errorf("after a cancel: %v", err)
		}
	})
	t.Run("OwnCaps", func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			operator int
			own      int
			want     int // messages let through before the refusal
		}{
			{"OwnLower", 2, 1, 1},
			{"OwnHigherIgnored", 2, 5, 2},
			{"OwnZeroRefusesAll", 2, 0, 0},
			{"OperatorOffOwnApplies", 0, 3, 3},
		} {
			t.Run(tc.name, func(t *testing.T) {
				other, _ := h.NewTenant(h.Tenant.Settings)
				c := &notify.Caps{Counter: caps.Counter, SMSPerHour: tc.operator}
				own := tc.own
				for i := range tc.want {
					if _, err := c.Reserve(ctx, other.ID, notify.SMS, &own); err != nil {
						t.Fatalf("SMS %d under the cap: %v", i, err)
					}
				}
				_, err := c.Reserve(ctx, other.ID, notify.SMS, &own)
				if e, ok := apierr.As(err); !ok || e.Code != apierr.MessageLimitReached || e.RetryAfter <= 0 || e.RetryAfter > time.Hour {
					t.Errorf("SMS %d: %v, want MESSAGE_LIMIT_REACHED with a Retry-After up to an hour", tc.want+1, err)
				}
			})
		}
	})
	t.Run("NextHour", func(t *testing.T) {
		clk.Advance(time.Hour)
		if _, err := caps.Reserve(ctx, tenantID, notify.SMS, nil); err != nil {
			t.Errorf("next hour: %v", err)
		}
	})
}
