package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/testkit"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// TestLocalSSO walks the README's make run SSO block against the local
// stack's handler: the tenant's admin names a Google client id with PUT
// /tenant, the stack's Google issuer signs a token for it, and SSO sign-in
// with that token creates the user (201), then signs it in again (200).
// A token for another client id is refused.
func TestLocalSSO(t *testing.T) {
	t.Parallel()
	st := testkit.Stack(t)
	ctx := context.Background()
	deps, err := whole.New(ctx, wire.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	set := settings{TenantID: "sso-" + testkit.Nonce()[:8], ServiceToken: "sso-service-token-" + testkit.Nonce()}
	if _, err := deps.Tenants.Seed(ctx, set.TenantID, "SSO tenant", set.ServiceToken); err != nil {
		t.Fatal(err)
	}
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer srv.Close()
	iss, err := newIssuers(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// What setenv does for make run, without changing this process's
	// environment: the accounts function trusts the local issuers.
	deps.Accounts.SSO = sso.NewVerifier(sso.Config{Issuers: map[string]string{"google": iss.url("google"), "apple": iss.url("apple")}}, nil)
	l := &local{template: st.Template, stack: st, deps: deps, settings: set, issuers: iss}
	if h, err = l.handler(); err != nil {
		t.Fatal(err)
	}

	call := func(method, path string, body any, headers ...string) (int, map[string]any) {
		t.Helper()
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return resp.StatusCode, out
	}
	const client = "dev-client.apps.googleusercontent.com"
	if st, out := call("PUT", "/tenant", map[string]any{"settings": map[string]any{"ssoClientIds": map[string]any{"google": []string{client}}}},
		"x-service-auth-token", set.ServiceToken); st != 200 {
		t.Fatalf("PUT /tenant = %d %v", st, out)
	}
	token := func(aud, sub string) string {
		t.Helper()
		st, out := call("POST", adminPrefix+"/sso/google/token", map[string]any{"aud": aud, "sub": sub})
		tok, _ := out["idToken"].(string)
		if st != 200 || tok == "" {
			t.Fatalf("token = %d %v", st, out)
		}
		return tok
	}
	sub := "dev-" + testkit.Nonce()
	signIn := func(tok string) (int, map[string]any) {
		return call("POST", "/users/google/sso", map[string]any{"idToken": tok, "firstName": "Dev", "lastName": "One"}, "x-application-id", set.TenantID)
	}
	for _, want := range []int{201, 200} {
		if st, out := signIn(token(client, sub)); st != want {
			t.Fatalf("SSO sign-in = %d %v, want %d", st, out, want)
		}
	}
	if st, out := signIn(token("another-client", sub)); st != 422 {
		t.Errorf("SSO sign-in for another client id = %d %v, want 422", st, out)
	}
	if st, _ := call("POST", adminPrefix+"/sso/facebook/token", map[string]any{"aud": client, "sub": sub}); st != 404 {
		t.Errorf("token of an unknown provider = %d, want 404", st)
	}
	if st, _ := call("POST", adminPrefix+"/sso/google/token", map[string]any{"sub": sub}); st != 422 {
		t.Errorf("token without aud = %d, want 422", st)
	}
}

// TestIssuersSetenv: make run points each provider's sign-in at the local
// issuer unless the environment names one.
func TestIssuersSetenv(t *testing.T) {
	// Not parallel: it sets the process's environment.
	t.Setenv("SSO_GOOGLE_ISSUER", "https://accounts.google.com")
	t.Setenv("SSO_APPLE_ISSUER", "")
	iss, err := newIssuers("http://localhost:3000")
	if err != nil {
		t.Fatal(err)
	}
	got, err := iss.setenv()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"google": "https://accounts.google.com", "apple": "http://localhost:3000/_local/sso/apple"}
	for p, u := range want {
		if got[p] != u {
			t.Errorf("issuer of %s = %q, want %q", p, got[p], u)
		}
	}
	if v := os.Getenv("SSO_APPLE_ISSUER"); v != want["apple"] {
		t.Errorf("SSO_APPLE_ISSUER = %q", v)
	}
}
