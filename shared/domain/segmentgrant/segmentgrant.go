// Package segmentgrant is the legacy grant of POST /perks/{perkId}/grant:
// with userId it grants the user at once (200 with the award in the older
// schema), with segmentId it grants every live member of the segment as an
// Operation (202; GET /operations/{operationId} reads its progress and
// result) that the jobs function runs (shared/platform/job).
//
// Which operation a request makes: the x-platform-req-nonce header when
// sent (a GUID, as for the imports); else one derived from the
// Idempotency-Key header, the caller and the perk, so that a retry with
// the key returns the same operation even after its stored answer is gone;
// else a new one per request (today's clients send neither, and a grant
// without either is still accepted).
//
// Exactly once: the request is accepted with the perk (and location) as
// they are then, kept in the operation; each member's grant commits in
// one transaction with a marker of (operation, perk, segment, member), so
// that a second delivery, a crashed run resumed or a run that lost its
// lease never grants a member twice, and a resumed run counts the members
// an earlier run granted past the checkpoint from their markers.
package segmentgrant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"
	"sync"

	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Operation namespace and name of a grant to a segment.
const (
	Namespace = "awards"
	Name      = "segmentGrant"
)

// page is how many members a run grants between two checkpoints, and
// width how many of them at once (each its own transaction).
const (
	page  = 50
	width = 8
)

// Service serves the legacy grant and runs its grants to segments.
type Service struct {
	Awards *award.Service
	Jobs   *job.Service
}

// Routes returns the route this package adds to the loyalty function:
// POST /perks/{perkId}/grant (admin; takes Idempotency-Key).
func (s *Service) Routes() []web.Route {
	return []web.Route{{Method: "POST", Path: "/perks/{perkId}/grant", Access: web.Admin, Handler: web.Serve(http.StatusOK, s.handleGrant), Idempotent: true}}
}

// Kinds returns the job kind of this package, for job.Service.Kinds.
func (s *Service) Kinds() map[string]job.Kind {
	return map[string]job.Kind{job.KindKey(Namespace, Name): kind{s}}
}

// handleGrant serves POST /perks/{perkId}/grant (admin, older schema):
// with userId, 200 with the user's award as a LegacyAward; with segmentId,
// 202 with the Operation that grants every live member of the segment (at
// most award.MaxSegmentGrant).
func (s *Service) handleGrant(r *http.Request, a actor.Actor) (any, error) {
	var in award.LegacyGrantInput
	if err := web.Decode(r, &in); err != nil {
		return nil, err
	}
	perkID := r.PathValue("perkId")
	switch {
	case in.UserID != "" && in.SegmentID != "":
		return nil, apierr.Invalid("segmentId", "send userId or segmentId, not both")
	case in.UserID == "" && in.SegmentID == "":
		return nil, apierr.Invalid("userId", "is required (or segmentId, to grant every member of a segment)")
	case in.UserID != "":
		aw, err := s.Awards.Grant(r.Context(), a, perkID, award.GrantInput{UserID: in.UserID, Points: in.Points, LocationID: in.LocationID}, award.GrantOptions{Source: award.SourceAPI})
		if err != nil {
			return nil, err
		}
		return aw.Legacy(), nil
	}
	nonce, err := requestNonce(r, a, perkID)
	if err != nil {
		return nil, err
	}
	op, err := s.Start(r.Context(), a, perkID, in, nonce)
	if err != nil {
		return nil, err
	}
	return web.Response{Status: http.StatusAccepted, Value: op}, nil
}

// Start accepts a grant of perkID to the segment of in (see
// award.AcceptSegmentGrant) and starts its operation under nonce, or
// returns the operation an earlier request with the nonce started (the
// same request: perk, segment, points and location; another is 409
// CONFLICT).
func (s *Service) Start(ctx context.Context, caller actor.Actor, perkID string, in award.LegacyGrantInput, nonce string) (operation.Operation, error) {
	req, err := s.Awards.AcceptSegmentGrant(ctx, caller, perkID, in)
	if err != nil {
		return operation.Operation{}, err
	}
	accepted, err := req.Encode()
	if err != nil {
		return operation.Operation{}, err
	}
	identity := map[string]any{"perkId": perkID, "segmentId": in.SegmentID, "locationId": in.LocationID}
	if in.Points != nil {
		identity["points"] = *in.Points
	}
	md := map[string]any{"perkId": perkID, "segmentId": in.SegmentID, "points": req.Points, "accepted": accepted}
	if in.LocationID != "" {
		md["locationId"] = in.LocationID
	}
	op, err := s.Jobs.Start(ctx, job.StartRequest{
		TenantID: caller.TenantID, Namespace: Namespace, Name: Name, Nonce: nonce, Metadata: md, Identity: identity,
	})
	if err != nil {
		return operation.Operation{}, fmt.Errorf("start segment grant: %w", err)
	}
	return op, nil
}

// requestNonce is the nonce of a grant to a segment: the
// x-platform-req-nonce header when sent (a malformed one is 422), else
// one derived from the Idempotency-Key, the caller and the perk, else a
// new one.
func requestNonce(r *http.Request, caller actor.Actor, perkID string) (string, error) {
	if v := r.Header.Get(web.HeaderNonce); v != "" {
		return operation.ParseNonce(v)
	}
	var b [16]byte
	if key, ok := web.WholeHeader(r, "Idempotency-Key"); ok && key != "" {
		who := "user:" + caller.UserID
		if caller.Service {
			who = "service"
		}
		sum := sha256.Sum256([]byte("segment-grant\x00" + caller.TenantID + "\x00" + who + "\x00" + perkID + "\x00" + key))
		copy(b[:], sum[:16])
	} else {
		_, _ = rand.Read(b[:])
	}
	b[6] = b[6]&0x0f | 0x40 // the form of a version 4 GUID
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// kind runs grants to segments.
type kind struct{ s *Service }

// Run grants the accepted request to the segment's members in id order,
// page members per checkpoint: the checkpoint's cursor is the last member
// it covers and the result counts the members up to it. A resumed run
// starts after the cursor; members granted past it by an earlier run are
// found by their markers and counted granted, so the counts are exactly
// what was applied.
func (k kind) Run(ctx context.Context, r *job.Run) error {
	op := r.Operation()
	text, _ := op.Metadata["accepted"].(string)
	req, err := award.DecodeSegmentGrantRequest(text)
	if err != nil {
		return &job.FileError{Code: apierr.Internal, Message: "the accepted request cannot be read"}
	}
	members, err := k.s.Awards.SegmentMembers(ctx, r.TenantID(), req)
	if err != nil {
		return err
	}
	cp, res := r.Checkpoint(), r.Result()
	todo := members
	if cp.Cursor != "" {
		todo = nil
		for _, m := range members {
			if m > cp.Cursor {
				todo = append(todo, m)
			}
		}
	}
	var granted int64
	if res.Granted != nil {
		granted = *res.Granted
	}
	for {
		n := min(page, len(todo))
		outs, err := k.grant(ctx, r.TenantID(), op.ID, req, todo[:n])
		if err != nil {
			return err
		}
		for _, o := range outs {
			switch o.Outcome {
			case award.MemberGranted:
				granted++
			case award.MemberSkipped:
				res.Skipped++
			default:
				res.Errors++
			}
		}
		res.Total += int64(n)
		res.Imported = granted
		res.Granted = &granted
		cp.Rows, cp.Offset = res.Total, res.Total
		if n > 0 {
			cp.Cursor = todo[n-1]
		}
		todo = todo[n:]
		last := len(todo) == 0
		cp.InputDone = last
		res.Message = fmt.Sprintf("granting: %d members done, %d granted", res.Total, granted)
		if last {
			res.Message = fmt.Sprintf("done: %d members, %d granted, %d skipped, %d errors", res.Total, granted, res.Skipped, res.Errors)
		}
		var done bool
		if cp, res, done, err = r.Step(ctx, nil, cp, res, last); err != nil || done {
			return err
		}
	}
}

// grant grants req to members, width at a time, and returns their
// outcomes in order; the first fault of the platform is returned.
func (k kind) grant(ctx context.Context, tenantID, opID string, req award.SegmentGrantRequest, members []string) ([]award.MemberResult, error) {
	out := make([]award.MemberResult, len(members))
	errs := make([]error, len(members))
	sem := make(chan struct{}, width)
	var wg sync.WaitGroup
	for i, uid := range members {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = k.s.Awards.GrantSegmentMember(ctx, tenantID, opID, req, uid)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("segment grant %s: %w", opID, err)
		}
	}
	return out, nil
}
