package award

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// SegmentGrantRequest is a legacy grant to a segment (POST
// /perks/{perkId}/grant with segmentId) as it was accepted: the perk and
// the location as they were then, and the points resolved. The job that
// grants the members (shared/domain/segmentgrant) keeps it in its operation, so
// that every run of the job grants the same thing whatever happened to
// the perk meanwhile (a perk disabled after the request was accepted does
// not stop the grant half way).
type SegmentGrantRequest struct {
	SegmentID   string    `json:"segmentId"`
	Points      int       `json:"points"`
	Perk        perk.Perk `json:"perk"`
	Place       *Place    `json:"place,omitempty"`
	TenantTitle string    `json:"tenantTitle,omitempty"`
}

// Encode returns r as JSON text, for the operation's metadata.
func (r SegmentGrantRequest) Encode() (string, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return "", fmt.Errorf("segment grant request: %w", err)
	}
	return string(b), nil
}

// DecodeSegmentGrantRequest reads a request Encode wrote.
func DecodeSegmentGrantRequest(s string) (SegmentGrantRequest, error) {
	var r SegmentGrantRequest
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return SegmentGrantRequest{}, fmt.Errorf("segment grant request: %w", err)
	}
	return r, nil
}

// AcceptSegmentGrant checks a legacy grant to a segment and returns it as
// accepted: the perk must exist and be enabled, the location (when named)
// exist, and the segment exist with at most MaxSegmentGrant live members
// (else 422 naming segmentId). Nothing is written.
func (s *Service) AcceptSegmentGrant(ctx context.Context, caller actor.Actor, perkID string, in LegacyGrantInput) (SegmentGrantRequest, error) {
	if !web.ValidID(in.SegmentID) || s.Memberships == nil {
		return SegmentGrantRequest{}, apierr.Invalid("segmentId", "no such segment")
	}
	if !web.ValidID(perkID) {
		return SegmentGrantRequest{}, ErrPerkNotFound
	}
	if in.LocationID != "" && !web.ValidID(in.LocationID) {
		return SegmentGrantRequest{}, ErrUnknownLocation
	}
	if in.Points != nil && (*in.Points < 0 || *in.Points > perk.MaxPoints) {
		return SegmentGrantRequest{}, apierr.Invalid("points", "must be an integer from 0 to %d", perk.MaxPoints)
	}
	req := SegmentGrantRequest{SegmentID: in.SegmentID, TenantTitle: caller.TenantTitle}
	var err error
	if req.Perk, err = s.Perks.Find(ctx, caller.TenantID, perkID); err != nil {
		if errors.Is(err, perk.ErrNotFound) {
			return SegmentGrantRequest{}, ErrPerkNotFound
		}
		return SegmentGrantRequest{}, fmt.Errorf("segment grant: %w", err)
	}
	if !req.Perk.Enabled {
		return SegmentGrantRequest{}, ErrPerkDisabled
	}
	if in.LocationID != "" {
		p, err := s.Places.Place(ctx, caller.TenantID, in.LocationID)
		if apierr.CodeOf(err) == apierr.NotFound {
			return SegmentGrantRequest{}, ErrUnknownLocation
		}
		if err != nil {
			return SegmentGrantRequest{}, fmt.Errorf("segment grant: %w", err)
		}
		req.Place = &p
	}
	if req.TenantTitle == "" && s.Tenants != nil {
		if req.TenantTitle, err = s.Tenants.Title(ctx, caller.TenantID); err != nil {
			return SegmentGrantRequest{}, fmt.Errorf("segment grant: %w", err)
		}
	}
	// The segment exists (another tenant's is unknown here) and is not
	// too large for one grant.
	if _, err := s.Memberships.Members(ctx, caller.TenantID, in.SegmentID, MaxSegmentGrant); err != nil {
		return SegmentGrantRequest{}, err
	}
	req.Points = req.Perk.Points.InitialOr()
	if in.Points != nil {
		req.Points = *in.Points
	}
	return req, nil
}

// SegmentMembers returns the live members of the request's segment, at
// most MaxSegmentGrant, in id order (a run of the job resumes after the
// last member its checkpoint names). A segment deleted since the request
// was accepted has no members.
func (s *Service) SegmentMembers(ctx context.Context, tenantID string, req SegmentGrantRequest) ([]string, error) {
	members, err := s.Memberships.Members(ctx, tenantID, req.SegmentID, MaxSegmentGrant)
	switch {
	case apierr.CodeOf(err) == apierr.ValidationFailed:
		// Deleted meanwhile (or grown past the limit): nobody to grant.
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("members of segment %s: %w", req.SegmentID, err)
	}
	slices.Sort(members)
	return members, nil
}

// MemberOutcome is what a segment grant did for one member.
type MemberOutcome int

// Outcomes of a member of a segment grant.
const (
	// MemberGranted: the member holds the grant (by this run, or by an
	// earlier run of the same operation).
	MemberGranted MemberOutcome = iota
	// MemberSkipped: the user is gone (deleted or unknown): nobody to
	// grant.
	MemberSkipped
	// MemberFailed: the grant was refused for this member (for example
	// AWARD_NOT_HELD: not a member of a CLUB perk's segment any more).
	MemberFailed
)

// MemberResult is a member's outcome, with the award after the grant
// (granted) or why not (skipped, failed).
type MemberResult struct {
	UserID    string
	Outcome   MemberOutcome
	AwardID   string
	Available int
	Code      string
	Message   string
}

// GrantSegmentMember grants req to member uid, exactly once per
// operation: the grant's transaction puts a marker of (operation, perk,
// segment, member), conditional on its absence, so that a second run of
// the operation (a duplicate delivery, a crash and resume) finds the
// marker and reports the member granted without granting again. An error
// is a fault of the platform (the run stops and is resumed); a member
// that cannot be granted is a MemberResult with its code.
func (s *Service) GrantSegmentMember(ctx context.Context, tenantID, operationID string, req SegmentGrantRequest, uid string) (MemberResult, error) {
	out := MemberResult{UserID: uid, AwardID: ID(uid, req.Perk.ID)}
	base := Subject{TenantID: tenantID, TenantTitle: req.TenantTitle, Perk: req.Perk, Place: req.Place}
	key := "operation:" + operationID
	a, err := s.grantMember(ctx, base, uid, req.Points, req.SegmentID, key)
	if err == nil {
		out.Available = a.Available
		return out, nil
	}
	e, ok := apierr.As(err)
	if !ok || e.Code.Status() >= 500 {
		return MemberResult{}, err
	}
	out.Code, out.Message = string(e.Code), e.Message
	out.Outcome = MemberFailed
	if e.Code == apierr.NotFound {
		// The user is gone; an earlier run may have granted them before.
		done, err := s.grantedBefore(ctx, base, uid, req.SegmentID, key)
		if err != nil {
			return MemberResult{}, err
		}
		if done {
			return MemberResult{UserID: uid, AwardID: out.AwardID}, nil
		}
		out.Outcome = MemberSkipped
	}
	return out, nil
}

// errGrantedBefore is a member an earlier attempt with the same key
// granted.
var errGrantedBefore = errors.New("granted by an earlier attempt")

// granted is the award of a member after a segment grant.
type granted struct{ Available int }

// grantMember grants points of base.Perk to member uid of a segment
// grant in one transaction with the member's marker under key, and
// returns the award's points after it (or after the earlier attempt that
// granted it).
func (s *Service) grantMember(ctx context.Context, base Subject, uid string, points int, segmentID, key string) (granted, error) {
	person, err := s.Users.Person(ctx, base.TenantID, uid)
	if err != nil {
		return granted{}, err
	}
	sub := base
	sub.Person = person
	var w GrantWrite
	markerAt := -1
	err = s.writeTx(ctx, func(now time.Time) (*ddb.Tx, error) {
		tx := &ddb.Tx{}
		var err error
		if w, err = s.AddGrant(ctx, tx, sub, points, GrantOptions{Source: SourceAPI, Meta: map[string]any{"segmentId": segmentID}}, now); err != nil {
			return nil, err
		}
		markerAt = tx.Add("award", s.st().segmentMarker(base.TenantID, key, base.Perk.ID, segmentID, uid, now))
		return tx, nil
	}, func(err error) (bool, error) {
		if markerAt >= 0 && ddb.Failed(err, markerAt) {
			return false, errGrantedBefore
		}
		return w.Failure(err)
	})
	if errors.Is(err, errGrantedBefore) {
		a, err := s.current(ctx, base.TenantID, base.Perk, uid)
		if err != nil {
			return granted{}, err
		}
		return granted{Available: a.Points.Available}, nil
	}
	if err != nil {
		return granted{}, fmt.Errorf("grant %s to %s: %w", base.Perk.ID, uid, err)
	}
	metrics.Count(ctx, base.TenantID, metrics.AwardsGranted, 1)
	s.react(ctx, w.Action)
	return granted{Available: w.Available}, nil
}

// grantedBefore reports whether the marker of member uid under key exists
// (an earlier attempt granted the member).
func (s *Service) grantedBefore(ctx context.Context, base Subject, uid, segmentID, key string) (bool, error) {
	m := s.st().segmentMarker(base.TenantID, key, base.Perk.ID, segmentID, uid, time.Time{})
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: m.Put.TableName, ConsistentRead: aws.Bool(true),
		Key: ddb.Item{"pk": m.Put.Item["pk"], "sk": m.Put.Item["sk"]},
	})
	if err != nil {
		return false, fmt.Errorf("read segment grant marker of %s: %w", uid, err)
	}
	return len(out.Item) > 0, nil
}
