// Package users wires the users function: the user record (list, search
// and lookup, read and update, with push registration) and its addresses
// (with geocoding) (shared/domain/directory), and the parts of a user
// other domains own that its include options read: points and segments
// (the loyalty domains) and the current check-in.
package users

import (
	"github.com/loyalty-platform/platform/shared/aws/amazonlocation"
	"github.com/loyalty-platform/platform/shared/domain/directory"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/identity"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
	"github.com/loyalty-platform/platform/shared/wire/parts/rewards"
)

// Function is what the users function runs.
type Function struct {
	// Users is the users domain's core the directory is built on.
	Users     *user.Service
	Directory *directory.Service
}

// New builds the users function on b; the geocoder is the one the
// configuration names (amazonlocation.FromEnv: GEOCODER,
// PLACE_INDEX_NAME), built here alone so that the other functions link no
// Amazon Location client.
func New(b *wire.Base) (*Function, error) {
	p, err := identity.Pusher(b)
	if err != nil {
		return nil, err
	}
	actions := b.Actions()
	u := identity.Users(b, identity.Includes(rewards.New(b, actions), places.Checkins(b, places.Locations(b), actions)))
	return &Function{Users: u, Directory: directory.New(u, p, amazonlocation.FromEnv(b.AWS), b.Cursor)}, nil
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Directory.Routes() }
