package account_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/sso/ssotest"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

const googleClient = "client-123.apps.googleusercontent.com"

// ssoHarness returns a harness whose tenant accepts Google tokens of the
// local issuer for googleClient (and Apple tokens for "com.example.app").
func ssoHarness(t *testing.T) (*ts.Harness, *ssotest.Issuer, *ssotest.Issuer) {
	h := ts.New(t)
	google, apple := ssotest.NewIssuer(t), ssotest.NewIssuer(t)
	h.Deps.Accounts.SSO = sso.NewVerifier(sso.Config{Issuers: map[string]string{"google": google.URL(), "apple": apple.URL()}}, h.Clock)
	h.SetSettings(tenant.Settings{SSOClientIDs: map[string][]string{"google": {googleClient}, "apple": {"com.example.app"}}})
	return h, google, apple
}

func TestSSO(t *testing.T) {
	h, google, apple := ssoHarness(t)
	sub := fmt.Sprintf("g-%d", seq.Add(1))
	token := google.Token(google.Claims(googleClient, sub))
	body := func(tok string) map[string]any {
		return map[string]any{"idToken": tok, "firstName": "Gina", "lastName": "Google"}
	}
	t.Run("Rejected", func(t *testing.T) {
		expired := google.Claims(googleClient, sub)
		expired["exp"] = time.Now().Add(-time.Hour).Unix()
		expired["iat"] = time.Now().Add(-2 * time.Hour).Unix()
		hs := google.Claims(googleClient, sub)
		tests := []struct {
			name   string
			path   string
			body   any
			status int
			code   string
		}{
			{"UnknownProvider", "/users/myspace/sso", body(token), 404, "NOT_FOUND"},
			{"MissingToken", "/users/google/sso", map[string]any{"firstName": "A", "lastName": "B"}, 422, "VALIDATION_FAILED"},
			{"Garbage", "/users/google/sso", body("not.a.jwt"), 422, "VALIDATION_FAILED"},
			{"WrongAudience", "/users/google/sso", body(google.Token(google.Claims("someone-else", sub))), 422, "VALIDATION_FAILED"},
			{"Expired", "/users/google/sso", body(google.Token(expired)), 422, "VALIDATION_FAILED"},
			{"AlgNone", "/users/google/sso", body(google.TokenWith("none", nil, hs)), 422, "VALIDATION_FAILED"},
			{"HMACWithSecret", "/users/google/sso", body(google.TokenWith("HS256", []byte("secret-secret-secret-secret-32b!"), hs)), 422, "VALIDATION_FAILED"},
			{"HMACWithPublicKey", "/users/google/sso", body(google.TokenWith("HS256", google.PublicKeyPEM(), hs)), 422, "VALIDATION_FAILED"},
			{"OtherIssuersToken", "/users/google/sso", body(apple.Token(apple.Claims(googleClient, sub))), 422, "VALIDATION_FAILED"},
			{"UnknownField", "/users/google/sso", map[string]any{"idToken": token, "nick": "x"}, 422, "VALIDATION_FAILED"},
			{"NewUserWithoutNames", "/users/google/sso", map[string]any{"idToken": token}, 422, "VALIDATION_FAILED"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("POST", tc.path, tc.body, h.Anon()).Expect(t, tc.status, tc.code)
			})
		}
		if n := h.CountUsersWith(t, sub); n != 0 {
			t.Errorf("a rejected token created a user")
		}
	})
	t.Run("NotConfiguredForTenant", func(t *testing.T) {
		other, _ := h.NewTenant(tenant.Settings{})
		h.Do("POST", "/users/google/sso", body(token), ts.Headers{"x-application-id", other.ID}).Expect(t, 422, "VALIDATION_FAILED")
	})
	var userID string
	t.Run("NewUser", func(t *testing.T) {
		s := h.Do("POST", "/users/google/sso", body(token), h.Anon(), ts.Headers{"x-client-platform", "IOS"}).Expect(t, 201, "").Map(t)
		u := s["user"].(map[string]any)
		userID = u["id"].(string)
		if u["state"] != "ACTIVE" || u["firstName"] != "Gina" || u["primaryPlatform"] != "IOS" {
			t.Errorf("user = %v", u)
		}
		creds := u["credentials"].([]any)
		if len(creds) != 1 || creds[0].(map[string]any)["provider"] != "GOOGLE" || creds[0].(map[string]any)["id"] != sub {
			t.Errorf("credentials = %v", creds)
		}
		h.Do("GET", "/users/"+userID, nil, ts.Token(s["_id"].(string))).Expect(t, 200, "")
	})
	t.Run("ExistingUser", func(t *testing.T) {
		again := google.Token(google.Claims(googleClient, sub))
		s := h.Do("POST", "/users/google/sso", map[string]any{"idToken": again}, h.Anon()).Expect(t, 200, "").Map(t)
		if s["userId"] != userID {
			t.Errorf("userId = %v, want %s", s["userId"], userID)
		}
	})
	t.Run("SocialLogin", func(t *testing.T) {
		fresh := google.Token(google.Claims(googleClient, sub))
		s := h.Do("GET", "/users/login", nil, h.Basic(sub, fresh, "GOOGLE")).Expect(t, 200, "").Map(t)
		if s["userId"] != userID {
			t.Errorf("userId = %v", s["userId"])
		}
		h.Do("GET", "/users/login", nil, h.Basic("someone-else", fresh, "GOOGLE")).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/users/login", nil, h.Basic(sub, "forged.token.value", "GOOGLE")).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/users/login", nil, h.Basic(sub, fresh, "FACEBOOK")).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("Apple", func(t *testing.T) {
		claims := apple.Claims("com.example.app", "apple-"+sub)
		claims["email_verified"] = "true"
		s := h.Do("POST", "/users/apple/sso", map[string]any{"idToken": apple.Token(claims), "firstName": "Ann", "lastName": "Apple"}, h.Anon()).Expect(t, 201, "").Map(t)
		if s["user"].(map[string]any)["state"] != "ACTIVE" {
			t.Errorf("session = %v", s)
		}
	})
}

func TestSocialCredentialOnCreate(t *testing.T) {
	h, google, _ := ssoHarness(t)
	sub := fmt.Sprintf("g-%d", seq.Add(1))
	cred := func(id, tok, provider string) map[string]any {
		return map[string]any{"firstName": "So", "lastName": "Cial", "credentials": []map[string]any{{"provider": provider, "id": id, "token": tok}}}
	}
	good := google.Token(google.Claims(googleClient, sub))
	tests := []struct {
		name  string
		body  map[string]any
		field string // the message names it first
	}{
		{"MissingToken", cred(sub, "", "GOOGLE"), "credentials[0].token"},
		{"BadToken", cred(sub, "x.y.z", "GOOGLE"), "credentials[0].token"},
		{"SubjectMismatch", cred("not-"+sub, good, "GOOGLE"), "credentials[0].id"},
		{"WrongAudience", cred(sub, google.Token(google.Claims("other", sub)), "GOOGLE"), "credentials[0].token"},
		{"Facebook", cred(sub, good, "FACEBOOK"), ""},
		{"BadEmail", cred("not-an-email", "", "EMAIL"), "credentials[0].id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := h.Do("POST", "/users", tc.body, h.Anon()).Expect(t, 422, "VALIDATION_FAILED").Map(t)
			if msg, _ := got["message"].(string); !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to start with %q", msg, tc.field)
			}
		})
	}
	u := h.Do("POST", "/users", cred(sub, good, "GOOGLE"), h.Anon()).Expect(t, 201, "").Map(t)
	if u["state"] != "ACTIVE" {
		t.Errorf("state = %v, want ACTIVE", u["state"])
	}
	t.Run("CredentialExists", func(t *testing.T) {
		h.Do("POST", "/users", cred(sub, good, "GOOGLE"), h.Anon()).Expect(t, 422, "CREDENTIAL_EXISTS")
	})
	t.Run("LogsIn", func(t *testing.T) {
		h.Do("GET", "/users/login", nil, h.Basic(sub, good, "GOOGLE")).Expect(t, 200, "")
	})
}
