// Package locationfiles wires the locationfiles function: starting a
// location CSV import or export (the jobs function runs them) and serving
// their files. It is apart from the locations function so that the
// locations function does not link the S3 client.
package locationfiles

import (
	"github.com/loyalty-platform/platform/shared/domain/locationcsv"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/parts/places"
)

// Function is what the locationfiles function runs.
type Function struct {
	LocationJobs *locationcsv.Service
}

// New builds the locationfiles function on b and the process's job
// runner.
func New(b *wire.Base, jobs *job.Service) *Function {
	return &Function{LocationJobs: places.LocationFiles(b, places.Locations(b), jobs, b.Actions())}
}

// Routes are the function's routes.
func (f *Function) Routes() []web.Route { return f.LocationJobs.Routes() }
