package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// ssoProviders are the SSO providers the local issuers stand for.
var ssoProviders = []string{"google", "apple"}

// issuers is the local stack's OpenID Connect issuer of each SSO provider
// (make run): under adminPrefix/sso/<provider> it serves the discovery
// document and the keys the accounts function verifies ID tokens with, and
// POST .../token signs an ID token for the audience and subject asked, so
// that a developer can try SSO sign-in on one machine. One RSA key signs
// for both providers.
type issuers struct {
	base string // http://localhost:<port>/_local/sso
	key  *rsa.PrivateKey
}

// newIssuers makes the issuers of the stack served at base
// (http://localhost:<port>).
func newIssuers(base string) (*issuers, error) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("local SSO issuer: %w", err)
	}
	return &issuers{base: base + adminPrefix + "/sso", key: k}, nil
}

// url is provider's issuer URL.
func (i *issuers) url(provider string) string { return i.base + "/" + provider }

// setenv points SSO_GOOGLE_ISSUER and SSO_APPLE_ISSUER at the local
// issuers, unless they are set (a developer verifying real tokens), and
// returns the issuer each provider uses.
func (i *issuers) setenv() (map[string]string, error) {
	out := map[string]string{}
	for _, p := range ssoProviders {
		name := "SSO_" + strings.ToUpper(p) + "_ISSUER"
		if v := os.Getenv(name); v != "" {
			out[p] = v
			continue
		}
		if err := os.Setenv(name, i.url(p)); err != nil {
			return nil, err
		}
		out[p] = i.url(p)
	}
	return out, nil
}

// register adds the issuers' routes to mux.
func (i *issuers) register(mux *http.ServeMux) {
	prefix := adminPrefix + "/sso/{provider}"
	mux.HandleFunc("GET "+prefix+"/.well-known/openid-configuration", i.discovery)
	mux.HandleFunc("GET "+prefix+"/keys", i.keys)
	mux.HandleFunc("POST "+prefix+"/token", i.token)
}

// provider returns the provider the request's path names, or answers 404.
func (i *issuers) provider(w http.ResponseWriter, r *http.Request) (string, bool) {
	p := r.PathValue("provider")
	if !slices.Contains(ssoProviders, p) {
		ssoJSON(w, http.StatusNotFound, map[string]string{"code": "NOT_FOUND", "message": "unknown SSO provider: use google or apple"})
		return "", false
	}
	return p, true
}

func (i *issuers) discovery(w http.ResponseWriter, r *http.Request) {
	p, ok := i.provider(w, r)
	if !ok {
		return
	}
	iss := i.url(p)
	ssoJSON(w, http.StatusOK, map[string]any{
		"issuer":                                iss,
		"authorization_endpoint":                iss + "/auth",
		"token_endpoint":                        iss + "/token",
		"jwks_uri":                              iss + "/keys",
		"response_types_supported":              []string{"id_token"},
		"subject_types_supported":               []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
	})
}

func (i *issuers) keys(w http.ResponseWriter, r *http.Request) {
	if _, ok := i.provider(w, r); !ok {
		return
	}
	ssoJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: i.key.Public(), KeyID: "local-0", Algorithm: "RS256", Use: "sig"},
	}})
}

// tokenRequest is the body of POST /_local/sso/<provider>/token: the
// token's audience (a client id the tenant's settings.ssoClientIds names)
// and subject (the provider's user id), and optionally the e-mail address
// (<sub>@example.com when left out) and names.
type tokenRequest struct {
	Aud        string `json:"aud"`
	Sub        string `json:"sub"`
	Email      string `json:"email"`
	GivenName  string `json:"given_name"`
	FamilyName string `json:"family_name"`
}

// token answers {"idToken": ...}: an RS256 ID token of the provider's
// issuer valid for an hour.
func (i *issuers) token(w http.ResponseWriter, r *http.Request) {
	p, ok := i.provider(w, r)
	if !ok {
		return
	}
	var in tokenRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.Aud == "" || in.Sub == "" {
		ssoJSON(w, http.StatusUnprocessableEntity, map[string]string{"code": "VALIDATION_FAILED",
			"message": `the body must be {"aud": "<client id>", "sub": "<user id>"} (and optionally email, given_name, family_name)`})
		return
	}
	if in.Email == "" {
		in.Email = in.Sub + "@example.com"
	}
	now := time.Now()
	claims := map[string]any{
		"iss": i.url(p), "sub": in.Sub, "aud": in.Aud, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"email": in.Email, "email_verified": true,
	}
	if in.GivenName != "" {
		claims["given_name"] = in.GivenName
	}
	if in.FamilyName != "" {
		claims["family_name"] = in.FamilyName
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		ssoJSON(w, http.StatusInternalServerError, map[string]string{"code": "INTERNAL", "message": "internal error"})
		return
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: i.key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "local-0"))
	if err != nil {
		ssoJSON(w, http.StatusInternalServerError, map[string]string{"code": "INTERNAL", "message": "internal error"})
		return
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		ssoJSON(w, http.StatusInternalServerError, map[string]string{"code": "INTERNAL", "message": "internal error"})
		return
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		ssoJSON(w, http.StatusInternalServerError, map[string]string{"code": "INTERNAL", "message": "internal error"})
		return
	}
	ssoJSON(w, http.StatusOK, map[string]string{"idToken": tok})
}

// ssoJSON writes v as a JSON answer.
func ssoJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
