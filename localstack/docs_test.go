package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/loyalty-platform/platform/shared/testkit"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// TestDocs serves the local stack's handler (what make run serves) and
// reads the API reference as a browser would: the page at /docs, the Swagger
// UI files it loads, and the OpenAPI document it reads, which must
// validate and name this server first (so "Try it out" calls it).
func TestDocs(t *testing.T) {
	t.Parallel()
	st := testkit.Stack(t)
	deps, err := whole.New(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	set := settings{TenantID: "docs-tenant", ServiceToken: "docs-service-token"}
	l := &local{template: st.Template, stack: st, deps: deps, settings: set}
	h, err := l.handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	get := func(t *testing.T, path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}

	t.Run("Page", func(t *testing.T) {
		resp, page := get(t, "/docs")
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET /docs = %d %s: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
		}
		for _, want := range []string{
			`url: "/openapi.json"`, `src="/docs/swagger-ui-bundle.js"`, `href="/docs/swagger-ui.css"`,
			"x-application-id: docs-tenant", "x-service-auth-token: docs-service-token", srv.URL,
			`preauthorizeApiKey("x-service-auth-token", serviceToken)`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
	})
	t.Run("SwaggerUIFiles", func(t *testing.T) {
		for path, ctype := range map[string]string{"/docs/swagger-ui-bundle.js": "text/javascript", "/docs/swagger-ui.css": "text/css"} {
			resp, body := get(t, path)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) || len(body) < 1000 {
				t.Errorf("GET %s = %d %s, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
			}
		}
		if resp, page := get(t, "/docs/"); resp.StatusCode != 200 || !strings.Contains(page, `url: "/openapi.json"`) {
			t.Errorf("GET /docs/ = %d, want the page (after a redirect)", resp.StatusCode)
		}
		if resp, _ := get(t, "/docs/package.json"); resp.StatusCode != 404 {
			t.Errorf("GET /docs/package.json = %d, want 404 (only the page's files are served)", resp.StatusCode)
		}
	})
	t.Run("Document", func(t *testing.T) {
		resp, body := get(t, "/openapi.json")
		if resp.StatusCode != 200 {
			t.Fatalf("GET /openapi.json = %d: %.300s", resp.StatusCode, body)
		}
		doc, err := openapi3.NewLoader().LoadFromData([]byte(body))
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("the document does not validate: %v", err)
		}
		if len(doc.Servers) == 0 || doc.Servers[0].URL != srv.URL {
			t.Errorf("servers[0] is not this server, %s", srv.URL)
		}
	})
}
