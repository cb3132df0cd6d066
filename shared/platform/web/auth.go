package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Roles a caller may hold (the actor package's).
const (
	RoleUser  = actor.RoleUser
	RoleAdmin = actor.RoleAdmin
)

// Header names of the HTTP contract (README "The HTTP contract in short").
const (
	HeaderTenant       = "x-application-id"
	HeaderServiceToken = "x-service-auth-token"
	HeaderAPIVersion   = "x-api-version"
	HeaderPlatform     = "x-client-platform"
	HeaderNonce        = "x-platform-req-nonce"
)

// ValidID reports whether id could be a platform id (actor.ValidID): 1 to
// 128 letters, digits, '-' or '_'; anything else cannot name a stored item
// and is answered 404 before it reaches the database.
func ValidID(id string) bool { return actor.ValidID(id) }

// Authenticator resolves credentials presented in headers. The identity
// domain implements it; web only calls it.
type Authenticator interface {
	// Session resolves a session token (auth-token or bearer-auth-token).
	Session(ctx context.Context, token string) (actor.Actor, error)
	// ServiceKey resolves a tenant service key.
	ServiceKey(ctx context.Context, key string) (actor.Actor, error)
	// Tenant resolves an x-application-id for anonymous callers.
	Tenant(ctx context.Context, tenantID string) (actor.Actor, error)
}

// CallerOf returns the caller of r, set by the authentication middleware.
func CallerOf(r *http.Request) actor.Actor {
	c, _ := r.Context().Value(callerKey).(actor.Actor)
	return c
}

// WithCaller returns ctx carrying c (used by tests of handlers and by the
// middleware).
func WithCaller(ctx context.Context, c actor.Actor) context.Context {
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

func resolve(r *http.Request, auth Authenticator) (actor.Actor, error) {
	ctx := r.Context()
	tenant := strings.TrimSpace(r.Header.Get(HeaderTenant))
	var (
		caller actor.Actor
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
		return actor.Actor{}, err
	}
	if found {
		if tenant != "" && tenant != caller.TenantID {
			return actor.Actor{}, apierr.New(apierr.Unauthorized, "the token belongs to another application")
		}
		return caller, nil
	}
	if tenant == "" {
		return actor.Actor{}, nil
	}
	return auth.Tenant(ctx, tenant)
}

// ErrAdminOnly returns the error for an option only an admin may use.
func ErrAdminOnly(what string) error {
	return apierr.Errorf(apierr.Unauthorized, "%s requires an admin session or service key", what)
}

// InvalidHeader returns a VALIDATION_FAILED error naming a header.
func InvalidHeader(name, msg string) error { return apierr.Invalid(name, "%s", msg) }
