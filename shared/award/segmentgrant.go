package award

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/ddb"
	"github.com/loyalty-platform/platform/shared/metrics"
	"github.com/loyalty-platform/platform/shared/perk"
	"github.com/loyalty-platform/platform/shared/web"
)

// GrantSegment grants a perk to every current member of a segment (the
// legacy grant with segmentId). Members that cannot be granted (deleted
// since, or not holding a CLUB perk) are listed as skipped.
//
// The perk, the location and the tenant are read once, before the first
// member: the grant is the perk's as it was when the request started, so
// a change of the perk meanwhile (disabled) does not stop it half way
// with an error after some members were granted. With an Idempotency-Key
// (key, "" for none) each member's grant writes a marker of (key, perk,
// segment, member) in its own transaction: a retry with the key after a
// failure part way (a 5xx frees the key) grants only the members the
// failed attempt did not reach, and lists the others with their awards.
func (s *Service) GrantSegment(ctx context.Context, caller web.Caller, perkID string, in LegacyGrantInput, key string) (SegmentGrant, error) {
	if !web.ValidID(in.SegmentID) || s.Memberships == nil {
		return SegmentGrant{}, apierr.Invalid("segmentId", "no such segment")
	}
	if !web.ValidID(perkID) {
		return SegmentGrant{}, ErrPerkNotFound
	}
	if in.LocationID != "" && !web.ValidID(in.LocationID) {
		return SegmentGrant{}, ErrUnknownLocation
	}
	if in.Points != nil && (*in.Points < 0 || *in.Points > perk.MaxPoints) {
		return SegmentGrant{}, apierr.Invalid("points", "must be an integer from 0 to %d", perk.MaxPoints)
	}
	base := Subject{TenantID: caller.TenantID, TenantTitle: caller.TenantTitle}
	var err error
	if base.Perk, err = s.Perks.Find(ctx, caller.TenantID, perkID); err != nil {
		if errors.Is(err, perk.ErrNotFound) {
			return SegmentGrant{}, ErrPerkNotFound
		}
		return SegmentGrant{}, err
	}
	if !base.Perk.Enabled {
		return SegmentGrant{}, ErrPerkDisabled
	}
	if in.LocationID != "" {
		p, err := s.Places.Place(ctx, caller.TenantID, in.LocationID)
		if apierr.CodeOf(err) == apierr.NotFound {
			return SegmentGrant{}, ErrUnknownLocation
		}
		if err != nil {
			return SegmentGrant{}, err
		}
		base.Place = &p
	}
	if base.TenantTitle == "" && s.Tenants != nil {
		if base.TenantTitle, err = s.Tenants.Title(ctx, caller.TenantID); err != nil {
			return SegmentGrant{}, err
		}
	}
	members, err := s.Memberships.Members(ctx, caller.TenantID, in.SegmentID, MaxSegmentGrant)
	if err != nil {
		return SegmentGrant{}, err
	}
	points := base.Perk.Points.InitialOr()
	if in.Points != nil {
		points = *in.Points
	}
	out := SegmentGrant{SegmentID: in.SegmentID, Awards: []LegacyAward{}, Skipped: []Skipped{}}
	if key != "" {
		// The members' markers make the grant safe to run again under
		// the key: its transactions do not mark the key committed, so a
		// failure part way frees it and a retry finishes the grant.
		ctx = ddb.WithoutClaim(ctx)
	}
	for _, uid := range members {
		a, err := s.grantMember(ctx, base, uid, points, in.SegmentID, key)
		if err == nil {
			out.Awards = append(out.Awards, a.Legacy())
			continue
		}
		e, ok := apierr.As(err)
		if !ok || e.Code.Status() >= 500 {
			return SegmentGrant{}, err
		}
		out.Skipped = append(out.Skipped, Skipped{UserID: uid, Code: string(e.Code), Message: e.Message})
	}
	return out, nil
}

// errGrantedBefore is a member an earlier attempt with the same
// Idempotency-Key granted.
var errGrantedBefore = errors.New("granted by an earlier attempt")

// grantMember grants points of base.Perk to member uid of a segment
// grant (see GrantSegment) and returns the award after it, or after the
// earlier attempt that granted it.
func (s *Service) grantMember(ctx context.Context, base Subject, uid string, points int, segmentID, key string) (Award, error) {
	person, err := s.Users.Person(ctx, base.TenantID, uid)
	if err != nil {
		return Award{}, err
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
		markerAt = -1
		if key != "" {
			markerAt = tx.Add("award", s.st().segmentMarker(base.TenantID, key, base.Perk.ID, segmentID, uid, now))
		}
		return tx, nil
	}, func(err error) (bool, error) {
		if markerAt >= 0 && ddb.Failed(err, markerAt) {
			return false, errGrantedBefore
		}
		return w.Failure(err)
	})
	if errors.Is(err, errGrantedBefore) {
		return s.current(ctx, base.TenantID, base.Perk, uid)
	}
	if err != nil {
		return Award{}, fmt.Errorf("grant %s to %s: %w", base.Perk.ID, uid, err)
	}
	metrics.Count(ctx, base.TenantID, metrics.AwardsGranted, 1)
	s.react(ctx, w.Action)
	return s.present(ctx, base.TenantID, base.Perk, w.rec, true)
}
