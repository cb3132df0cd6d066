// Package locations wires the locations function: locations and their tag
// groups (their CSV import and export are the locationfiles function's, so
// that this one links no S3 client).
package locations

import (
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
)

// Function is what the locations function runs.
type Function struct {
	Locations *location.Service
}

// New builds the locations function on b.
func New(b *wire.Base) *Function {
	return &Function{Locations: places.Locations(b)}
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.Locations.Routes() }
