// Package directory is the users function's part of the users domain: the
// user directory (list, name and credential search, lookup), reading and
// updating a user (with the push registration an update makes) and the
// user's delivery addresses, with address suggestions and coordinates
// from the geocoder. It is built on the domain's core (shared/domain/user):
// the user record, its store and the user's API view with the include
// options.
package directory

import (
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/geo"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// ErrPointsNotEditable refuses `points` in an update body.
var ErrPointsNotEditable = apierr.New(apierr.PointsNotEditable, "loyalty points cannot be changed through the user")

// Service serves the user directory, the user record and the addresses.
type Service struct {
	users    *user.Service
	pusher   notify.Pusher
	geocoder geo.Geocoder
	cursor   ddb.Cursor
}

// New returns the service on the users domain's core: pusher registers
// the push tokens an update sends, geocoder serves address suggestions
// and coordinates, cursor signs the lists' page keys.
func New(users *user.Service, pusher notify.Pusher, geocoder geo.Geocoder, cursor ddb.Cursor) *Service {
	return &Service{users: users, pusher: pusher, geocoder: geocoder, cursor: cursor}
}

// Routes are the routes of the user record (the users function): list,
// search and lookup, read and update, and the addresses. An update
// registers push tokens; the includes read points, segments and the
// current check-in.
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/users", Handler: s.handleList},
		{Method: "POST", Path: "/users/lookup", Handler: s.handleLookup},
		{Method: "GET", Path: "/users/{userId}", Handler: s.handleGet},
		{Method: "PUT", Path: "/users/{userId}", Handler: s.handleUpdate},
		{Method: "GET", Path: "/users/{userId}/addresses", Handler: s.handleListAddresses},
		{Method: "POST", Path: "/addresses/suggestions", Handler: s.handleSuggestAddresses},
		{Method: "POST", Path: "/addresses/coordinates", Handler: s.handleAddressCoordinates},
		{Method: "POST", Path: "/users/{userId}/addresses", Handler: s.handleCreateAddress},
		{Method: "PUT", Path: "/users/{userId}/addresses/{addressId}", Handler: s.handleUpdateAddress},
		{Method: "DELETE", Path: "/users/{userId}/addresses/{addressId}", Handler: s.handleDeleteAddress},
	}
}

func (s *Service) st() *user.Store { return s.users.Store() }
