// Package locationfiles builds the location CSV import and export
// (shared/locationcsv) on the locations domain and the job runner, for the
// locationfiles function (which starts them and serves their files) and the
// jobs function (which runs them, with files.Register of the service's
// Kinds).
package locationfiles

import (
	"github.com/loyalty-platform/platform/shared/action"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/location"
	"github.com/loyalty-platform/platform/shared/locationcsv"
)

// New builds the location import and export on locations and jobs.
func New(b *app.Base, locations *location.Service, jobs *job.Service, actions *action.Recorder) *locationcsv.Service {
	return &locationcsv.Service{Locations: locations, Jobs: jobs, Actions: actions, Clock: b.Clock, TenantTitle: b.TenantTitle}
}
