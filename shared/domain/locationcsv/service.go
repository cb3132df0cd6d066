// Package locationcsv is the bulk CSV import and export of locations (spec
// "Import locations from CSV", "Export locations"): the HTTP calls that
// start them and serve their files, the CSV notation of a location
// (columns.go), and the two job kinds the jobs function runs (shared/platform/job).
//
// Import: every row is matched by _id, then by title (ignoring case), else
// it creates a location. It upserts: a matched location takes the fields
// the file has columns for, and keeps the stored values of fields whose
// columns the header lacks (an empty cell in a present column clears its
// field); address.*, contacts.*, services.* and openingHours.* columns
// count key by key, links.<provider>.* provider by provider, and any
// zones.* column replaces all the zones (keep.go). A row's writes go into the job's transaction with
// its checkpoint (see shared/platform/job), so a row is applied exactly once even
// when S3 delivers the event twice or the function stops mid-file. A bad
// row is reported in the results file and never stops the others; a file
// that cannot be read (not CSV text, empty, unknown or missing required
// columns) FAILS the operation. dryRun (default true) validates and reports
// what each row would do without writing; suppressEvents (default true)
// false records a LOCATION_CREATED or LOCATION_UPDATED action per written
// row, in the row's transaction.
//
// Export: the locations that match the filters, in title order, in the
// same notation; re-importing an export changes nothing (each row matches
// its location by _id and holds exactly what it holds).
package locationcsv

import (
	"context"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/job"
)

// Operation namespace and names of the location jobs.
const (
	Namespace  = "locations"
	NameImport = "import"
	NameExport = "export"
)

// Titles names tenants (the tenants domain, through the function's
// tenant cache).
type Titles interface {
	Title(ctx context.Context, tenantID string) (string, error)
}

// Service starts and runs location imports and exports.
type Service struct {
	Locations *location.Service
	Jobs      *job.Service
	Actions   *action.Recorder
	Clock     clock.Clock
	// Tenants name the tenant in the actions an import records (nil:
	// the actions name none).
	Tenants Titles
}

// Kinds returns the job kinds of this package, for job.Service.Kinds.
func (s *Service) Kinds() map[string]job.Kind {
	return map[string]job.Kind{
		job.KindKey(Namespace, NameImport): importKind{s},
		job.KindKey(Namespace, NameExport): exportKind{s},
	}
}
