package awardcsv

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/csvcell"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Operation namespace and name of the points liability export.
const (
	NamespaceReports = "reports"
	NameLiability    = "points-liability"
)

// LiabilityExportRequest is the body of POST
// /reports/points-liability/exports: the report's asOf (RFC 3339, not
// before now; absent: when the job runs) and perkId (absent: every perk).
type LiabilityExportRequest struct {
	AsOf   string `json:"asOf"`
	PerkID string `json:"perkId"`
}

// handleLiabilityExport serves POST /reports/points-liability/exports
// (admin, x-platform-req-nonce): it starts a CSV export of the points
// liability report (GET /reports/points-liability); 202 with the
// Operation, and a repeated nonce answers the same operation. An asOf
// before now is 422, an unknown perkId 404.
func (s *Service) handleLiabilityExport(r *http.Request, caller actor.Actor) (operation.Operation, error) {
	nonce, err := operation.ParseNonce(r.Header.Get(web.HeaderNonce))
	if err != nil {
		return operation.Operation{}, err
	}
	var in LiabilityExportRequest
	if err := web.DecodeOptional(r, &in); err != nil {
		return operation.Operation{}, err
	}
	md := map[string]any{}
	if in.AsOf != "" {
		at, err := award.ParseAsOf(in.AsOf, s.Clock.Now())
		if err != nil {
			return operation.Operation{}, err
		}
		md["asOf"] = at.Format(time.RFC3339)
	}
	if in.PerkID != "" {
		if err := s.knownPerk(r.Context(), caller.TenantID, in.PerkID); err != nil {
			return operation.Operation{}, err
		}
		md["perkId"] = in.PerkID
	}
	return s.Jobs.Start(r.Context(), job.StartRequest{
		TenantID: caller.TenantID, Namespace: NamespaceReports, Name: NameLiability, Nonce: nonce, Metadata: md,
	})
}

// knownPerk returns award.ErrPerkNotFound unless the tenant has perk id.
func (s *Service) knownPerk(ctx context.Context, tenantID, id string) error {
	if !web.ValidID(id) {
		return award.ErrPerkNotFound
	}
	perks, err := s.Perks.All(ctx, tenantID)
	if err != nil {
		return fmt.Errorf("perks of %s: %w", tenantID, err)
	}
	for _, p := range perks {
		if p.ID == id {
			return nil
		}
	}
	return award.ErrPerkNotFound
}

// liabilityKind runs points liability exports.
type liabilityKind struct{ s *Service }

// Run writes the report into the results file in one commit: a row per
// perk (asOf, perkId, title, outstanding) and a column per month of
// expiries ("2027-01"). The report is of asOf when the job runs at or
// before it, else of the time the job runs (the aggregates hold the
// awards as they are; the asOf column says which). A run that finds its
// commit made has nothing left to do.
func (k liabilityKind) Run(ctx context.Context, r *job.Run) error {
	cp, res := r.Checkpoint(), r.Result()
	if cp.InputDone {
		return nil
	}
	md := r.Operation().Metadata
	now := k.s.Clock.Now().UTC().Truncate(time.Second)
	asOf := now
	if v, _ := md["asOf"].(string); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil && t.After(now) {
			asOf = t
		}
	}
	perkID, _ := md["perkId"].(string)
	rep, err := k.s.Awards.LiabilityAt(ctx, r.TenantID(), perkID, asOf)
	if err != nil {
		return fmt.Errorf("points liability export: %w", err)
	}
	cols := append([]string{"asOf", "perkId", "title", "outstanding"}, rep.Months...)
	lines := make([][]string, 0, len(rep.Perks))
	for _, p := range rep.Perks {
		line := []string{rep.AsOf, p.PerkID, p.Title, strconv.Itoa(p.Outstanding)}
		for _, m := range p.Expiring {
			line = append(line, strconv.Itoa(m.Points))
		}
		lines = append(lines, csvcell.Row(line, func(j int) bool { return j >= 3 }))
	}
	cp.Columns = cols
	cp.Rows = int64(len(lines))
	cp.Offset = cp.Rows
	cp.InputDone = true
	res.Total, res.Imported, res.Skipped, res.Errors = cp.Rows, 0, 0, 0
	res.Href = "/reports/points-liability/exports/" + r.Operation().ID
	res.Message = fmt.Sprintf("done: %d perks exported (asOf %s)", len(lines), rep.AsOf)
	return r.Commit(ctx, lines, cp, res, nil)
}
