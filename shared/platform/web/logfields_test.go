package web_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/web"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestRequestLogFields: every line logged during a request, by the
// request's logger, by a function's logger with the request's context, on
// an error answer, and the request's own line, names the request id, the
// route, the tenant (once known) and the function.
func TestRequestLogFields(t *testing.T) {
	var out ts.LogBuffer
	base := web.FunctionLogger(web.NewLoggerTo(&out), "users")
	routes := []web.Route{
		{Method: "GET", Path: "/users/{userId}", Handler: func(w http.ResponseWriter, r *http.Request) {
			web.Logger(r.Context()).Info("by the request's logger")
			base.InfoContext(r.Context(), "by the function's logger")
			web.Logger(r.Context()).Info("a line naming its own tenant", "tenantId", "other")
			web.Error(w, r, errors.New("boom"))
		}},
	}
	h := web.Handler(routes, anyTenant{}, base)
	tests := []struct {
		name, target, tenant string
		route                string
		lines                int
	}{
		{name: "Route", target: "/users/u1", tenant: "t1", route: "GET /users/{userId}", lines: 5},
		{name: "NoRoute", target: "/nowhere", tenant: "t1", route: "", lines: 1},
		{name: "NoTenant", target: "/users/u1", tenant: "", route: "GET /users/{userId}", lines: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://api.test"+tc.target, nil)
			r.Header.Set("x-request-id", "req-"+tc.name)
			if tc.tenant != "" {
				r.Header.Set("x-application-id", tc.tenant)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			lines := out.Take(t)
			if len(lines) != tc.lines {
				t.Fatalf("%d lines, want %d: %v", len(lines), tc.lines, lines)
			}
			for _, l := range lines {
				want := map[string]any{"requestId": "req-" + tc.name, "function": "users", "tenantId": tc.tenant, "route": tc.route}
				if l["msg"] == "a line naming its own tenant" {
					want["tenantId"] = "other"
				}
				for k, v := range want {
					got, ok := l[k]
					if v == "" {
						if ok {
							t.Errorf("line %q: %s = %v, want none", l["msg"], k, got)
						}
						continue
					}
					if got != v {
						t.Errorf("line %q: %s = %v, want %v", l["msg"], k, got, v)
					}
				}
			}
			if last := lines[len(lines)-1]; last["msg"] != "request" {
				t.Errorf("last line = %q, want the request line", last["msg"])
			}
		})
	}
}

// TestFieldsOutsideRequests: a function's logger used outside a request
// adds no request fields.
func TestFieldsOutsideRequests(t *testing.T) {
	var out ts.LogBuffer
	log := web.FunctionLogger(web.NewLoggerTo(&out), "jobs")
	log.Info("job line")
	lines := out.Take(t)
	if len(lines) != 1 {
		t.Fatalf("lines = %v", lines)
	}
	for _, k := range []string{"requestId", "route", "tenantId"} {
		if v, ok := lines[0][k]; ok {
			t.Errorf("%s = %v, want none", k, v)
		}
	}
	if got := lines[0]["function"]; got != "jobs" {
		t.Errorf("function = %v, want jobs", got)
	}
}
