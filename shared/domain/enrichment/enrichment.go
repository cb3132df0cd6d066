// Package enrichment is award enrichments (spec: "Award enrichment"):
// display and qualification data attached to awards, for this platform's
// own perks (loyaltyProvider INTERNAL) or for an external loyalty
// provider's rewards. An enrichment of an INTERNAL perk shows on that
// perk's awards (see Service.Internal). Admins alone read and write
// enrichments.
package enrichment

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Loyalty providers (spec: enrichment `loyaltyProvider`). The spec allows
// six values, the internal provider and five external loyalty providers,
// without naming the external ones; these names are this project's
// decision.
const (
	// ProviderInternal is this platform's own perks: loyaltyRewardId is a
	// perk id of the tenant.
	ProviderInternal = perk.ProviderInternal
	// ProviderPunchh, ProviderPaytronix, ProviderComo and ProviderOlo are
	// external loyalty programmes; ProviderExternal is any other external
	// provider. For them loyaltyRewardId is the provider's own reward id.
	ProviderPunchh    = "PUNCHH"
	ProviderPaytronix = "PAYTRONIX"
	ProviderComo      = "COMO"
	ProviderOlo       = "OLO"
	ProviderExternal  = "EXTERNAL"
)

// Providers lists every accepted loyaltyProvider value.
var Providers = []string{ProviderInternal, ProviderPunchh, ProviderPaytronix, ProviderComo, ProviderOlo, ProviderExternal}

// Bounds of the enrichment fields (the visualisation bounds are those of
// the perk package).
const (
	// MaxText bounds title, token, loyaltyRewardId and every
	// excludeDiscountIds item, in characters.
	MaxText = 255
	// MaxExcludedDiscounts bounds excludeDiscountIds.
	MaxExcludedDiscounts = 200
	// MaxStampEntries bounds the entries of visualisationOnCurrentStamp.
	MaxStampEntries = perk.MaxMapEntries
	// MaxStampKey bounds the keys of visualisationOnCurrentStamp, in
	// characters.
	MaxStampKey = perk.MaxShort
)

// Sentinel errors of the enrichment domain.
var (
	ErrNotFound = apierr.New(apierr.NotFound, "award enrichment not found")
	// ErrUnknownPerk answers an INTERNAL enrichment whose loyaltyRewardId
	// names no perk of the tenant.
	ErrUnknownPerk = apierr.Invalid("loyaltyRewardId", "no such perk (an INTERNAL enrichment names a perk of this tenant)")
	// ErrConcurrent is a lost race with another change of the same
	// enrichment.
	ErrConcurrent = apierr.New(apierr.Conflict, "the award enrichment was changed by another request; retry")
)

// StampVisualisation is how apps draw the card at one stamp (an entry of
// visualisationOnCurrentStamp): the keys of perk.Visualisation except
// description, terms, priority, subtitleTwoText and wallet. No other
// properties are allowed.
type StampVisualisation struct {
	StampImageURL                            *string           `json:"stampImageUrl,omitempty"`
	StampBackgroundURL                       *string           `json:"stampBackgroundUrl,omitempty"`
	BackgroundImageURL                       *string           `json:"backgroundImageUrl,omitempty"`
	BackgroundImageURLNoAvailableRedemptions *string           `json:"backgroundImageUrlNoAvailableRedemptions,omitempty"`
	BackgroundImageURLAvailableRedemptions   *string           `json:"backgroundImageUrlAvailableRedemptions,omitempty"`
	TitleText                                *string           `json:"titleText,omitempty"`
	SubtitleText                             *string           `json:"subtitleText,omitempty"`
	AvailableCardCopy                        *string           `json:"availableCardCopy,omitempty"`
	NextCardProgressCopy                     *string           `json:"nextCardProgressCopy,omitempty"`
	TextColour                               *string           `json:"textColour,omitempty"`
	StampColour                              *string           `json:"stampColour,omitempty"`
	BackgroundOverlayColour                  *string           `json:"backgroundOverlayColour,omitempty"`
	StampImageURLPerStamp                    map[string]string `json:"stampImageUrlPerStamp,omitempty"`
	StampColourPerStamp                      map[string]string `json:"stampColourPerStamp,omitempty"`
	StampBackgroundURLPerStamp               map[string]string `json:"stampBackgroundUrlPerStamp,omitempty"`
	RandomiseStampPositions                  *bool             `json:"randomiseStampPositions,omitempty"`
	ShowExpiry                               *bool             `json:"showExpiry,omitempty"`
	StampsHidden                             *bool             `json:"stampsHidden,omitempty"`
	FullCardsIndicatorHidden                 *bool             `json:"fullCardsIndicatorHidden,omitempty"`
	RandomiseStampPositionsPerStamp          map[string]bool   `json:"randomiseStampPositionsPerStamp,omitempty"`
	BackgroundOverlayOpacity                 *float64          `json:"backgroundOverlayOpacity,omitempty"`
	TextAlignment                            *string           `json:"textAlignment,omitempty"`
	VerticalAlignment                        *string           `json:"verticalAlignment,omitempty"`
	ExpiryLabelAnchorStyle                   *string           `json:"expiryLabelAnchorStyle,omitempty"`
	ExpiryLabelDetailStyle                   *string           `json:"expiryLabelDetailStyle,omitempty"`
	ExpiryLabelTextStyle                     *string           `json:"expiryLabelTextStyle,omitempty"`
	AwardsScreenShape                        *string           `json:"awardsScreenShape,omitempty"`
}

// Visualisation is how apps draw an enriched award (spec: enrichment
// `visualisation`): the keys of perk.Visualisation except wallet. No other
// properties are allowed.
type Visualisation struct {
	StampVisualisation
	SubtitleTwoText *string  `json:"subtitleTwoText,omitempty"`
	Description     *string  `json:"description,omitempty"`
	Terms           *string  `json:"terms,omitempty"`
	Priority        *float64 `json:"priority,omitempty"`
}

// Perk returns the visualisation as a perk.Visualisation (without a
// wallet), whose Validate holds the bounds of every key.
func (v *Visualisation) Perk() *perk.Visualisation {
	if v == nil {
		return nil
	}
	s := v.StampVisualisation
	return &perk.Visualisation{
		StampImageURL:                            s.StampImageURL,
		StampBackgroundURL:                       s.StampBackgroundURL,
		BackgroundImageURL:                       s.BackgroundImageURL,
		BackgroundImageURLNoAvailableRedemptions: s.BackgroundImageURLNoAvailableRedemptions,
		BackgroundImageURLAvailableRedemptions:   s.BackgroundImageURLAvailableRedemptions,
		TitleText:                                s.TitleText,
		SubtitleText:                             s.SubtitleText,
		SubtitleTwoText:                          v.SubtitleTwoText,
		Description:                              v.Description,
		AvailableCardCopy:                        s.AvailableCardCopy,
		NextCardProgressCopy:                     s.NextCardProgressCopy,
		Terms:                                    v.Terms,
		TextColour:                               s.TextColour,
		StampColour:                              s.StampColour,
		BackgroundOverlayColour:                  s.BackgroundOverlayColour,
		StampImageURLPerStamp:                    s.StampImageURLPerStamp,
		StampColourPerStamp:                      s.StampColourPerStamp,
		StampBackgroundURLPerStamp:               s.StampBackgroundURLPerStamp,
		RandomiseStampPositions:                  s.RandomiseStampPositions,
		ShowExpiry:                               s.ShowExpiry,
		StampsHidden:                             s.StampsHidden,
		FullCardsIndicatorHidden:                 s.FullCardsIndicatorHidden,
		RandomiseStampPositionsPerStamp:          s.RandomiseStampPositionsPerStamp,
		BackgroundOverlayOpacity:                 s.BackgroundOverlayOpacity,
		Priority:                                 v.Priority,
		TextAlignment:                            s.TextAlignment,
		VerticalAlignment:                        s.VerticalAlignment,
		ExpiryLabelAnchorStyle:                   s.ExpiryLabelAnchorStyle,
		ExpiryLabelDetailStyle:                   s.ExpiryLabelDetailStyle,
		ExpiryLabelTextStyle:                     s.ExpiryLabelTextStyle,
		AwardsScreenShape:                        s.AwardsScreenShape,
	}
}

// Validate checks a visualisation with the bounds of perk.Visualisation;
// path names it.
func (v *Visualisation) Validate(path string) error {
	return v.Perk().Validate(path)
}

// Validate checks a stamp's visualisation with the bounds of
// perk.Visualisation; path names it.
func (s *StampVisualisation) Validate(path string) error {
	if s == nil {
		return nil
	}
	return (&Visualisation{StampVisualisation: *s}).Validate(path)
}

// Fields are the fields of an enrichment an admin may change (the API's
// update fields), each optional. On output an absent field is omitted.
type Fields struct {
	Title               *string                   `json:"title,omitempty"`
	Token               *string                   `json:"token,omitempty"`
	Template            *string                   `json:"template,omitempty"`
	BasketQualification *perk.BasketQualification `json:"basketQualification,omitempty"`
	DateTimeRestriction *perk.DateTimeRestriction `json:"dateTimeRestriction,omitempty"`
	Points              *perk.Points              `json:"points,omitempty"`
	Discount            *perk.Discount            `json:"discount,omitempty"`
	Visualisation       *Visualisation            `json:"visualisation,omitempty"`
	// VisualisationOnCurrentStamp maps a stamp (a key of 1 to 64
	// characters, such as "3") to how the card looks at that stamp. An
	// empty map is kept as sent.
	VisualisationOnCurrentStamp *map[string]StampVisualisation `json:"visualisationOnCurrentStamp,omitempty"`
	// ExcludeDiscountIDs are discounts the award does not combine with. An
	// empty list is kept as sent.
	ExcludeDiscountIDs *[]string `json:"excludeDiscountIds,omitempty"`
}

// fieldNames are the JSON names of Fields: the top-level fields a PUT may
// set, and set to null to remove.
var fieldNames = []string{
	"title", "token", "template", "basketQualification", "dateTimeRestriction", "points", "discount",
	"visualisation", "visualisationOnCurrentStamp", "excludeDiscountIds",
}

// Enrichment is a stored award enrichment as the API returns it.
type Enrichment struct {
	ID              string `json:"_id"`
	TenantID        string `json:"tenantId"`
	LoyaltyRewardID string `json:"loyaltyRewardId"`
	LoyaltyProvider string `json:"loyaltyProvider"`
	Fields
	Created string `json:"created"`
	Updated string `json:"updated"`
}

// Input is the body of POST /awardenrichments and PUT
// /awardenrichments/{enrichmentId}: the fields, loyaltyRewardId and
// loyaltyProvider (required on create, read-only after), and the read-only
// fields a client may send back as GET returned them (POST ignores them;
// PUT requires them unchanged).
type Input struct {
	ID              *string `json:"_id"`
	TenantID        *string `json:"tenantId"`
	Created         *string `json:"created"`
	Updated         *string `json:"updated"`
	LoyaltyRewardID *string `json:"loyaltyRewardId"`
	LoyaltyProvider *string `json:"loyaltyProvider"`
	Fields
}

// ValidateReward checks the reward an enrichment is for: loyaltyProvider
// one of Providers, loyaltyRewardId 1 to MaxText characters. Whether an
// INTERNAL reward names a perk is the Service's check.
func ValidateReward(provider, rewardID *string) error {
	if provider == nil || *provider == "" {
		return apierr.Invalid("loyaltyProvider", "is required: one of %s", strings.Join(Providers, ", "))
	}
	if !slices.Contains(Providers, *provider) {
		return apierr.Invalid("loyaltyProvider", "must be one of %s", strings.Join(Providers, ", "))
	}
	if rewardID == nil || *rewardID == "" {
		return apierr.Invalid("loyaltyRewardId", "is required (the perk id, or the provider's reward id)")
	}
	return web.CheckText("loyaltyRewardId", rewardID, MaxText)
}

// Validate checks the fields against the API's enums and bounds; every
// error names the field's path.
func (f *Fields) Validate() error {
	if err := web.CheckText("title", f.Title, MaxText); err != nil {
		return err
	}
	if err := web.CheckText("token", f.Token, MaxText); err != nil {
		return err
	}
	if f.Template != nil && !slices.Contains(perk.Templates, *f.Template) {
		return apierr.Invalid("template", "must be one of %s", strings.Join(perk.Templates, ", "))
	}
	if err := f.BasketQualification.Validate("basketQualification"); err != nil {
		return err
	}
	if err := f.DateTimeRestriction.Validate("dateTimeRestriction"); err != nil {
		return err
	}
	if err := f.Points.Validate("points"); err != nil {
		return err
	}
	if err := f.Discount.Validate("discount"); err != nil {
		return err
	}
	if err := f.Visualisation.Validate("visualisation"); err != nil {
		return err
	}
	if f.VisualisationOnCurrentStamp != nil {
		m := *f.VisualisationOnCurrentStamp
		const path = "visualisationOnCurrentStamp"
		if len(m) > MaxStampEntries {
			return apierr.Invalid(path, "at most %d entries", MaxStampEntries)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k == "" || utf8.RuneCountInString(k) > MaxStampKey {
				return apierr.Invalid(path, "keys must be 1 to %d characters", MaxStampKey)
			}
			v := m[k]
			if err := v.Validate(path + "." + k); err != nil {
				return err
			}
		}
	}
	if f.ExcludeDiscountIDs != nil {
		ids := *f.ExcludeDiscountIDs
		if len(ids) > MaxExcludedDiscounts {
			return apierr.Invalid("excludeDiscountIds", "at most %d items", MaxExcludedDiscounts)
		}
		for i := range ids {
			if err := web.CheckText(fmt.Sprintf("excludeDiscountIds[%d]", i), &ids[i], MaxText); err != nil {
				return err
			}
		}
	}
	return nil
}
