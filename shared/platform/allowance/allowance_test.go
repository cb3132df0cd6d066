package allowance_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/allowance"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// TestTakeUnderConcurrency takes 100 uses of an allowance of 30 at once:
// exactly 30 pass, each refusal says how long until the window ends, a
// use given back frees a slot, and the next window starts afresh.
func TestTakeUnderConcurrency(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	clk := &clock.Manual{}
	now := clk.Now()
	clk.Advance(now.Truncate(time.Hour).Add(time.Hour).Sub(now))
	c := &allowance.Counter{DB: h.Deps.DB, Table: h.Deps.Config.Tables.Sessions, Clock: clk}
	l := allowance.Limit{Name: "TEST", Max: 30, Window: time.Hour}
	key := ts.NewPeer()
	ctx := context.Background()

	var mu sync.Mutex
	var uses []allowance.Use
	refused := 0
	var wg sync.WaitGroup
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := c.Take(ctx, l, key)
			mu.Lock()
			defer mu.Unlock()
			var ex *allowance.Exhausted
			switch {
			case err == nil:
				uses = append(uses, u)
			case errors.As(err, &ex):
				refused++
				if ex.RetryAfter < time.Second || ex.RetryAfter > time.Hour {
					t.Errorf("RetryAfter = %s, want 1s to 1h", ex.RetryAfter)
				}
			default:
				t.Errorf("take: %v", err)
			}
		}()
	}
	wg.Wait()
	if len(uses) != 30 || refused != 70 {
		t.Fatalf("%d uses granted, %d refused; want 30 and 70", len(uses), refused)
	}
	t.Run("GiveBack", func(t *testing.T) {
		if err := c.GiveBack(ctx, uses[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Take(ctx, l, key); err != nil {
			t.Errorf("after a give-back: %v", err)
		}
		if _, err := c.Take(ctx, l, key); err == nil {
			t.Errorf("a use beyond the allowance was granted")
		}
	})
	t.Run("OtherKey", func(t *testing.T) {
		if _, err := c.Take(ctx, l, ts.NewPeer()); err != nil {
			t.Errorf("another key: %v", err)
		}
	})
	t.Run("NextWindow", func(t *testing.T) {
		clk.Advance(time.Hour)
		if _, err := c.Take(ctx, l, key); err != nil {
			t.Errorf("next window: %v", err)
		}
	})
	t.Run("Off", func(t *testing.T) {
		if _, err := c.Take(ctx, allowance.Limit{Name: "TEST", Max: 0, Window: time.Hour}, key); err != nil {
			t.Errorf("a limit of 0 refused: %v", err)
		}
	})
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, want string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::9", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"not an address", "not an address"},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			t.Parallel()
			if got := allowance.ClientKey(tc.addr); got != tc.want {
				t.Errorf("ClientKey(%q) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
}
