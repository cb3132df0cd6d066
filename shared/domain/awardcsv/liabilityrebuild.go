package awardcsv

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// NameLiabilityRebuild is the operation name (namespace
// NamespaceReports) of a points liability rebuild.
const NameLiabilityRebuild = "points-liability-rebuild"

// rebuildPage is how many awards a rebuild reads per checkpoint.
const rebuildPage = 100

// handleLiabilityRebuild serves POST /reports/points-liability/rebuild
// (admin, x-platform-req-nonce, no body): it starts a rebuild of the
// points liability, which counts the awards stored before the liability's
// marker existed (award.Service.RebuildLiability); 202 with the
// Operation, and a repeated nonce answers the same operation.
func (s *Service) handleLiabilityRebuild(r *http.Request, caller actor.Actor) (operation.Operation, error) {
	nonce, err := operation.ParseNonce(r.Header.Get(web.HeaderNonce))
	if err != nil {
		return operation.Operation{}, err
	}
	var none struct{}
	if err := web.DecodeOptional(r, &none); err != nil {
		return operation.Operation{}, err
	}
	op, err := s.Jobs.Start(r.Context(), job.StartRequest{
		TenantID: caller.TenantID, Namespace: NamespaceReports, Name: NameLiabilityRebuild, Nonce: nonce, Metadata: map[string]any{},
	})
	if err != nil {
		return operation.Operation{}, fmt.Errorf("rebuild liability %s: %w", caller.TenantID, err)
	}
	return op, nil
}

// rebuildKind runs points liability rebuilds.
type rebuildKind struct{ s *Service }

// Run reads the tenant's stored awards last changed when the rebuild was
// asked for (the operation's creation), rebuildPage per checkpoint, and
// counts those the liability does not hold yet (RebuildLiability): the
// checkpoint's cursor is where the read stopped and the result counts the
// awards read (total), counted by this operation (counted) and found
// counted already (skipped) up to it. Each award's count commits on its
// own, before the checkpoint: a run resumed after a crash reads again
// the awards past the checkpoint, and finds those it counted marked with
// its operation (counted, not counted twice). A run that finds the
// operation's cursor at the end has nothing left to do.
func (k rebuildKind) Run(ctx context.Context, r *job.Run) error {
	tenantID, op := r.TenantID(), r.Operation()
	opID := op.ID
	cp, res := r.Checkpoint(), r.Result()
	if cp.InputDone {
		return nil
	}
	// The awards changed since the request were counted by their writes.
	until, err := time.Parse(time.RFC3339Nano, op.CreatedAt)
	if err != nil {
		return &job.FileError{Code: apierr.Internal, Message: "the operation's creation time cannot be read"}
	}
	var counted int64
	if res.Counted != nil {
		counted = *res.Counted
	}
	for {
		start, err := ddb.ParsePlainKey(cp.Cursor)
		if err != nil {
			return job.BadFile("rebuild: %s", err.Error())
		}
		n := rebuildPage
		if k.s.RebuildPage > 0 {
			n = k.s.RebuildPage
		}
		page, next, err := k.s.Awards.RebuildLiability(ctx, tenantID, opID, until, start, n)
		if err != nil {
			return fmt.Errorf("rebuild liability %s: %w", opID, err)
		}
		if cp.Cursor, err = ddb.PlainKey(next); err != nil {
			return fmt.Errorf("rebuild liability %s: %w", opID, err)
		}
		counted += int64(page.Counted)
		cp.Rows += int64(page.Read)
		cp.Offset = cp.Rows
		last := next == nil
		cp.InputDone = last
		res.Total, res.Skipped, res.Imported, res.Errors = cp.Rows, res.Skipped+int64(page.Skipped), 0, 0
		res.Counted = &counted
		res.Message = fmt.Sprintf("rebuilding: %d awards read, %d counted", res.Total, counted)
		if last {
			res.Message = fmt.Sprintf("done: %d awards read, %d counted, %d counted already", res.Total, counted, res.Skipped)
		}
		var done bool
		if cp, res, done, err = r.Step(ctx, nil, cp, res, last); err != nil || done {
			return err
		}
	}
}
