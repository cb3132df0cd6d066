package user

import (
	"context"

	"github.com/loyalty-platform/platform/shared/domain/profile"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Profile is what other domains need to know about a user (the profile
// package's read side of users).
type Profile = profile.Profile

// Profile returns the profile of a user; a missing, expired or deleted user
// is ErrNotFound.
func (s *Service) Profile(ctx context.Context, tenantID, userID string) (Profile, error) {
	r, err := s.st().GetUser(ctx, tenantID, userID, s.clock.Now())
	if err != nil {
		return Profile{}, err
	}
	if r.Deleted {
		return Profile{}, ErrNotFound
	}
	return Profile{
		ID: r.ID, TenantID: r.TenantID, FullName: r.FullName, State: r.State, IsGuest: r.IsGuest,
		Deleted: r.Deleted, HasProfilePhoto: r.HasProfilePhoto, PrimaryPlatform: PlatformOrUnknown(r.PrimaryPlatform),
		FavouriteLocations: nonNil(r.FavouriteLocations),
	}, nil
}

// Profiles returns the profiles of the live (not deleted, not expired)
// users among ids, by id; unknown ids are left out.
func (s *Service) Profiles(ctx context.Context, tenantID string, ids []string) (map[string]Profile, error) {
	recs, err := s.st().BatchGetUsers(ctx, tenantID, ids, s.clock.Now())
	if err != nil {
		return nil, err
	}
	out := make(map[string]Profile, len(recs))
	for _, r := range recs {
		if r.Deleted {
			continue
		}
		out[r.ID] = Profile{
			ID: r.ID, TenantID: r.TenantID, FullName: r.FullName, State: r.State, IsGuest: r.IsGuest,
			HasProfilePhoto: r.HasProfilePhoto, PrimaryPlatform: PlatformOrUnknown(r.PrimaryPlatform),
			FavouriteLocations: nonNil(r.FavouriteLocations),
		}
	}
	return out, nil
}

// Includes are the parts of a user other domains own, which the include
// options read (include=points, checkin, segmentIds, segments, awards); the users
// function's wiring supplies them. Without them those parts are empty.
type Includes interface {
	// Points returns the points the user holds across their awards
	// (include=points adds the starting balance).
	Points(ctx context.Context, tenantID, userID string) (int, error)
	// CurrentCheckin returns the user's current check-in, or nil.
	CurrentCheckin(ctx context.Context, tenantID, userID string) (any, error)
	// SegmentIDs returns the segments the user is a member of
	// (include=segmentIds).
	SegmentIDs(ctx context.Context, tenantID, userID string) ([]string, error)
	// Segments returns the tenant's segments, each marked whether the
	// user is a member (include=segments).
	Segments(ctx context.Context, tenantID, userID string) ([]SegmentRef, error)
	// Awards returns a summary of each award the user holds, in the order
	// the award list shows them (include=awards).
	Awards(ctx context.Context, tenantID, userID string) ([]AwardSummary, error)
}

// LiveCheck is a ConditionCheck, for another domain's transaction, that a
// user exists and is not deleted: what it writes about the user commits
// only while the user is live.
func (s *Service) LiveCheck(tenantID, userID string) types.TransactWriteItem {
	return s.st().UserIsLive(tenantID, userID)
}
