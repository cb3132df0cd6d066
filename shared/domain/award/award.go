// Package award is users' awards (spec: Award, Awards, "Award operations
// whose path is not fully given"): one award per (user, perk), holding the
// user's points for the perk. It grants, redeems and refunds points (each
// one conditional write, with its action in the same transaction), sets
// them (PUT /pointawards), and lists awards in the current shape (the
// award combined with its perk's definition) and in the older perk-shaped
// schema.
//
// Holding. A user holds an award of a perk when the award was granted
// (stored), when the perk isGlobal (every user, no write per user: the
// award is virtual, showing points.initial, until its first change
// materialises it), or, for a CLUB or LEVEL perk, exactly while the user
// is a member of the perk's segment (the membership decides; the award is
// virtual until its first change, and its points stay stored when the
// user leaves and show again when they rejoin). Of the tier perks
// (isTier) a user holds, only the one of highest priority is presented.
//
// Award ids are derived, <userId>-<perkId>, so one (user, perk) can only
// ever be one award, and a virtual award has the id it will keep.
package award

import (
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Sentinel errors of the award domain.
var (
	ErrNotFound          = apierr.New(apierr.NotFound, "award not found")
	ErrPerkNotFound      = apierr.New(apierr.NotFound, "perk not found")
	ErrUserNotFound      = apierr.New(apierr.NotFound, "user not found")
	ErrPerkDisabled      = apierr.New(apierr.PerkDisabled, "the perk is disabled")
	ErrNotHeld           = apierr.New(apierr.AwardNotHeld, "the user does not hold this perk: a CLUB or LEVEL perk is held by the members of its segment")
	ErrInsufficient      = apierr.New(apierr.InsufficientPoints, "the award does not hold enough points")
	ErrOutsideWindow     = apierr.New(apierr.OutsideWindow, "the perk's dateTimeRestriction does not allow a redemption now")
	ErrLocationRequired  = apierr.New(apierr.LocationNotAllowed, "locationId: the perk is redeemable only at its locationIds; name one")
	ErrLocationNotValid  = apierr.New(apierr.LocationNotAllowed, "locationId: the perk is not redeemable at this location")
	ErrRedemptionLimit   = apierr.New(apierr.RedemptionLimitReached, "the award reached its perk's maxTotalRedemptions")
	ErrRefundTooLarge    = apierr.New(apierr.RefundExceedsRedeemed, "value: more than the award's redeemed points not yet refunded")
	ErrConcurrent        = apierr.New(apierr.Conflict, "the award was changed by many requests at once; retry")
	ErrUnknownLocation   = apierr.Invalid("locationId", "no such location")
	errAwardChangedUnder = apierr.New(apierr.Conflict, "award changed") // internal: retry
)

// Points is an award's points as returned: what it holds and its totals,
// beside the perk's point rules.
type Points struct {
	Available int `json:"available"`
	perk.Points
	// TotalGranted, TotalRedeemed, TotalRefunded and TotalReversed are
	// the sums of the award's grants (after the perk's max), redemptions,
	// refunds and reversals (points a refunded order's earn took back);
	// TotalAdjusted the net of the admin's settings of available;
	// Redemptions counts the redemptions (in units). Available is always
	// (points.initial for a global, CLUB or LEVEL perk's award) +
	// totalGranted - totalRedeemed + totalRefunded - totalReversed +
	// totalAdjusted - totalExpired.
	TotalGranted  int `json:"totalGranted"`
	TotalRedeemed int `json:"totalRedeemed"`
	TotalRefunded int `json:"totalRefunded"`
	TotalReversed int `json:"totalReversed"`
	TotalAdjusted int `json:"totalAdjusted"`
	// TotalExpired is the points of the award's lots that expired.
	TotalExpired int `json:"totalExpired"`
	Redemptions  int `json:"redemptions"`
	// Expiring is the award's next expiries (at most 3): the points that
	// expire at each instant, soonest first (empty when none expire).
	Expiring []Expiring `json:"expiring"`
}

// Award is an award as the current API returns it (spec: Award): the
// user's award combined with its perk's definition (and, when the perk has
// an INTERNAL enrichment, the enrichment's presentation fields).
type Award struct {
	ID              string `json:"_id"`
	TenantID        string `json:"tenantId"`
	UserID          string `json:"userId"`
	LoyaltyProvider string `json:"loyaltyProvider"`
	PerkID          string `json:"perkId"`
	perk.Definition
	Points Points `json:"points"`
	// Enabled is the perk's state (awards of disabled perks are listed
	// only with includeDisabled).
	Enabled   bool   `json:"enabled"`
	UpdatedAt string `json:"updatedAt"`
	// EnrichmentID, VisualisationOnCurrentStamp and ExcludeDiscountIDs
	// come from the perk's enrichment, when it has one.
	EnrichmentID                string         `json:"enrichmentId,omitempty"`
	VisualisationOnCurrentStamp map[string]any `json:"visualisationOnCurrentStamp,omitempty"`
	ExcludeDiscountIDs          []string       `json:"excludeDiscountIds,omitempty"`
}

// LegacyAward is the older, perk-shaped schema of an award (GET /awards
// below x-api-version 8, GET /users/{userId}/awards, and the answers of
// the older grant, redeem and refund paths): the perk as GET /perks
// returns it, with `_id` the perk's id, plus the award's id, user and
// available points merged into `points`.
type LegacyAward struct {
	ID              string `json:"_id"`
	TenantID        string `json:"tenantId"`
	LoyaltyProvider string `json:"loyaltyProvider"`
	perk.Definition
	Points    Points `json:"points"`
	Enabled   bool   `json:"enabled"`
	AwardID   string `json:"awardId"`
	UserID    string `json:"userId"`
	UpdatedAt string `json:"updatedAt"`
}

// Legacy returns the older schema of a.
func (a Award) Legacy() LegacyAward {
	return LegacyAward{
		ID: a.PerkID, TenantID: a.TenantID, LoyaltyProvider: a.LoyaltyProvider, Definition: a.Definition,
		Points: a.Points, Enabled: a.Enabled, AwardID: a.ID, UserID: a.UserID, UpdatedAt: a.UpdatedAt,
	}
}

// ID returns the id of the award of userID for perkID.
func ID(userID, perkID string) string { return userID + "-" + perkID }

// ParseID splits an award id into its user and perk ids. It cuts at the
// last "-": a perk id never holds one, a user id may.
func ParseID(id string) (userID, perkID string, ok bool) {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return "", "", false
	}
	u, p := id[:i], id[i+1:]
	if !web.ValidID(u) || !web.ValidID(p) {
		return "", "", false
	}
	return u, p, true
}
