package tenant_test

import (
	"context"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

func TestDirectInvoke(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	created, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "create", Title: "Burger Bar", Settings: &tenant.Settings{InitialPoints: 50}})
	if err != nil {
		t.Fatal(err)
	}
	id, key := created.Tenant.ID, created.ServiceKey
	if id == "" || len(key) < 40 || created.Tenant.Settings.InitialPoints != 50 {
		t.Fatalf("created = %+v", created)
	}
	admin := func(k string) ts.Headers { return ts.Headers{"x-service-auth-token", k, "x-api-version", "4"} }
	h.Do("GET", "/users", nil, admin(key)).Expect(t, 200, "")

	t.Run("RotateKey", func(t *testing.T) {
		rotated, err := h.Deps.Tenants.Handle(ctx, tenant.Request{Action: "rotateKey", TenantID: id})
		if err != nil {
			t.Fatal(err)
		}
		if rotated.ServiceKey == key {
			t.Fatal("the key did not change")
		}
		h.Do("GET", "/users", nil, admin(key)).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/users", nil, admin(rotated.ServiceKey)).Expect(t, 200, "")
	})
	t.Run("Rejected", func(t *testing.T) {
		tests := []struct {
			name string
			req  tenant.Request
			code apierr.Code
		}{
			{"UnknownAction", tenant.Request{Action: "explode"}, apierr.ValidationFailed},
			{"MissingTitle", tenant.Request{Action: "create"}, apierr.ValidationFailed},
			{"BadID", tenant.Request{Action: "create", TenantID: "Bad ID!", Title: "x"}, apierr.ValidationFailed},
			{"NegativePoints", tenant.Request{Action: "create", Title: "x", Settings: &tenant.Settings{InitialPoints: -1}}, apierr.ValidationFailed},
			{"ExistingID", tenant.Request{Action: "create", TenantID: id, Title: "x"}, apierr.Conflict},
			{"RotateUnknown", tenant.Request{Action: "rotateKey", TenantID: "no-such-tenant"}, apierr.NotFound},
			{"GetUnknown", tenant.Request{Action: "get", TenantID: "no-such-tenant"}, apierr.NotFound},
			{"SettingsMissing", tenant.Request{Action: "updateSettings", TenantID: id}, apierr.ValidationFailed},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := h.Deps.Tenants.Handle(ctx, tc.req)
				if got := apierr.CodeOf(err); got != tc.code {
					t.Errorf("code = %v, want %v (err %v)", got, tc.code, err)
				}
			})
		}
	})
	t.Run("SeedIsIdempotent", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			if _, err := h.Deps.Tenants.Seed(ctx, "seed-test", "Seed", "seed-key-0123456789"); err != nil {
				t.Fatal(err)
			}
		}
		h.Do("GET", "/users", nil, admin("seed-key-0123456789")).Expect(t, 200, "")
	})
}
