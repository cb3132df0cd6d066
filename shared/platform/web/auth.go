package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Roles a caller may hold.
const (
	RoleUser  = "USER"
	RoleAdmin = "ADMIN"
)

// Header names of the HTTP contract (README "The HTTP contract in short").
const (
	HeaderTenant       = "x-application-id"
	HeaderServiceToken = "x-service-auth-token"
	HeaderAPIVersion   = "x-api-version"
	HeaderPlatform     = "x-client-platform"
	HeaderNonce        = "x-platform-req-nonce"
)

// Caller is who makes a request. A Caller with no UserID and no Service flag
// is anonymous: it knows only the tenant named by x-application-id.
type Caller struct {
	TenantID    string
	TenantTitle string
	UserID      string
	// SessionKey identifies the caller's session in the store (a hash of
	// the token, never the token itself).
	SessionKey string
	Roles      []string
	Guest      bool
	// Service is true for a tenant service key (it acts as an ADMIN).
	Service bool
}

// Authenticated reports whether the caller presented a valid token or key.
func (c Caller) Authenticated() bool { return c.UserID != "" || c.Service }

// IsAdmin reports whether the caller may see tenant-wide data.
func (c Caller) IsAdmin() bool {
	if c.Service {
		return true
	}
	for _, r := range c.Roles {
		if r == RoleAdmin {
			return true
		}
	}
	return false
}

// RequireAuth returns UNAUTHORIZED unless the caller is authenticated.
func (c Caller) RequireAuth() error {
	if !c.Authenticated() {
		return apierr.New(apierr.Unauthorized, "authentication required")
	}
	return nil
}

// RequireAdmin returns UNAUTHORIZED unless the caller is an admin.
func (c Caller) RequireAdmin() error {
	if !c.IsAdmin() {
		return apierr.New(apierr.Unauthorized, "an admin session or service key is required")
	}
	return nil
}

// RequireUser returns an error unless the caller may act on user userID: an
// admin may act on any user of the tenant, a user only on themselves. Another
// user's resource is NOT_FOUND, so ids cannot be probed.
func (c Caller) RequireUser(userID string) error {
	if err := c.RequireAuth(); err != nil {
		return err
	}
	if !ValidID(userID) {
		return apierr.New(apierr.NotFound, "user not found")
	}
	if c.IsAdmin() || c.UserID == userID {
		return nil
	}
	return apierr.New(apierr.NotFound, "user not found")
}

// ValidID reports whether id could be a platform id (1 to 128 letters,
// digits, '-' or '_'); anything else cannot name a stored item and is
// answered 404 before it reaches the database.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Authenticator resolves credentials presented in headers. The identity
// domain implements it; web only calls it.
type Authenticator interface {
	// Session resolves a session token (auth-token or bearer-auth-token).
	Session(ctx context.Context, token string) (Caller, error)
	// ServiceKey resolves a tenant service key.
	ServiceKey(ctx context.Context, key string) (Caller, error)
	// Tenant resolves an x-application-id for anonymous callers.
	Tenant(ctx context.Context, tenantID string) (Caller, error)
}

// CallerOf returns the caller of r, set by the authentication middleware.
func CallerOf(r *http.Request) Caller {
	c, _ := r.Context().Value(callerKey).(Caller)
	return c
}

// WithCaller returns ctx carrying c (used by tests of handlers and by the
// middleware).
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey, c)
}

// authenticate resolves the caller of every request. A request that names no
// tenant and carries no token passes through anonymous with no tenant; each
// handler decides what it needs. A bad token or key is always 401, and so is a
// token of another tenant than the x-application-id header names.
func authenticate(auth Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := resolve(r, auth)
		if err != nil {
			Error(w, r, err)
			return
		}
		if f, ok := r.Context().Value(fieldsKey).(*requestFields); ok {
			f.setTenant(caller.TenantID)
		}
		next.ServeHTTP(w, r.WithContext(WithCaller(r.Context(), caller)))
	})
}

func resolve(r *http.Request, auth Authenticator) (Caller, error) {
	ctx := r.Context()
	tenant := strings.TrimSpace(r.Header.Get(HeaderTenant))
	var (
		caller Caller
		err    error
		found  bool
	)
	if key := strings.TrimSpace(r.Header.Get(HeaderServiceToken)); key != "" {
		caller, err = auth.ServiceKey(ctx, key)
		found = true
	} else if scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok &&
		(strings.EqualFold(scheme, "Token") || strings.EqualFold(scheme, "Bearer")) {
		caller, err = auth.Session(ctx, strings.TrimSpace(token))
		found = true
	}
	if err != nil {
		return Caller{}, err
	}
	if found {
		if tenant != "" && tenant != caller.TenantID {
			return Caller{}, apierr.New(apierr.Unauthorized, "the token belongs to another application")
		}
		return caller, nil
	}
	if tenant == "" {
		return Caller{}, nil
	}
	return auth.Tenant(ctx, tenant)
}

// RequireTenant returns UNAUTHORIZED when the request named no tenant.
func (c Caller) RequireTenant() error {
	if c.TenantID == "" {
		return apierr.New(apierr.Unauthorized, "header x-application-id or a token is required")
	}
	return nil
}

// ErrAdminOnly returns the error for an option only an admin may use.
func ErrAdminOnly(what string) error {
	return apierr.Errorf(apierr.Unauthorized, "%s requires an admin session or service key", what)
}

// InvalidHeader returns a VALIDATION_FAILED error naming a header.
func InvalidHeader(name, msg string) error { return apierr.Invalid(name, "%s", msg) }
