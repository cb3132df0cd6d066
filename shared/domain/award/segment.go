package award

import (
	"context"
	"fmt"
	"maps"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// SegmentEvent is a user joining or leaving a segment, as the audiences
// domain reports it inside the membership's transaction.
type SegmentEvent struct {
	TenantID    string
	TenantTitle string
	SegmentID   string
	Joined      bool
	// Reason of a leave (REMOVED, EXPIRED).
	Reason string
	User   Person
	// When is the `when` of the membership's own action.
	When action.When
	// Meta is added to the actions' metadata (a rule's ids and depth).
	Meta map[string]any
}

// OnSegment adds, to the transaction of a membership change, one action
// per enabled CLUB or LEVEL perk tied to the segment: AWARD_GRANTED
// (source SEGMENT) when the user joins, AWARD_REVOKED when they leave.
// Holding itself needs no write: the membership decides it.
func (s *Service) OnSegment(ctx context.Context, tx *ddb.Tx, e SegmentEvent) error {
	perks, err := s.Perks.All(ctx, e.TenantID)
	if err != nil {
		return fmt.Errorf("perks of segment %s: %w", e.SegmentID, err)
	}
	for _, p := range perks {
		if !p.Enabled || !p.HeldThroughSegment() || p.SegmentID != e.SegmentID {
			continue
		}
		typ := ActionRevoked
		meta := map[string]any{"awardId": ID(e.User.ID, p.ID), "perkId": p.ID, "segmentId": e.SegmentID}
		maps.Copy(meta, e.Meta)
		if e.Joined {
			typ = ActionGranted
			meta["source"], meta["points"], meta["pointsGranted"] = SourceSegment, 0, 0
		} else {
			meta["reason"] = e.Reason
		}
		a := action.Action{
			ID: action.NewID(), Type: typ, TenantID: e.TenantID, When: e.When, Metadata: meta,
			Context: action.Context{
				Tenant: action.TenantRef{ID: e.TenantID, Title: e.TenantTitle},
				User:   &action.UserRef{ID: e.User.ID, Name: e.User.Name, PrimaryPlatform: e.User.PrimaryPlatform},
			},
		}
		if _, err := s.Actions.Record(tx, a); err != nil {
			return err
		}
	}
	return nil
}
