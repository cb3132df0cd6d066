package web

import (
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
)

// Access says who may call a route. Each route declares it where it is
// registered (Route.Access) and Handler checks it before the route's
// handler runs, with the actor's Require methods: the answers are those
// the handlers gave when each checked its caller itself.
type Access int

const (
	// Undeclared is the zero value: the route has not said who may call
	// it. Handler serves it unchecked (the handler would have to check
	// its caller itself), which only tests' own routes rely on: every
	// route of the platform declares its access, and shared/wire/whole's
	// TestRoutesDeclareAccess fails for one that does not.
	Undeclared Access = iota
	// Public routes serve anyone, even a request that names no tenant
	// (GET /openapi.json). Credentials that are sent are still checked,
	// as on every route: a bad token is 401.
	Public
	// Anonymous routes serve any caller of a tenant, anonymous ones too:
	// the request names the tenant (x-application-id or a token), or it
	// is 401 (actor.Actor.RequireTenant).
	Anonymous
	// Authenticated routes serve a user or guest session, an admin
	// session or the service key; anyone else is 401
	// (actor.Actor.RequireAuth).
	Authenticated
	// Self routes serve the user the path's {userId} names, or an admin:
	// without credentials 401; another user's path, or an id that cannot
	// be one, 404 "user not found" (actor.Actor.RequireUser), so user ids
	// cannot be probed.
	Self
	// Admin routes serve an ADMIN session or the service key; anyone else
	// is 401 (actor.Actor.RequireAdmin).
	Admin
)

// Accesses lists every declared access, for tests and reports.
var Accesses = []Access{Public, Anonymous, Authenticated, Self, Admin}

// String names the access as the route tables do (web.Admin is "Admin").
func (a Access) String() string {
	switch a {
	case Public:
		return "Public"
	case Anonymous:
		return "Anonymous"
	case Authenticated:
		return "Authenticated"
	case Self:
		return "Self"
	case Admin:
		return "Admin"
	}
	return "Undeclared"
}

// Check returns the error that refuses caller a on a request r of a route
// with this access, or nil.
func (a Access) Check(r *http.Request, c actor.Actor) error {
	switch a {
	case Anonymous:
		return c.RequireTenant()
	case Authenticated:
		return c.RequireAuth()
	case Self:
		return c.RequireUser(r.PathValue("userId"))
	case Admin:
		return c.RequireAdmin()
	}
	return nil
}

// serve returns the handler Handler registers for the route: its Before
// check, then its access check, then its handler, all inside Around.
func (rt Route) serve() http.HandlerFunc {
	h := rt.Handler
	if rt.Access != Undeclared || rt.Before != nil {
		next := h
		h = func(w http.ResponseWriter, r *http.Request) {
			if rt.Before != nil {
				if err := rt.Before(r); err != nil {
					Error(w, r, err)
					return
				}
			}
			if err := rt.Access.Check(r, CallerOf(r)); err != nil {
				Error(w, r, err)
				return
			}
			next(w, r)
		}
	}
	if rt.Around != nil {
		h = rt.Around(h)
	}
	return h
}
