// Package sso verifies the ID tokens (OpenID Connect JWTs) that mobile and
// web clients obtain from a third-party identity provider ("Sign in with
// Google", "Sign in with Apple") and send to the platform to log in or sign
// up.
//
// A token is accepted only when all of these hold:
//   - it is a compact JWS signed with an asymmetric algorithm (RS256 or
//     ES256): "none" and HMAC algorithms are refused before any key is
//     looked at, so the classic attack of HMAC-signing with the provider's
//     public key cannot work;
//   - the signature verifies with one of the keys the provider publishes in
//     the JWKS named by its OpenID discovery document;
//   - the issuer is the provider's issuer;
//   - the audience names one of the client ids the tenant configured for
//     the provider (passed in by the caller);
//   - it has not expired and is not from the future (nbf and iat, with five
//     minutes of leeway for clock skew), measured by an injectable clock;
//   - it has a subject.
//
// Discovery and key fetching are done by github.com/coreos/go-oidc/v3: the
// discovery document is fetched once per issuer (oidc.NewProvider) and the
// key set is an oidc.RemoteKeySet, which caches the keys and fetches them
// again when a token names a key id it has not seen (key rotation).
//
// Every rejection of the token is a VALIDATION_FAILED (422) error whose
// message says what was wrong without echoing the token or the provider's
// answer. A provider that cannot be reached (discovery or key fetch fails,
// times out or answers garbage) is an internal error (500): the client did
// nothing wrong and may retry, and answering 422 would tell a legitimate user
// that their token is bad. The checks that need no key (form, algorithm,
// expiry, nbf, issuer, audience, iat, subject) are first made on the
// unverified claims, before any request to the provider, so a token that
// fails one of them is refused (422) without network and even when the
// provider is unreachable; a token that passes is then verified in full.
package sso

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// The supported providers, as they appear in the path of
// POST /users/{ssoProvider}/sso. Verify also accepts them in upper case, as
// credential providers are spelled (GOOGLE, APPLE).
const (
	Google = "google"
	Apple  = "apple"
)

// The providers' real issuers.
const (
	GoogleIssuer = "https://accounts.google.com"
	AppleIssuer  = "https://appleid.apple.com"
)

// DefaultTimeout bounds every call to a provider (discovery and key fetch).
const DefaultTimeout = 5 * time.Second

// Leeway is the clock skew allowed for the nbf and iat claims of a token.
// It matches go-oidc's nbf leeway; expiry is checked without leeway.
const Leeway = 5 * time.Minute

// maxTokenBytes caps the size of a token; real ID tokens are 1-2 KB.
const maxTokenBytes = 16 << 10

// Identity is who an accepted ID token says the user is.
type Identity struct {
	// Provider is the provider's lower-case name (google, apple).
	Provider string
	// Subject is the provider's stable, unique user id (the "sub" claim).
	Subject string
	// Email is the e-mail address in the token, if any. Apple may give a
	// private relay address. Trust it only when EmailVerified is true.
	Email         string
	EmailVerified bool
	// The names, when the provider puts them in the token (Google does;
	// Apple never does: the app sends them in the body on first sign-in).
	GivenName, FamilyName, Name string
}

// Config says where each provider's issuer is.
type Config struct {
	// Issuers maps a provider (google, apple) to its issuer URL. A missing
	// entry means the real issuer. Tests point it at a local issuer.
	// Providers other than google and apple are ignored.
	Issuers map[string]string
	// HTTPClient is used for discovery and key fetches; nil means a client
	// with Timeout as its timeout.
	HTTPClient *http.Client
	// Timeout bounds each verification's calls to the provider; zero means
	// DefaultTimeout.
	Timeout time.Duration
}

// FromEnv returns the configuration with the real issuers, unless
// SSO_GOOGLE_ISSUER or SSO_APPLE_ISSUER override them (a local issuer when
// running the stack on one machine).
func FromEnv() Config {
	c := Config{Issuers: map[string]string{Google: GoogleIssuer, Apple: AppleIssuer}}
	if s := strings.TrimSpace(os.Getenv("SSO_GOOGLE_ISSUER")); s != "" {
		c.Issuers[Google] = s
	}
	if s := strings.TrimSpace(os.Getenv("SSO_APPLE_ISSUER")); s != "" {
		c.Issuers[Apple] = s
	}
	return c
}

// The errors of Verify. Each is a VALIDATION_FAILED error about the request
// field idToken (or ssoProvider); ForField renames the field for other
// request shapes. Verify wraps them with context, so compare with errors.Is.
var (
	ErrUnknownProvider = apierr.Invalid("ssoProvider", "must be google or apple")
	ErrNotConfigured   = &apierr.Error{Code: apierr.ValidationFailed, Field: "ssoProvider", Message: "SSO is not configured for this provider"}
	ErrMissingToken    = apierr.Invalid("idToken", "is required")
	ErrMalformed       = apierr.Invalid("idToken", "the token is not a well-formed signed JWT")
	ErrAlgorithm       = apierr.Invalid("idToken", "the token's signing algorithm is not accepted (RS256 or ES256 only)")
	ErrSignature       = apierr.Invalid("idToken", "the token's signature does not match the provider's published keys")
	ErrIssuer          = apierr.Invalid("idToken", "the token was not issued by this provider")
	ErrAudience        = apierr.Invalid("idToken", "the token's audience is not accepted")
	ErrExpired         = apierr.Invalid("idToken", "the token has expired")
	ErrNotYetValid     = apierr.Invalid("idToken", "the token is not valid yet")
	ErrNoSubject       = apierr.Invalid("idToken", "the token has no subject")
	ErrInvalid         = apierr.Invalid("idToken", "the token is not valid")
)

// ForField returns err with the field of its validation error renamed to
// field ("credentials.token" when the token came in a credential), keeping
// the message. Errors that are not validation errors are returned as they
// are. The result no longer matches the sentinels with errors.Is.
func ForField(err error, field string) error {
	e, ok := apierr.As(err)
	if !ok || e.Code != apierr.ValidationFailed || e.Field == "" || field == "" {
		return err
	}
	msg := strings.TrimPrefix(e.Message, e.Field+": ")
	return fmt.Errorf("%w (was: %v)", apierr.Invalid(field, "%s", msg), err)
}
