// Package checkins wires the checkins function: a user's check-in (create,
// list, checkout) and the check-ins at a location, on the locations
// domain's read, telling the tenant's POS of each check-in.
package checkins

import (
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
)

// Function is what the checkins function runs.
type Function struct {
	Checkins *checkin.Service
}

// New builds the checkins function on b.
func New(b *wire.Base) *Function {
	return &Function{Checkins: places.Checkins(b, places.Locations(b), b.Actions())}
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Checkins.Routes() }
