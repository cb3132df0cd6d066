package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// sessions knows the tokens "user" (u1, a USER), "admin" (an ADMIN) and
// the service key "key", all of tenant t1, and every x-application-id.
type sessions struct{ anyTenant }

func (sessions) Session(_ context.Context, token string) (actor.Actor, error) {
	switch token {
	case "user":
		return actor.Actor{TenantID: "t1", UserID: "u1", Roles: []string{actor.RoleUser}}, nil
	case "admin":
		return actor.Actor{TenantID: "t1", UserID: "a1", Roles: []string{actor.RoleAdmin}}, nil
	}
	return actor.Actor{}, apierr.New(apierr.Unauthorized, "bad token")
}

func (sessions) ServiceKey(_ context.Context, key string) (actor.Actor, error) {
	if key == "key" {
		return actor.Actor{TenantID: "t1", Service: true, Roles: []string{actor.RoleAdmin}}, nil
	}
	return actor.Actor{}, errors.New("no such key")
}

// TestAccess sends each kind of caller to a route of each access: the
// answers are the Require methods' (status, code and message), and the
// handler runs only for a caller the access admits.
func TestAccess(t *testing.T) {
	ran := 0
	ok := func(w http.ResponseWriter, r *http.Request) { ran++; web.Empty(w, http.StatusNoContent) }
	var routes []web.Route
	for _, a := range web.Accesses {
		routes = append(routes, web.Route{Method: "GET", Path: "/" + a.String() + "/{userId}", Access: a, Handler: ok})
	}
	h := web.Handler(routes, sessions{}, web.NewLogger())
	const (
		noTenant = "UNAUTHORIZED header x-application-id or a token is required"
		noAuth   = "UNAUTHORIZED authentication required"
		noAdmin  = "UNAUTHORIZED an admin session or service key is required"
		noUser   = "NOT_FOUND user not found"
	)
	callers := []struct {
		name    string
		headers map[string]string
	}{
		{"Nobody", nil},
		{"Anonymous", map[string]string{"x-application-id": "t1"}},
		{"User", map[string]string{"Authorization": "Token user"}},
		{"Admin", map[string]string{"Authorization": "Token admin"}},
		{"ServiceKey", map[string]string{"x-service-auth-token": "key"}},
	}
	// want[access][caller] for the path /{access}/u1; "" is served.
	want := map[web.Access][]string{
		web.Public:        {"", "", "", "", ""},
		web.Anonymous:     {noTenant, "", "", "", ""},
		web.Authenticated: {noAuth, noAuth, "", "", ""},
		web.Self:          {noAuth, noAuth, "", "", ""},
		web.Admin:         {noAdmin, noAdmin, noAdmin, "", ""},
	}
	send := func(path string, headers map[string]string) string {
		r := httptest.NewRequest("GET", "http://api.test"+path, nil)
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		before := ran
		h.ServeHTTP(w, r)
		if w.Code == http.StatusNoContent {
			if ran != before+1 {
				t.Errorf("%s: served without its handler", path)
			}
			return ""
		}
		if ran != before {
			t.Errorf("%s: the handler ran for a refused caller", path)
		}
		var body web.ErrorBody
		_ = json.Unmarshal(w.Body.Bytes(), &body)
		got := body.Code + " " + body.Message
		if wantStatus := map[string]int{"UNAUTHORIZED": 401, "NOT_FOUND": 404}[body.Code]; w.Code != wantStatus {
			t.Errorf("%s: status %d for %s", path, w.Code, got)
		}
		return got
	}
	for _, a := range web.Accesses {
		for i, c := range callers {
			t.Run(a.String()+"/"+c.name, func(t *testing.T) {
				if got := send("/"+a.String()+"/u1", c.headers); got != want[a][i] {
					t.Errorf("answer %q, want %q", got, want[a][i])
				}
			})
		}
	}
	t.Run("SelfHidesAnotherUser", func(t *testing.T) {
		if got := send("/Self/u2", callers[2].headers); got != noUser {
			t.Errorf("answer %q, want %q", got, noUser)
		}
		if got := send("/Self/u2", callers[3].headers); got != "" {
			t.Errorf("an admin's answer %q, want it served", got)
		}
	})
}

// TestBeforeAndAround proves the order of a route's checks: Around first
// (where idempotency claims a key), then Before, then Access, then the
// handler.
func TestBeforeAndAround(t *testing.T) {
	var order []string
	route := web.Route{
		Method: "GET", Path: "/x", Access: web.Admin,
		Before: func(r *http.Request) error {
			order = append(order, "before")
			if r.URL.Query().Get("bad") != "" {
				return apierr.Invalid("bad", "is bad")
			}
			return nil
		},
		Around: func(next http.HandlerFunc) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) { order = append(order, "around"); next(w, r) }
		},
		Handler: func(w http.ResponseWriter, r *http.Request) {
			order = append(order, "handler")
			web.Empty(w, http.StatusOK)
		},
	}
	h := web.Handler([]web.Route{route}, sessions{}, web.NewLogger())
	for _, c := range []struct {
		name, query, token string
		status             int
		order              string
	}{
		{"BeforeAnswersFirst", "?bad=1", "user", 422, "around before"},
		{"AccessAnswersNext", "", "user", 401, "around before"},
		{"HandlerRunsLast", "", "admin", 200, "around before handler"},
	} {
		t.Run(c.name, func(t *testing.T) {
			order = nil
			r := httptest.NewRequest("GET", "http://api.test/x"+c.query, nil)
			r.Header.Set("Authorization", "Token "+c.token)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.status || strings.Join(order, " ") != c.order {
				t.Errorf("status %d, order %v; want %d, %s", w.Code, order, c.status, c.order)
			}
		})
	}
}

// TestUndeclaredRunsUnchecked proves that a route with no Access runs its
// handler for any caller (it checks the caller itself).
func TestUndeclaredRunsUnchecked(t *testing.T) {
	h := web.Handler([]web.Route{{Method: "GET", Path: "/x", Handler: func(w http.ResponseWriter, r *http.Request) { web.Empty(w, http.StatusOK) }}}, sessions{}, web.NewLogger())
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "http://api.test/x", nil))
	if w.Code != http.StatusOK {
		t.Errorf("status %d, want 200", w.Code)
	}
}
