package locationcsv

import (
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// MaxExportLimit is the largest `limit` of an export.
const MaxExportLimit = 1000000

// Routes returns the routes this package adds to the locations function:
// POST /locations/imports starts an import (admin; job.ImportRequest: the
// multipart file or ?upload=url, nonce, dryRun, suppressEvents; 202 with the
// Operation); GET /locations/imports/{fileId} and
// /locations/exports/files/{fileId} serve a finished job's file (admin;
// inline text/csv up to job.DefaultInlineLimit, else 303 to a presigned
// URL); GET /locations/exports/{fileId} is the export file's deprecated
// alias (same handler and access: a path that, unlike the new one, also
// matches GET /locations/{locationId}/actions and /checkins); POST
// /locations/exports starts an export (handleExport).
func (s *Service) Routes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/locations/imports", Access: web.Admin, Handler: s.Jobs.StartHandler(Namespace, NameImport), Idempotent: true},
		{Method: "GET", Path: "/locations/imports/{fileId}", Access: web.Admin, Handler: s.Jobs.FileHandler(Namespace, NameImport)},
		{Method: "POST", Path: "/locations/exports", Access: web.Admin, Handler: web.Serve(http.StatusAccepted, s.handleExport)},
		{Method: "GET", Path: "/locations/exports/files/{fileId}", Access: web.Admin, Handler: s.Jobs.FileHandler(Namespace, NameExport)},
		{Method: "GET", Path: "/locations/exports/{fileId}", Access: web.Admin, Handler: s.Jobs.FileHandler(Namespace, NameExport)},
	}
}

// handleExport serves POST /locations/exports (admin): it starts an export
// of the locations matching `filters` (at most `limit`). 202 with the
// Operation; a repeated nonce answers the same operation.
func (s *Service) handleExport(r *http.Request, a actor.Actor) (operation.Operation, error) {
	nonce, err := operation.ParseNonce(r.Header.Get(web.HeaderNonce))
	if err != nil {
		return operation.Operation{}, err
	}
	var in ExportRequest
	if err := web.DecodeOptional(r, &in); err != nil {
		return operation.Operation{}, err
	}
	md, err := in.metadata()
	if err != nil {
		return operation.Operation{}, err
	}
	return s.Jobs.Start(r.Context(), job.StartRequest{
		TenantID: a.TenantID, Namespace: Namespace, Name: NameExport, Nonce: nonce, Metadata: md,
	})
}

// metadata validates an export request and returns it as the operation's
// metadata.
func (in ExportRequest) metadata() (map[string]any, error) {
	md := map[string]any{}
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxExportLimit {
			return nil, apierr.Invalid("limit", "must be from 1 to %d", MaxExportLimit)
		}
		md["limit"] = *in.Limit
	}
	if in.Filters == nil {
		return md, nil
	}
	f := location.Filter{}
	if len(in.Filters.State) > 64 {
		return nil, apierr.Invalid("filters.state", "must be at most 64 characters")
	}
	var states []string
	for _, st := range strings.Split(in.Filters.State, ",") {
		// Any case, as GET /locations?state= accepts; stored upper-case.
		if st = strings.ToUpper(strings.TrimSpace(st)); st != "" {
			states = append(states, st)
		}
	}
	f.States = states
	if err := f.Validate(); err != nil {
		return nil, err
	}
	filters := map[string]any{}
	if len(states) > 0 {
		filters["state"] = strings.Join(states, ",")
	}
	for name, list := range map[string][]string{"tags": in.Filters.Tags, "regions": in.Filters.Regions} {
		if len(list) > 100 {
			return nil, apierr.Invalid("filters."+name, "at most 100 items")
		}
		var items []any
		for _, v := range list {
			v = strings.TrimSpace(v)
			if v == "" || len(v) > location.MaxListItem {
				return nil, apierr.Invalid("filters."+name, "items must be 1 to %d characters", location.MaxListItem)
			}
			items = append(items, v)
		}
		if len(items) > 0 {
			filters[name] = items
		}
	}
	md["filters"] = filters
	return md, nil
}
