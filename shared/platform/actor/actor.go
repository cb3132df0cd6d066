// Package actor says who acts: the tenant, the user or service key, and
// the roles of whoever made a request (or of a job acting for them). The
// domain services take an Actor and check it with its Require methods;
// nothing here knows HTTP (shared/platform/web resolves the Actor of a
// request and checks each route's declared access with these methods).
package actor

import "github.com/loyalty-platform/platform/shared/platform/apierr"

// Roles an actor may hold.
const (
	RoleUser  = "USER"
	RoleAdmin = "ADMIN"
)

// Actor is who acts. An Actor with no UserID and no Service flag is
// anonymous: it knows only its tenant (or not even that).
type Actor struct {
	TenantID    string
	TenantTitle string
	UserID      string
	// SessionKey identifies the actor's session in the store (a hash of
	// the token, never the token itself).
	SessionKey string
	Roles      []string
	Guest      bool
	// Service is true for a tenant service key (it acts as an ADMIN).
	Service bool
}

// Authenticated reports whether the actor presented a valid token or key.
func (a Actor) Authenticated() bool { return a.UserID != "" || a.Service }

// IsAdmin reports whether the actor may see tenant-wide data.
func (a Actor) IsAdmin() bool {
	if a.Service {
		return true
	}
	for _, r := range a.Roles {
		if r == RoleAdmin {
			return true
		}
	}
	return false
}

// RequireTenant returns UNAUTHORIZED when the actor names no tenant.
func (a Actor) RequireTenant() error {
	if a.TenantID == "" {
		return apierr.New(apierr.Unauthorized, "header x-application-id or a token is required")
	}
	return nil
}

// RequireAuth returns UNAUTHORIZED unless the actor is authenticated.
func (a Actor) RequireAuth() error {
	if !a.Authenticated() {
		return apierr.New(apierr.Unauthorized, "authentication required")
	}
	return nil
}

// RequireAdmin returns UNAUTHORIZED unless the actor is an admin.
func (a Actor) RequireAdmin() error {
	if !a.IsAdmin() {
		return apierr.New(apierr.Unauthorized, "an admin session or service key is required")
	}
	return nil
}

// RequireUser returns an error unless the actor may act on user userID: an
// admin may act on any user of the tenant, a user only on themselves.
// Another user's resource is NOT_FOUND, so ids cannot be probed.
func (a Actor) RequireUser(userID string) error {
	if err := a.RequireAuth(); err != nil {
		return err
	}
	if !ValidID(userID) {
		return apierr.New(apierr.NotFound, "user not found")
	}
	if a.IsAdmin() || a.UserID == userID {
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
