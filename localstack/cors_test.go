package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/testkit"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// TestCORS serves the local stack's handler (what make run serves) and
// calls it as a page of another origin would: a preflight on every route
// of the template, then actual requests, whose answers must carry what
// the template's CorsConfiguration says API Gateway adds.
func TestCORS(t *testing.T) {
	t.Parallel()
	st := testkit.Stack(t)
	deps, err := whole.New(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	l := &local{template: st.Template, stack: st, deps: deps, settings: settings{TenantID: "cors-tenant", ServiceToken: "cors-service-token"}}
	h, err := l.handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	conf := st.Template.APIs[0].CORS
	if conf == nil {
		t.Fatal("the template's HttpApi has no CorsConfiguration")
	}
	if !slices.Equal(conf.AllowOrigins, []string{"*"}) || conf.AllowOriginsParameter != "CorsAllowedOrigins" {
		t.Fatalf("AllowOrigins = %v from %q, want [*] from the parameter CorsAllowedOrigins", conf.AllowOrigins, conf.AllowOriginsParameter)
	}
	const origin = "http://127.0.0.1:5173"

	do := func(t *testing.T, method, path string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	param := regexp.MustCompile(`\{[^}]+\}`)

	t.Run("PreflightEveryRoute", func(t *testing.T) {
		for _, f := range st.Template.Functions {
			for _, r := range f.Routes {
				path := param.ReplaceAllString(r.Path, "x1")
				resp := do(t, http.MethodOptions, path, "Origin", origin,
					"Access-Control-Request-Method", r.Method,
					"Access-Control-Request-Headers", "content-type,idempotency-key,x-application-id")
				got := resp.Header
				if resp.StatusCode != http.StatusNoContent || got.Get("Access-Control-Allow-Origin") != "*" {
					t.Errorf("OPTIONS %s (preflight of %s) = %d, Access-Control-Allow-Origin %q; want 204, *", path, r.Key(), resp.StatusCode, got.Get("Access-Control-Allow-Origin"))
					continue
				}
				if !listHas(got.Get("Access-Control-Allow-Methods"), r.Method) {
					t.Errorf("OPTIONS %s: Access-Control-Allow-Methods %q lacks %s", path, got.Get("Access-Control-Allow-Methods"), r.Method)
				}
				for _, want := range []string{"content-type", "idempotency-key", "x-application-id", "authorization", "x-service-auth-token", "x-api-version", "x-client-platform"} {
					if !listHas(got.Get("Access-Control-Allow-Headers"), want) {
						t.Errorf("OPTIONS %s: Access-Control-Allow-Headers %q lacks %s", path, got.Get("Access-Control-Allow-Headers"), want)
					}
				}
				if got.Get("Access-Control-Max-Age") != "600" {
					t.Errorf("OPTIONS %s: Access-Control-Max-Age %q, want 600", path, got.Get("Access-Control-Max-Age"))
				}
			}
		}
	})
	t.Run("ActualRequest", func(t *testing.T) {
		for _, c := range []struct {
			name, method, path string
			status             int
			header             []string
		}{
			{"Document", http.MethodGet, "/openapi.json", http.StatusOK, nil},
			{"Unauthorized", http.MethodGet, "/users/x1", http.StatusUnauthorized, []string{"x-application-id", "cors-tenant"}},
			{"UnknownPath", http.MethodGet, "/no-such-path", http.StatusNotFound, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp := do(t, c.method, c.path, append([]string{"Origin", origin}, c.header...)...)
				if resp.StatusCode != c.status {
					t.Fatalf("%s %s = %d, want %d", c.method, c.path, resp.StatusCode, c.status)
				}
				if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
					t.Errorf("Access-Control-Allow-Origin = %q, want *", got)
				}
				for _, want := range []string{"x-request-id", "retry-after", "idempotent-replayed"} {
					if !listHas(resp.Header.Get("Access-Control-Expose-Headers"), want) {
						t.Errorf("Access-Control-Expose-Headers %q lacks %s", resp.Header.Get("Access-Control-Expose-Headers"), want)
					}
				}
			})
		}
	})
	t.Run("NoOrigin", func(t *testing.T) {
		resp := do(t, http.MethodGet, "/openapi.json")
		for name := range resp.Header {
			if strings.HasPrefix(strings.ToLower(name), "access-control-") {
				t.Errorf("an answer to a request without Origin carries %s", name)
			}
		}
		if resp := do(t, http.MethodOptions, "/openapi.json"); resp.StatusCode == http.StatusNoContent {
			t.Errorf("OPTIONS without Origin = 204, want the gateway's answer to a route it does not have")
		}
	})
}

// TestCORSOrigins: which origins a configuration allows, and what a
// preflight and an actual request from each get.
func TestCORSOrigins(t *testing.T) {
	t.Parallel()
	conf := &cors{
		origins:       []string{"https://console.example.com", "http://*"},
		allowHeaders:  "content-type,x-application-id",
		allowMethods:  "GET,POST",
		exposeHeaders: "x-request-id",
		maxAge:        "300",
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := conf.handler(next)
	for _, c := range []struct {
		name, origin, want string
	}{
		{"Exact", "https://console.example.com", "https://console.example.com"},
		{"ExactOtherCase", "https://Console.Example.com", "https://Console.Example.com"},
		{"SchemePrefix", "http://127.0.0.1:5173", "http://127.0.0.1:5173"},
		{"OtherHTTPSOrigin", "https://evil.example.com", ""},
		{"Subdomain", "https://console.example.com.evil.example", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			pre := httptest.NewRequest(http.MethodOptions, "/users", nil)
			pre.Header.Set("Origin", c.origin)
			pre.Header.Set("Access-Control-Request-Method", "POST")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, pre)
			if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != c.want {
				t.Errorf("preflight = %d, Access-Control-Allow-Origin %q; want 204, %q", w.Code, w.Header().Get("Access-Control-Allow-Origin"), c.want)
			}
			if c.want != "" && (w.Header().Get("Access-Control-Allow-Methods") != "GET,POST" || w.Header().Get("Access-Control-Max-Age") != "300") {
				t.Errorf("preflight headers = %v", w.Header())
			}
			if c.want == "" && w.Header().Get("Access-Control-Allow-Methods") != "" {
				t.Errorf("a preflight of a refused origin carries Access-Control-Allow-Methods")
			}
			get := httptest.NewRequest(http.MethodGet, "/users", nil)
			get.Header.Set("Origin", c.origin)
			w = httptest.NewRecorder()
			h.ServeHTTP(w, get)
			if w.Code != http.StatusTeapot || w.Header().Get("Access-Control-Allow-Origin") != c.want {
				t.Errorf("GET = %d, Access-Control-Allow-Origin %q; want the function's answer, %q", w.Code, w.Header().Get("Access-Control-Allow-Origin"), c.want)
			}
			if (w.Header().Get("Access-Control-Expose-Headers") != "") != (c.want != "") {
				t.Errorf("GET: Access-Control-Expose-Headers %q", w.Header().Get("Access-Control-Expose-Headers"))
			}
		})
	}
}

// TestCORSFromTemplate: a template whose CorsConfiguration names a
// parameter is read with the parameter's default.
func TestCORSFromTemplate(t *testing.T) {
	t.Parallel()
	tpl, err := sam.Parse([]byte(`
Parameters:
  Origins:
    Type: CommaDelimitedList
    Default: "https://a.example, https://b.example"
Resources:
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      CorsConfiguration:
        AllowOrigins: !Ref Origins
        AllowHeaders: [content-type]
        AllowMethods: [GET]
        ExposeHeaders: [x-request-id]
        MaxAge: 60
`))
	if err != nil {
		t.Fatal(err)
	}
	c := corsFromTemplate(tpl)
	if c == nil || !slices.Equal(c.origins, []string{"https://a.example", "https://b.example"}) || c.maxAge != "60" || c.exposeHeaders != "x-request-id" {
		t.Fatalf("corsFromTemplate = %+v", c)
	}
}

// listHas reports whether the comma-separated header value lists name
// (without regard to case).
func listHas(list, name string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(v), name) {
			return true
		}
	}
	return false
}
