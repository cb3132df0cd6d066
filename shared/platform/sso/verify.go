package sso

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// algorithms are the only signing algorithms accepted. Google and Apple sign
// with RS256; ES256 is the other asymmetric algorithm OpenID providers use.
// Never add "none" or an HMAC algorithm: the verifier holds no shared secret
// with the provider, so an HMAC "signature" proves nothing.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.ES256}

// algorithmNames are algorithms as go-oidc takes them.
var algorithmNames = []string{string(jose.RS256), string(jose.ES256)}

// Verifier verifies ID tokens of the supported providers. It is safe for
// concurrent use; build one per process (cold start) with NewVerifier so the
// providers' discovery documents and keys are fetched once.
type Verifier struct {
	clock     clock.Clock
	timeout   time.Duration
	client    *http.Client
	providers map[string]*provider
}

// provider is one identity provider and its cached key set.
type provider struct {
	name   string
	issuer string
	// mu serialises discovery, so concurrent first requests fetch the
	// discovery document once.
	mu   sync.Mutex
	keys atomic.Pointer[oidc.RemoteKeySet]
}

// NewVerifier returns a verifier for google and apple with the issuers of
// cfg (the real ones where cfg names none) and clk as the clock against which
// expiry is checked (the system clock when nil). Nothing is fetched until the
// first token of a provider is verified.
func NewVerifier(cfg Config, clk clock.Clock) *Verifier {
	if clk == nil {
		clk = clock.System{}
	}
	v := &Verifier{clock: clk, timeout: cfg.Timeout, client: cfg.HTTPClient, providers: map[string]*provider{}}
	if v.timeout <= 0 {
		v.timeout = DefaultTimeout
	}
	if v.client == nil {
		v.client = &http.Client{Timeout: v.timeout}
	}
	defaults := map[string]string{Google: GoogleIssuer, Apple: AppleIssuer}
	for name, issuer := range defaults {
		if s := strings.TrimSpace(cfg.Issuers[name]); s != "" {
			issuer = s
		}
		v.providers[name] = &provider{name: name, issuer: strings.TrimSuffix(issuer, "/")}
	}
	return v
}

// Issuer returns the issuer URL the verifier uses for provider, or "" for an
// unknown provider.
func (v *Verifier) Issuer(provider string) string {
	if p, ok := v.providers[strings.ToLower(provider)]; ok {
		return p.issuer
	}
	return ""
}

// Verify checks rawIDToken, an ID token issued by provider (google or apple,
// any case) for one of audiences (the client ids the tenant configured for
// that provider), and returns the identity it carries. A token that fails
// any check gives one of the VALIDATION_FAILED errors of this package
// (wrapped; compare with errors.Is); so do an unknown provider and an empty
// audiences list. A provider that cannot be reached gives an internal error.
func (v *Verifier) Verify(ctx context.Context, provider, rawIDToken string, audiences []string) (Identity, error) {
	p, ok := v.providers[strings.ToLower(strings.TrimSpace(provider))]
	if !ok {
		return Identity{}, ErrUnknownProvider
	}
	audiences = slices.DeleteFunc(slices.Clone(audiences), func(a string) bool { return strings.TrimSpace(a) == "" })
	if len(audiences) == 0 {
		return Identity{}, fmt.Errorf("sso: %s: no client ids configured: %w", p.name, ErrNotConfigured)
	}
	raw := strings.TrimSpace(rawIDToken)
	if raw == "" {
		return Identity{}, ErrMissingToken
	}
	unverified, reg, err := precheck(raw)
	if err != nil {
		return Identity{}, fmt.Errorf("sso: %s token: %w", p.name, err)
	}
	// A token the checks below would refuse for its claims alone is refused
	// now, without calling the provider: a wrong issuer, audience or expiry
	// is the client's error (422) even when the provider cannot be reached.
	if err := p.rejectOffline(reg, unverified, audiences, v.clock.Now()); err != nil {
		return Identity{}, err
	}

	ctx, cancel := context.WithTimeout(ctx, v.timeout)
	defer cancel()
	keys, err := p.keySet(ctx, v.client)
	if err != nil {
		return Identity{}, err
	}

	// go-oidc checks the algorithm, the signature (through the recording key
	// set), expiry and nbf. Issuer and audience are checked below, on the
	// verified claims: the audience must be one of several client ids, which
	// go-oidc's single ClientID cannot express, and Google's scheme-less
	// issuer must be accepted for any configured Google issuer.
	var sigErr error
	now := v.clock.Now()
	idv := oidc.NewVerifier(p.issuer, recordingKeySet{keys}, &oidc.Config{
		SupportedSigningAlgs: algorithmNames,
		SkipClientIDCheck:    true, // checked below against audiences
		SkipIssuerCheck:      true, // checked below by acceptsIssuer
		Now:                  func() time.Time { return now },
	})
	tok, err := idv.Verify(context.WithValue(ctx, sigErrKey{}, &sigErr), raw)
	if err != nil {
		return Identity{}, p.classify(err, sigErr, unverified, now)
	}
	var c claims
	if err := tok.Claims(&c); err != nil {
		return Identity{}, fmt.Errorf("sso: %s token claims: %v: %w", p.name, err, ErrMalformed)
	}
	switch {
	case !p.acceptsIssuer(tok.Issuer):
		return Identity{}, fmt.Errorf("sso: %s token issued by %q: %w", p.name, tok.Issuer, ErrIssuer)
	case !audienceAccepted(tok.Audience, string(c.AuthorizedParty), audiences):
		return Identity{}, fmt.Errorf("sso: %s token for audience %q (azp %q): %w", p.name, tok.Audience, c.AuthorizedParty, ErrAudience)
	case !tok.IssuedAt.IsZero() && tok.IssuedAt.After(now.Add(Leeway)):
		return Identity{}, fmt.Errorf("sso: %s token issued at %v, now %v: %w", p.name, tok.IssuedAt, now, ErrNotYetValid)
	case strings.TrimSpace(tok.Subject) == "":
		return Identity{}, fmt.Errorf("sso: %s token: %w", p.name, ErrNoSubject)
	}
	return Identity{
		Provider:      p.name,
		Subject:       tok.Subject,
		Email:         strings.TrimSpace(string(c.Email)),
		EmailVerified: bool(c.EmailVerified),
		GivenName:     strings.TrimSpace(string(c.GivenName)),
		FamilyName:    strings.TrimSpace(string(c.FamilyName)),
		Name:          strings.TrimSpace(string(c.Name)),
	}, nil
}

// keySet returns the provider's key set, running discovery on first use.
// Only a successful discovery is cached: after a failure the next request
// tries again.
func (p *provider) keySet(ctx context.Context, client *http.Client) (*oidc.RemoteKeySet, error) {
	if ks := p.keys.Load(); ks != nil {
		return ks, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ks := p.keys.Load(); ks != nil {
		return ks, nil
	}
	op, err := oidc.NewProvider(oidc.ClientContext(ctx, client), p.issuer)
	if err != nil {
		return nil, fmt.Errorf("sso: discovering the %s issuer %s: %w", p.name, p.issuer, err)
	}
	var meta struct {
		JWKSURL string `json:"jwks_uri"`
	}
	if err := op.Claims(&meta); err != nil || meta.JWKSURL == "" {
		return nil, fmt.Errorf("sso: the %s issuer %s publishes no jwks_uri (%v)", p.name, p.issuer, err)
	}
	// The key set lives as long as the process: it is configured with a
	// background context carrying the HTTP client, never the request's.
	ks := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), client), meta.JWKSURL)
	p.keys.Store(ks)
	return ks, nil
}

// acceptsIssuer reports whether iss is the provider's issuer. Google
// documents "accounts.google.com" (no scheme) as a second form of its
// issuer, so for Google the configured https issuer without its scheme is
// accepted too.
func (p *provider) acceptsIssuer(iss string) bool {
	if iss == p.issuer {
		return true
	}
	bare, ok := strings.CutPrefix(p.issuer, "https://")
	return p.name == Google && ok && iss == bare
}

// audienceAccepted reports whether the token was issued for one of the
// configured client ids. A token with several audiences must also name one
// of them as its authorized party (azp), as OpenID Connect Core 3.1.3.7
// recommends, so a token obtained by another client is not accepted merely
// because it lists ours among others.
func audienceAccepted(aud []string, azp string, accepted []string) bool {
	ok := slices.ContainsFunc(aud, func(a string) bool { return slices.Contains(accepted, a) })
	if !ok || len(aud) <= 1 {
		return ok
	}
	return slices.Contains(accepted, azp)
}

// rejectOffline makes, on the unverified claims and before any request to
// the provider, every check of the claims that Verify makes (through go-oidc
// or itself) after the signature: expiry (no leeway, as go-oidc), nbf (with
// go-oidc's leeway), issuer, audience, iat and subject, in the order the
// full verification makes them so a token gets the same error either way.
// It only rejects earlier: a token that passes is verified in full, and the
// same checks are made again on the signed claims. c gives the azp claim.
func (p *provider) rejectOffline(reg registered, c claims, audiences []string, now time.Time) error {
	exp, iat := time.Time(reg.Expiry), time.Time(reg.IssuedAt)
	switch {
	case exp.Before(now):
		return fmt.Errorf("sso: %s token expired at %v, now %v: %w", p.name, exp, now, ErrExpired)
	case reg.NotBefore != nil && now.Add(Leeway).Before(time.Time(*reg.NotBefore)):
		return fmt.Errorf("sso: %s token not before %v, now %v: %w", p.name, time.Time(*reg.NotBefore), now, ErrNotYetValid)
	case !p.acceptsIssuer(reg.Issuer):
		return fmt.Errorf("sso: %s token issued by %q: %w", p.name, reg.Issuer, ErrIssuer)
	case !audienceAccepted(reg.Audience, string(c.AuthorizedParty), audiences):
		return fmt.Errorf("sso: %s token for audience %q (azp %q): %w", p.name, []string(reg.Audience), c.AuthorizedParty, ErrAudience)
	case !iat.IsZero() && iat.After(now.Add(Leeway)):
		return fmt.Errorf("sso: %s token issued at %v, now %v: %w", p.name, iat, now, ErrNotYetValid)
	case strings.TrimSpace(reg.Subject) == "":
		return fmt.Errorf("sso: %s token: %w", p.name, ErrNoSubject)
	}
	return nil
}

// classify turns a go-oidc verification error into the error of Verify.
// sigErr is what the key set returned, if the signature was checked.
func (p *provider) classify(err, sigErr error, unverified claims, now time.Time) error {
	var expired *oidc.TokenExpiredError
	switch {
	case sigErr != nil && keyFetchFailed(sigErr):
		return fmt.Errorf("sso: fetching the %s issuer's keys: %w", p.name, sigErr)
	case sigErr != nil:
		return fmt.Errorf("sso: %s token: %v: %w", p.name, err, ErrSignature)
	case errors.As(err, &expired):
		return fmt.Errorf("sso: %s token: %v: %w", p.name, err, ErrExpired)
	case unverified.NotBefore != nil && time.Unix(int64(*unverified.NotBefore), 0).After(now.Add(Leeway)):
		return fmt.Errorf("sso: %s token: %v: %w", p.name, err, ErrNotYetValid)
	default:
		return fmt.Errorf("sso: %s token: %v: %w", p.name, err, ErrInvalid)
	}
}

// keyFetchFailed tells a failure to fetch the provider's keys (network,
// timeout, bad answer) from a signature no published key verifies.
// oidc.RemoteKeySet wraps the fetch error ("fetching keys %w") and returns
// a bare error for a signature mismatch; the tests pin both behaviours.
func keyFetchFailed(err error) bool {
	return errors.Unwrap(err) != nil
}

// sigErrKey is the context key under which Verify passes recordingKeySet a
// place to record the key set's error.
type sigErrKey struct{}

// recordingKeySet is the provider's key set that also records its error in
// the request context, because go-oidc flattens it into a string. This is
// how Verify tells an unreachable provider (500) from a bad signature (422).
type recordingKeySet struct{ keys *oidc.RemoteKeySet }

// VerifySignature verifies the token's signature with the provider's keys.
func (k recordingKeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	payload, err := k.keys.VerifySignature(ctx, jwt)
	if err != nil {
		if rec, ok := ctx.Value(sigErrKey{}).(*error); ok {
			*rec = err
		}
	}
	return payload, err
}

// precheck rejects what is not a compact JWS with an accepted algorithm and
// a JSON object payload whose registered claims go-oidc can parse, before
// any key is fetched. It returns the unverified claims, used only to word
// an error message and to reject a token early (rejectOffline).
func precheck(raw string) (claims, registered, error) {
	if len(raw) > maxTokenBytes {
		return claims{}, registered{}, fmt.Errorf("token of %d bytes: %w", len(raw), ErrMalformed)
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return claims{}, registered{}, fmt.Errorf("token of %d parts: %w", len(parts), ErrMalformed)
	}
	hb, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return claims{}, registered{}, fmt.Errorf("token header: %v: %w", err, ErrMalformed)
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return claims{}, registered{}, fmt.Errorf("token header: %v: %w", err, ErrMalformed)
	}
	if !slices.Contains(algorithms, jose.SignatureAlgorithm(hdr.Alg)) {
		return claims{}, registered{}, fmt.Errorf("token algorithm %q: %w", hdr.Alg, ErrAlgorithm)
	}
	jws, err := jose.ParseSigned(raw, algorithms)
	if err != nil {
		return claims{}, registered{}, fmt.Errorf("parsing token: %v: %w", err, ErrMalformed)
	}
	payload := bytes.TrimSpace(jws.UnsafePayloadWithoutVerification())
	if !bytes.HasPrefix(payload, []byte("{")) {
		return claims{}, registered{}, fmt.Errorf("token payload is not a JSON object: %w", ErrMalformed)
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return claims{}, registered{}, fmt.Errorf("token payload: %v: %w", err, ErrMalformed)
	}
	var reg registered
	if err := json.Unmarshal(payload, &reg); err != nil {
		return claims{}, registered{}, fmt.Errorf("token claims: %v: %w", err, ErrInvalid)
	}
	return c, reg, nil
}
