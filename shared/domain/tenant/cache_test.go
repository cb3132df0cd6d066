package tenant_test

import (
	"context"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// otherContainer is the tenants' store of another warm container: the
// same table, its own cache, the test's clock.
func otherContainer(h *ts.Harness) *tenant.Store {
	return &tenant.Store{DB: h.Deps.DB, Table: h.Deps.Config.Tables.Tenants, Cache: tenant.NewCache(), Clock: h.Clock}
}

func admin(key string) ts.Headers {
	return ts.Headers{"x-service-auth-token", key, "x-api-version", "4"}
}

// TestCacheWarmRequests: a warm container reads neither the service key's
// item nor the tenant's again; a cold one (its cache cleared) reads both.
func TestCacheWarmRequests(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	tests := []struct {
		name  string
		clear bool
		want  int
	}{
		{"Cold", true, 2},
		{"Warm", false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.clear {
				h.Deps.TenantCache.Clear()
			}
			calls := callcount.New()
			got, err := h.Deps.Base.Tenants().ByServiceKey(callcount.With(context.Background(), calls), h.ServiceKey)
			if err != nil || got.ID != h.Tenant.ID {
				t.Fatalf("ByServiceKey = %v, %v", got.ID, err)
			}
			if n := calls.Service(callcount.DynamoDB); n != tc.want {
				t.Errorf("DynamoDB calls = %d, want %d (%s)", n, tc.want, calls)
			}
		})
	}
}

// TestCacheRotatedKey: a key rotated in another container keeps working
// here for at most tenant.CacheTTL, and stops at once in the container
// that rotated it; the new key works everywhere at once.
func TestCacheRotatedKey(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	tn, old := h.NewTenant(tenant.Settings{})
	h.Do("GET", "/users", nil, admin(old)).Expect(t, 200, "") // cached here
	other := otherContainer(h)
	if _, err := other.ByServiceKey(context.Background(), old); err != nil { // cached there
		t.Fatal(err)
	}
	fresh := tenant.NewServiceKey()
	if err := other.RotateKey(context.Background(), tn.ID, fresh, h.Clock.Now()); err != nil {
		t.Fatal(err)
	}

	t.Run("RotatingContainerAtOnce", func(t *testing.T) {
		if _, err := other.ByServiceKey(context.Background(), old); err == nil {
			t.Error("the old key still works in the container that rotated it")
		}
		if got, err := other.ByServiceKey(context.Background(), fresh); err != nil || got.ID != tn.ID {
			t.Errorf("new key = %v, %v", got.ID, err)
		}
	})
	t.Run("NewKeyAtOnce", func(t *testing.T) {
		h.Do("GET", "/users", nil, admin(fresh)).Expect(t, 200, "")
	})
	t.Run("OldKeyWithinWindow", func(t *testing.T) {
		h.Clock.Advance(tenant.CacheTTL / 2)
		// This container read the tenant again for the new key: the old
		// key's cached lookup no longer agrees with it.
		h.Do("GET", "/users", nil, admin(old)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("OldKeyAfterWindow", func(t *testing.T) {
		h.Clock.Advance(tenant.CacheTTL)
		h.Do("GET", "/users", nil, admin(old)).Expect(t, 401, "UNAUTHORIZED")
	})
}

// TestCacheRotatedKeyStale: a container that knows only the old key (it
// never saw the new one) answers it from its cache until the window ends,
// and never longer.
func TestCacheRotatedKeyStale(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	tn, old := h.NewTenant(tenant.Settings{})
	h.Do("GET", "/users", nil, admin(old)).Expect(t, 200, "")
	if err := otherContainer(h).RotateKey(context.Background(), tn.ID, tenant.NewServiceKey(), h.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		advance time.Duration
		status  int
	}{
		{"WithinWindow", tenant.CacheTTL - time.Second, 200},
		{"AfterWindow", 2 * time.Second, 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Clock.Advance(tc.advance)
			h.Do("GET", "/users", nil, admin(old)).Expect(t, tc.status, "")
		})
	}
}

// TestCacheUnknownKey: an unknown key is remembered as unknown only for
// tenant.NegativeCacheTTL, so a key made in another container right after
// is refused here for at most that long.
func TestCacheUnknownKey(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	key := tenant.NewServiceKey()
	h.Do("GET", "/users", nil, admin(key)).Expect(t, 401, "UNAUTHORIZED")
	_, calls := h.DoCounted("GET", "/users", nil, admin(key))
	if got := calls.Service(callcount.DynamoDB); got != 0 {
		t.Errorf("a repeated unknown key made %d calls (%s), want 0", got, calls)
	}
	other := otherContainer(h)
	if _, _, err := (&tenant.Service{Store: other, Clock: h.Clock}).Create(context.Background(), tenant.CreateInput{Title: "Later", ServiceKey: key}); err != nil {
		t.Fatal(err)
	}
	h.Do("GET", "/users", nil, admin(key)).Expect(t, 401, "UNAUTHORIZED") // still remembered as unknown
	h.Clock.Advance(tenant.NegativeCacheTTL)
	h.Do("GET", "/users", nil, admin(key)).Expect(t, 200, "")
}

// TestCacheBounded: made-up keys cannot grow the cache beyond its bound.
func TestCacheBounded(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	h.Deps.TenantCache.Clear()
	for i := 0; i < tenant.CacheSize+50; i++ {
		if _, err := h.Deps.Base.Tenants().ByServiceKey(context.Background(), tenant.NewServiceKey()); err == nil {
			t.Fatal("a random key was accepted")
		}
	}
	if got := h.Deps.TenantCache.Len(); got > tenant.CacheSize {
		t.Errorf("cache holds %d entries, bound %d", got, tenant.CacheSize)
	}
	h.Do("GET", "/users", nil, admin(h.ServiceKey)).Expect(t, 200, "") // the real key still works
}

// TestCacheSettings: a settings change applies at once in the container
// that made it and within tenant.CacheTTL in the others.
func TestCacheSettings(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	other := otherContainer(h)
	if _, err := other.Get(ctx, h.Tenant.ID); err != nil {
		t.Fatal(err)
	}
	h.SetSettings(tenant.Settings{InitialPoints: 7})
	points := func(s *tenant.Store) int {
		t.Helper()
		got, err := s.Get(ctx, h.Tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.Settings.InitialPoints
	}
	if got := points(h.Deps.Base.Tenants()); got != 7 {
		t.Errorf("this container: initialPoints = %d, want 7", got)
	}
	if got := points(other); got != 0 {
		t.Errorf("other container within the window: initialPoints = %d, want the cached 0", got)
	}
	h.Clock.Advance(tenant.CacheTTL)
	if got := points(other); got != 7 {
		t.Errorf("other container after the window: initialPoints = %d, want 7", got)
	}
}
