// Package locationfiles builds the location CSV import and export
// (shared/domain/locationcsv) on the locations domain and the job runner, for the
// locationfiles function (which starts them and serves their files) and the
// jobs function (which runs them, with files.Register of the service's
// Kinds).
package locationfiles

import (
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/locationcsv"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/wire"
)

// New builds the location import and export on locations and jobs.
func New(b *wire.Base, locations *location.Service, jobs *job.Service, actions *action.Recorder) *locationcsv.Service {
	return &locationcsv.Service{Locations: locations, Jobs: jobs, Actions: actions, Clock: b.Clock, TenantTitle: b.TenantTitle}
}
