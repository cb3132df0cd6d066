// Package awardcsv is the bulk award import (spec: "Bulk award import"):
// the HTTP calls that start it and serve its results file, and the job
// kind the jobs function runs (shared/platform/job).
//
// The CSV file has a header row naming one of three layouts (case and
// surrounding spaces ignored):
//
//	user_id, perk_id            grants each row the perk's points.initial
//	user_id, perk_id, points    grants `points` (an empty cell: points.initial)
//	user_id, perk_<perkId>...   each non-empty cell grants its points of that perk
//
// Every grant applies as POST /perks/{perkId}/awards would (shared/domain/award
// PrepareImport): a new award holds the points granted, a global or CLUB or
// LEVEL award starts from points.initial, the result is clamped to
// points.max, and a CLUB or LEVEL perk needs the user to be a member of
// its segment. A row is all or nothing: a row whose user, perk, cells or
// membership is wrong grants nothing and is reported in the results file
// (the others go on); a header that fits no layout FAILS the operation.
//
// Exactly once: the grants of each batch of rows go into one DynamoDB
// transaction with the job's checkpoint (job.Run.Commit), so a duplicated
// S3 event, a retried invocation or a run resumed after a crash never
// applies a row twice. Repeating an import with a new nonce grants again.
//
// dryRun (default true) checks the rows and reports what each would grant
// without writing; suppressEvents (default true) false records an
// AWARD_GRANTED action (source IMPORT, operationId) per grant in the
// grant's transaction.
//
// The package also starts and runs the points liability's CSV export
// (liabilityexport.go) and its rebuild (liabilityrebuild.go), jobs of the
// same functions.
package awardcsv

import (
	"context"
	"net/http"

	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Operation namespace and name of the award import.
const (
	Namespace  = "awards"
	NameImport = "import"
)

// Perks reads a tenant's perks (the perk domain).
type Perks interface {
	All(ctx context.Context, tenantID string) ([]perk.Perk, error)
}

// Users finds users (the users domain): the live users among ids.
type Users interface {
	People(ctx context.Context, tenantID string, ids []string) (map[string]award.Person, error)
}

// Titles names tenants (the tenants domain, through the function's
// tenant cache).
type Titles interface {
	Title(ctx context.Context, tenantID string) (string, error)
}

// Service starts and runs award imports.
type Service struct {
	Awards *award.Service
	Perks  Perks
	Users  Users
	Jobs   *job.Service
	Clock  clock.Clock
	// Tenants name the tenant in the actions an import records (nil:
	// the actions name none).
	Tenants Titles
	// RebuildPage is how many awards a liability rebuild reads per
	// checkpoint (0: rebuildPage); tests make it small.
	RebuildPage int
}

// Kinds returns the job kinds of this package, for job.Service.Kinds.
func (s *Service) Kinds() map[string]job.Kind {
	return map[string]job.Kind{
		job.KindKey(Namespace, NameImport): importKind{s}, job.KindKey(NamespaceReports, NameLiability): liabilityKind{s},
		job.KindKey(NamespaceReports, NameLiabilityRebuild): rebuildKind{s},
	}
}

// Routes returns the routes this package adds to the loyalty function:
// POST /awards/imports starts an import (admin; job.ImportRequest: the
// multipart file or ?upload=url, nonce, dryRun, suppressEvents; 202 with the
// Operation) and GET /awards/imports/{fileId} serves a finished import's
// results file (admin); POST /reports/points-liability/exports starts a
// CSV export of the points liability report (handleLiabilityExport) and
// GET /reports/points-liability/exports/{fileId} serves its file (admin);
// POST /reports/points-liability/rebuild starts a rebuild of the points
// liability (handleLiabilityRebuild; admin).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/awards/imports", Access: web.Admin, Handler: s.Jobs.StartHandler(Namespace, NameImport), Idempotent: true},
		{Method: "GET", Path: "/awards/imports/{fileId}", Access: web.Admin, Handler: s.Jobs.FileHandler(Namespace, NameImport)},
		{Method: "POST", Path: "/reports/points-liability/exports", Access: web.Admin, Handler: web.Serve(http.StatusAccepted, s.handleLiabilityExport)},
		{Method: "GET", Path: "/reports/points-liability/exports/{fileId}", Access: web.Admin, Handler: s.Jobs.FileHandler(NamespaceReports, NameLiability)},
		{Method: "POST", Path: "/reports/points-liability/rebuild", Access: web.Admin, Handler: web.Serve(http.StatusAccepted, s.handleLiabilityRebuild)},
	}
}
