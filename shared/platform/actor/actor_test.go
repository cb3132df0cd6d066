package actor_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

func TestRequire(t *testing.T) {
	var (
		nobody    = actor.Actor{}
		anonymous = actor.Actor{TenantID: "t"}
		user      = actor.Actor{TenantID: "t", UserID: "u1", Roles: []string{actor.RoleUser}}
		admin     = actor.Actor{TenantID: "t", UserID: "a1", Roles: []string{actor.RoleAdmin}}
		service   = actor.Actor{TenantID: "t", Service: true}
	)
	const (
		noTenant = "header x-application-id or a token is required"
		noAuth   = "authentication required"
		noAdmin  = "an admin session or service key is required"
		noUser   = "user not found"
	)
	for _, c := range []struct {
		name    string
		err     error
		code    apierr.Code
		message string
	}{
		{"TenantRefusesNobody", nobody.RequireTenant(), apierr.Unauthorized, noTenant},
		{"TenantServesAnonymous", anonymous.RequireTenant(), "", ""},
		{"AuthRefusesAnonymous", anonymous.RequireAuth(), apierr.Unauthorized, noAuth},
		{"AuthServesAUser", user.RequireAuth(), "", ""},
		{"AuthServesTheServiceKey", service.RequireAuth(), "", ""},
		{"AdminRefusesAUser", user.RequireAdmin(), apierr.Unauthorized, noAdmin},
		{"AdminServesAnAdmin", admin.RequireAdmin(), "", ""},
		{"AdminServesTheServiceKey", service.RequireAdmin(), "", ""},
		{"UserRefusesAnonymousFirst", anonymous.RequireUser("not an id"), apierr.Unauthorized, noAuth},
		{"UserServesThemselves", user.RequireUser("u1"), "", ""},
		{"UserHidesAnotherUser", user.RequireUser("u2"), apierr.NotFound, noUser},
		{"UserRefusesABadID", admin.RequireUser("a/b"), apierr.NotFound, noUser},
		{"UserServesAnAdmin", admin.RequireUser("u2"), "", ""},
		{"UserServesTheServiceKey", service.RequireUser("u2"), "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.code == "" {
				if c.err != nil {
					t.Fatalf("err = %v, want nil", c.err)
				}
				return
			}
			e, ok := apierr.As(c.err)
			if !ok || e.Code != c.code || e.Message != c.message {
				t.Fatalf("err = %v, want %s %q", c.err, c.code, c.message)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"u-1_A", true}, {"", false}, {"a/b", false}, {"é", false}, {string(make([]byte, 129)), false},
	} {
		if got := actor.ValidID(c.id); got != c.want {
			t.Errorf("ValidID(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}
