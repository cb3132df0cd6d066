// Package ssotest runs a local OpenID Connect issuer for tests: an HTTP
// server with a discovery document and a JWKS (one RSA and one EC key), and
// helpers that sign ID tokens with those keys, or with any other key and
// algorithm to play an attacker.
//
//	iss := ssotest.NewIssuer(t)
//	cfg := sso.Config{Issuers: map[string]string{sso.Google: iss.URL()}}
//	tok := iss.Token(iss.Claims("client-id", "user-1"))
package ssotest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Issuer is a local OpenID Connect issuer. It is safe for concurrent use.
type Issuer struct {
	t   testing.TB
	srv *httptest.Server

	// Now is the clock of the default claims (Claims); time.Now unless set,
	// e.g. to a test harness's manual clock.
	Now func() time.Time

	mu              sync.Mutex
	rsaKey          *rsa.PrivateKey
	rsaKID          string
	ecKey           *ecdsa.PrivateKey
	ecKID           string
	rotations       int
	jwksStatus      int
	discoveryIssuer string

	discoveryHits atomic.Int64
	jwksHits      atomic.Int64
}

// NewIssuer starts an issuer on a local plain-HTTP address; it stops when
// the test ends.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	i := newIssuer(t)
	i.srv = httptest.NewServer(i.handler())
	t.Cleanup(i.srv.Close)
	return i
}

// NewTLSIssuer is NewIssuer on HTTPS (with a test certificate: give the
// verifier Client() as its HTTP client). Its URL starts with https://, so
// it can stand for Google, whose issuer is also accepted without the
// scheme.
func NewTLSIssuer(t testing.TB) *Issuer {
	t.Helper()
	i := newIssuer(t)
	i.srv = httptest.NewTLSServer(i.handler())
	t.Cleanup(i.srv.Close)
	return i
}

func newIssuer(t testing.TB) *Issuer {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("ssotest: generating an RSA key: %v", err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("ssotest: generating an EC key: %v", err)
	}
	return &Issuer{t: t, Now: time.Now, rsaKey: rk, rsaKID: "rsa-0", ecKey: ek, ecKID: "ec-0", jwksStatus: http.StatusOK}
}

// URL is the issuer URL (the value of the iss claim and of the discovery
// document's issuer).
func (i *Issuer) URL() string { return i.srv.URL }

// Client returns an HTTP client that trusts the issuer (needed for
// NewTLSIssuer).
func (i *Issuer) Client() *http.Client { return i.srv.Client() }

// RSAKey returns the issuer's current RSA signing key.
func (i *Issuer) RSAKey() *rsa.PrivateKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.rsaKey
}

// ECKey returns the issuer's EC (P-256) signing key.
func (i *Issuer) ECKey() *ecdsa.PrivateKey {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.ecKey
}

// PublicKeyPEM returns the RSA public key as PEM (PKIX), the bytes an
// attacker uses as an HMAC secret in the algorithm-confusion attack.
func (i *Issuer) PublicKeyPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(i.RSAKey().Public())
	if err != nil {
		i.t.Fatalf("ssotest: marshalling the public key: %v", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// Rotate replaces the published RSA key with a new one under a new key id,
// as providers do; tokens signed before are then signed by an unknown key.
func (i *Issuer) Rotate() {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		i.t.Fatalf("ssotest: generating an RSA key: %v", err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.rotations++
	i.rsaKey, i.rsaKID = k, fmt.Sprintf("rsa-%d", i.rotations)
}

// FailJWKS makes the JWKS endpoint answer status (e.g. 503) until called
// again with 200.
func (i *Issuer) FailJWKS(status int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.jwksStatus = status
}

// SetDiscoveryIssuer makes the discovery document name issuer instead of
// URL() (a misconfigured or impersonated provider).
func (i *Issuer) SetDiscoveryIssuer(issuer string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.discoveryIssuer = issuer
}

// DiscoveryRequests and JWKSRequests count the requests served, to check
// caching.
func (i *Issuer) DiscoveryRequests() int { return int(i.discoveryHits.Load()) }

// JWKSRequests counts the JWKS requests served.
func (i *Issuer) JWKSRequests() int { return int(i.jwksHits.Load()) }

// Claims returns valid claims for a token of subject issued by this issuer
// for audience: iss, sub, aud, iat (now), exp (in an hour), email and
// email_verified. Change or delete entries for other cases.
func (i *Issuer) Claims(audience, subject string) map[string]any {
	now := i.Now()
	return map[string]any{
		"iss":            i.URL(),
		"sub":            subject,
		"aud":            audience,
		"iat":            now.Unix(),
		"exp":            now.Add(time.Hour).Unix(),
		"email":          subject + "@example.com",
		"email_verified": true,
	}
}

// Token returns claims signed with the issuer's RSA key (RS256).
func (i *Issuer) Token(claims map[string]any) string {
	return i.TokenWith("RS256", nil, claims)
}

// TokenWith returns claims signed with alg and key. A nil key means the
// issuer's own key for alg (RSA for RS*, EC for ES*). key may be a
// crypto.Signer private key or, for HS*, a []byte secret. The header's kid
// is the issuer's key id for the key family, even for a foreign key or an
// HMAC secret, as an attacker would send. alg "none" gives an unsigned
// token ("header.payload.").
func (i *Issuer) TokenWith(alg string, key any, claims map[string]any) string {
	i.t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		i.t.Fatalf("ssotest: marshalling claims: %v", err)
	}
	i.mu.Lock()
	rk, rkid, ek, ekid := i.rsaKey, i.rsaKID, i.ecKey, i.ecKID
	i.mu.Unlock()
	if alg == "none" {
		hdr, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": rkid})
		enc := base64.RawURLEncoding
		return enc.EncodeToString(hdr) + "." + enc.EncodeToString(payload) + "."
	}
	kid, own := rkid, any(rk)
	if strings.HasPrefix(alg, "ES") {
		kid, own = ekid, ek
	}
	if key == nil {
		key = own
	}
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: key}, opts)
	if err != nil {
		i.t.Fatalf("ssotest: signer for %s: %v", alg, err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		i.t.Fatalf("ssotest: signing: %v", err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		i.t.Fatalf("ssotest: serialising: %v", err)
	}
	return s
}

func (i *Issuer) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		i.discoveryHits.Add(1)
		i.mu.Lock()
		iss := i.discoveryIssuer
		i.mu.Unlock()
		if iss == "" {
			iss = i.URL()
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                iss,
			"authorization_endpoint":                i.URL() + "/auth",
			"token_endpoint":                        i.URL() + "/token",
			"jwks_uri":                              i.URL() + "/keys",
			"response_types_supported":              []string{"code", "id_token"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		i.jwksHits.Add(1)
		i.mu.Lock()
		status := i.jwksStatus
		set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: i.rsaKey.Public(), KeyID: i.rsaKID, Algorithm: "RS256", Use: "sig"},
			{Key: i.ecKey.Public(), KeyID: i.ecKID, Algorithm: "ES256", Use: "sig"},
		}}
		i.mu.Unlock()
		if status != http.StatusOK {
			http.Error(w, "unavailable", status)
			return
		}
		writeJSON(w, http.StatusOK, set)
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
