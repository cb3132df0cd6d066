// Package account is the accounts function's part of the users domain:
// signing up and in. It serves sign-up (and a guest's conversion),
// activation, login and logout, password reset, guests, sessions, SSO and
// the secondary credentials; it sends codes by SMS and e-mail within the
// tenants' hourly caps, throttles password logins, counts anonymous calls
// per client address, checks new passwords against the list of common
// passwords and verifies SSO tokens. It is built on the domain's core
// (shared/domain/user): the user record, its store and the user's API
// view.
package account

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/allowance"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/auth"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Sentinel errors of signing up and in.
var (
	ErrCredentialExists  = apierr.New(apierr.CredentialExists, "a user with this credential already exists")
	ErrAlreadyActive     = apierr.New(apierr.AlreadyActive, "the user is already active")
	ErrInvalidToken      = apierr.New(apierr.InvalidToken, "the token is invalid")
	ErrTokenVoided       = apierr.New(apierr.InvalidToken, "too many wrong codes: request a new code")
	ErrUserPending       = apierr.New(apierr.UserPending, "the user has not been activated")
	ErrBadLogin          = apierr.New(apierr.Unauthorized, "wrong credential or password")
	ErrPendingLogin      = apierr.New(apierr.Unauthorized, "the user has not been activated")
	ErrBadSession        = auth.ErrBadSession
	ErrBadServiceKey     = auth.ErrBadServiceKey
	ErrUnknownTenant     = auth.ErrUnknownTenant
	ErrDeviceTaken       = apierr.New(apierr.DeviceTaken, "this device already has an account")
	ErrSocialUnsupported = apierr.New(apierr.ValidationFailed, "credentials.provider: FACEBOOK and TWITTER sign-in are not supported; use GOOGLE, APPLE, EMAIL or MOBILE")
)

// Lifetimes of sessions and codes.
const (
	// DefaultSessionLifetime is the lifetime of a non-permanent user
	// session unless the tenant's settings.sessionHours says otherwise.
	DefaultSessionLifetime = 30 * 24 * time.Hour
	// AdminSessionLifetime is the lifetime of an admin session made with
	// POST /sessions.
	AdminSessionLifetime = 12 * time.Hour
	// GuestLifetime is how long a guest user, its credentials and its
	// session live unless converted into a full user.
	GuestLifetime = time.Hour
	// ResetLifetime is how long a password reset code is valid.
	ResetLifetime = time.Hour
	// MaxCodeAttempts is how many wrong codes void an activation or reset
	// code until a new one is requested.
	MaxCodeAttempts = 5
)

// Verifier checks a third-party ID token of an SSO provider for one of
// the audiences (sso.Verifier), so that this package links no OpenID
// Connect client.
type Verifier interface {
	Verify(ctx context.Context, provider, rawIDToken string, audiences []string) (sso.Identity, error)
}

// Config is what the accounts part needs besides the users domain's core.
type Config struct {
	Tenants *tenant.Store
	// Actions records USER_CREATED and USER_ACTIVATED (nil: none).
	Actions  *action.Recorder
	Notifier notify.Notifier
	// Caps bound the codes each tenant sends an hour (nil: no caps).
	Caps *notify.Caps
	// SSO verifies third-party ID tokens (SSO and social credentials).
	SSO Verifier
	// Allowance counts the anonymous sign-ups and code requests of each
	// client address, at most AnonymousPerMinute a minute (nil: no
	// allowance).
	Allowance          *allowance.Counter
	AnonymousPerMinute int
	// Cursor signs the page keys of GET /credentials.
	Cursor ddb.Cursor
	// PasswordCost is the cost of new password hashes (the zero value:
	// the OWASP parameters every function uses; the tests lower it).
	PasswordCost auth.PasswordCost
}

// Service signs users up and in. Its Config is what New was given (the
// tests tighten a cap or point SSO at a local issuer through it).
type Service struct {
	Config
	users *user.Service
	store *store
	// dummyHash is a password hash no password is checked against except
	// for unknown credentials, so that a login for an unknown user costs
	// as much as one for a known user.
	dummyHash func() string
}

// New returns the service on the users domain's core.
func New(users *user.Service, c Config) *Service {
	s := &Service{Config: c, users: users, store: &store{users.Store()}}
	s.dummyHash = sync.OnceValue(func() string { return s.HashPassword(newToken("dummy")) })
	return s
}

func (s *Service) st() *store { return s.store }

// Routes are the routes of signing up and in (the accounts
// function): sign-up, activation, login and logout, password reset,
// guests, sessions, SSO and the secondary credentials. They send codes by
// SMS and e-mail, check passwords against the common-password list and
// verify SSO tokens. The logout checks its userId parameter, the
// credential list its paging and POST /sessions its (empty) body before
// they look at the caller (Before).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/users", Access: web.Anonymous, Handler: web.Serve(http.StatusCreated, s.handleCreate)},
		{Method: "POST", Path: "/users/activate", Access: web.Anonymous, Handler: web.Serve(http.StatusOK, s.handleActivate)},
		{Method: "GET", Path: "/users/login", Access: web.Anonymous, Handler: web.Serve(http.StatusOK, s.handleLogin)},
		{Method: "GET", Path: "/users/logout", Access: web.Authenticated, Before: requireLogoutUser, Handler: web.ServeEmpty(http.StatusOK, s.handleLogout)},
		{Method: "POST", Path: "/users/reset", Access: web.Anonymous, Handler: web.ServeEmpty(http.StatusOK, s.handleReset)},
		{Method: "POST", Path: "/guests", Access: web.Anonymous, Handler: web.Serve(http.StatusCreated, s.handleCreateGuest)},
		{Method: "POST", Path: "/sessions", Access: web.Admin, Before: checkNoSessionBody, Handler: web.Serve(http.StatusCreated, s.handleCreateSession)},
		{Method: "DELETE", Path: "/sessions/{userId}", Access: web.Self, Handler: web.ServeEmpty(http.StatusOK, s.handleDeleteSessions)},
		{Method: "GET", Path: "/credentials", Access: web.Authenticated, Before: web.CheckPaging, Handler: web.Serve(http.StatusOK, s.handleListCredentials)},
		{Method: "POST", Path: "/users/{ssoProvider}/sso", Access: web.Anonymous, Handler: web.Serve(http.StatusOK, s.handleSSO)},
		{Method: "POST", Path: "/users/{userId}/credentials", Access: web.Self, Handler: web.Serve(http.StatusCreated, s.handleAddCredential)},
		{Method: "POST", Path: "/users/{userId}/credentials/{credentialId}/verify", Access: web.Self, Handler: web.Serve(http.StatusOK, s.handleVerifyCredential)},
		{Method: "DELETE", Path: "/users/{userId}/credentials/{credentialId}", Access: web.Self, Handler: web.ServeEmpty(http.StatusNoContent, s.handleDeleteCredential)},
	}
}
