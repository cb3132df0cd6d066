package award

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
)

// virtualRecord is the award a user holds without it ever being stored (a
// global perk's, or a CLUB or LEVEL perk's while a member): the perk's
// initial points, dated by the perk.
func virtualRecord(tenantID, userID string, p perk.Perk) record {
	return record{
		ID: ID(userID, p.ID), TenantID: tenantID, UserID: userID, PerkID: p.ID,
		Available: p.Points.InitialOr(), Created: p.UpdatedAt, UpdatedAt: p.UpdatedAt,
	}
}

// view combines a stored (or virtual) award with its perk and, when there
// is one, the perk's enrichment.
func view(p perk.Perk, rec record, ov *Overlay) Award {
	a := Award{
		ID: ID(rec.UserID, p.ID), TenantID: rec.TenantID, UserID: rec.UserID, LoyaltyProvider: perk.ProviderInternal,
		PerkID: p.ID, Definition: p.Definition, Enabled: p.Enabled, UpdatedAt: rec.UpdatedAt,
		Points: Points{
			Available: rec.Available, Points: p.Points, TotalGranted: rec.Granted, TotalRedeemed: rec.Redeemed,
			TotalRefunded: rec.Refunded, TotalReversed: rec.Reversed, TotalAdjusted: rec.Adjusted, TotalExpired: rec.Expired,
			Redemptions: rec.Redemptions, Expiring: rec.expiring(3),
		},
	}
	if a.LocationIDs == nil {
		a.LocationIDs = []string{}
	}
	if ov == nil {
		return a
	}
	a.EnrichmentID = ov.ID
	if ov.Title != nil {
		a.Title = *ov.Title
	}
	if ov.Token != nil {
		a.Token = ov.Token
	}
	if ov.Template != nil {
		a.Template = *ov.Template
	}
	if ov.BasketQualification != nil {
		a.BasketQualification = ov.BasketQualification
	}
	if ov.DateTimeRestriction != nil {
		a.DateTimeRestriction = ov.DateTimeRestriction
	}
	if ov.Points != nil {
		a.Points.Points = *ov.Points
	}
	if ov.Discount != nil {
		a.Discount = ov.Discount
	}
	if ov.Visualisation != nil {
		a.Visualisation = ov.Visualisation
	}
	a.VisualisationOnCurrentStamp = ov.VisualisationOnCurrentStamp
	a.ExcludeDiscountIDs = ov.ExcludeDiscountIDs
	return a
}

// overlays returns the tenant's INTERNAL enrichments by perk id.
func (s *Service) overlays(ctx context.Context, tenantID string) (map[string]Overlay, error) {
	if s.Enrichments == nil {
		return nil, nil
	}
	ov, err := s.Enrichments.Internal(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("enrichments: %w", err)
	}
	return ov, nil
}

func overlayOf(ov map[string]Overlay, perkID string) *Overlay {
	if o, ok := ov[perkID]; ok {
		return &o
	}
	return nil
}

// present returns the view of a stored award of perk p.
func (s *Service) present(ctx context.Context, tenantID string, p perk.Perk, rec record, withOverlay bool) (Award, error) {
	var ov map[string]Overlay
	if withOverlay {
		var err error
		if ov, err = s.overlays(ctx, tenantID); err != nil {
			return Award{}, err
		}
	}
	return view(p, rec.at(s.Clock.Now()), overlayOf(ov, p.ID)), nil
}

// current reads a user's award of perk p as it is now (stored, or virtual
// when never stored) and presents it.
func (s *Service) current(ctx context.Context, tenantID string, p perk.Perk, userID string) (Award, error) {
	rec, found, err := s.st().get(ctx, tenantID, userID, p.ID)
	if err != nil {
		return Award{}, err
	}
	if !found {
		rec = virtualRecord(tenantID, userID, p)
	}
	return s.present(ctx, tenantID, p, rec, true)
}

// Filter narrows the award lists.
type Filter struct {
	// IncludeUnvisualised keeps awards whose perk has no visualisation
	// (the lists keep them unless includeUnvisualisedAwards=false).
	IncludeUnvisualised bool
	// IncludeDisabled keeps awards of disabled perks.
	IncludeDisabled bool
	// LocationID keeps awards whose perk is valid there (no locationIds,
	// or locationIds holding it).
	LocationID string
	// Updated are conditions on updatedAt.
	Updated []timefilter.Cond
	// asOf, when set, presents the awards as they stood then
	// (HoldingsAsOf).
	asOf *time.Time
}

// keeps reports whether a presented award passes the filter (updatedAt
// conditions included).
func (f Filter) keeps(a Award) bool {
	if !a.Enabled && !f.IncludeDisabled {
		return false
	}
	if a.Visualisation == nil && !f.IncludeUnvisualised {
		return false
	}
	if f.LocationID != "" && len(a.LocationIDs) > 0 && !slices.Contains(a.LocationIDs, f.LocationID) {
		return false
	}
	return timefilter.HoldAll(f.Updated, a.UpdatedAt)
}

// Holdings returns every award a user holds, presented and filtered, in
// the order apps show them: highest perk priority first, then by perk
// creation. Of the tier perks the user holds (after the disabled filter),
// only the one of highest priority is kept.
func (s *Service) Holdings(ctx context.Context, tenantID, userID string, f Filter) ([]Award, error) {
	return s.holdings(ctx, tenantID, userID, f, false)
}

// HoldingsAsOf is Holdings as the awards stood at t, from their ledgers
// (see asOf): one Query of each stored award's entries. The perks, the
// memberships and the enrichments are today's: a CLUB or LEVEL award is
// listed when the user is a member now.
func (s *Service) HoldingsAsOf(ctx context.Context, tenantID, userID string, f Filter, t time.Time) ([]Award, error) {
	f.asOf = &t
	return s.holdings(ctx, tenantID, userID, f, false)
}

// holdings is Holdings; allTiers keeps every tier award.
func (s *Service) holdings(ctx context.Context, tenantID, userID string, f Filter, allTiers bool) ([]Award, error) {
	var (
		perks    []perk.Perk
		recs     []record
		segments []string
		ov       map[string]Overlay
	)
	err := parallel(
		func() (err error) { perks, err = s.Perks.All(ctx, tenantID); return err },
		func() (err error) { recs, err = s.st().ofUser(ctx, tenantID, userID); return err },
		func() (err error) {
			if s.Memberships != nil {
				segments, err = s.Memberships.SegmentsOf(ctx, tenantID, userID)
			}
			return err
		},
		func() (err error) { ov, err = s.overlays(ctx, tenantID); return err },
	)
	if err != nil {
		return nil, fmt.Errorf("awards of %s: %w", userID, err)
	}
	now := s.Clock.Now()
	stored := make(map[string]record, len(recs))
	for _, r := range recs {
		stored[r.PerkID] = r
	}
	member := map[string]bool{}
	for _, sid := range segments {
		member[sid] = true
	}
	var held []Award
	for _, p := range perks {
		rec, ok := stored[p.ID]
		switch {
		case p.HeldThroughSegment():
			if !member[p.SegmentID] {
				continue
			}
		case p.IsGlobal:
		case !ok:
			continue
		}
		if !ok {
			rec = virtualRecord(tenantID, userID, p)
		}
		if f.asOf != nil {
			then, held, err := s.asOf(ctx, tenantID, rec, ok, *f.asOf)
			if err != nil {
				return nil, err
			}
			if !held {
				continue
			}
			rec = then
		} else {
			rec = rec.at(now)
		}
		a := view(p, rec, overlayOf(ov, p.ID))
		if !a.Enabled && !f.IncludeDisabled {
			continue
		}
		held = append(held, a)
	}
	if !allTiers {
		held = topTier(held)
	}
	out := held[:0]
	for _, a := range held {
		if f.keeps(a) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b Award) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.PerkID, b.PerkID))
	})
	return out, nil
}

// topTier keeps, of the tier awards, only the one whose perk has the
// highest priority (ties: the newest perk).
func topTier(awards []Award) []Award {
	best := -1
	for i, a := range awards {
		if !a.IsTier {
			continue
		}
		if best < 0 || a.Priority > awards[best].Priority || a.Priority == awards[best].Priority && a.PerkID > awards[best].PerkID {
			best = i
		}
	}
	out := awards[:0:0]
	for i, a := range awards {
		if a.IsTier && i != best {
			continue
		}
		out = append(out, a)
	}
	return out
}

// Total returns the points a user holds across the awards they hold (of
// enabled perks, every tier counted), for GET /users/{userId}?include=points.
func (s *Service) Total(ctx context.Context, tenantID, userID string) (int, error) {
	awards, err := s.holdings(ctx, tenantID, userID, Filter{IncludeUnvisualised: true}, true)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, a := range awards {
		total += a.Points.Available
	}
	return total, nil
}
