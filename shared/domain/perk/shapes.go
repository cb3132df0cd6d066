package perk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Enumerations of the definition shapes (spec: Award, Discount,
// Visualisation).
var (
	Templates       = []string{TemplateStampCard, TemplatePseudoCurrency, TemplateAdHoc, TemplateClub, TemplateLevel}
	Scopes          = []string{"ITEM", "CATEGORY", "BASKET", "ITEM_OR_CATEGORY", "CHILD_ITEM", "ITEM_AND_CHILD_ITEM"}
	DiscountRules   = []string{"CHEAPEST", "COSTLIEST", "ALL", "ALL_ALLOCATE", "CHEAPEST_ALLOCATE", "COSTLIEST_ALLOCATE", "CHEAPEST_FIRST", "COSTLIEST_FIRST"}
	ChildItemRules  = []string{"INCLUDE", "INCLUDE_MATCHED", "EXCLUDE"}
	CombinationRule = []string{"MULTI", "OWN_QUALIFIER", "SINGLE"}
	TextAlignments  = []string{"LEFT", "RIGHT", "CENTER", "JUSTIFY"}
	VAlignments     = []string{"TOP", "CENTER", "BOTTOM"}
	AnchorStyles    = []string{"BOTTOM_LEFT_CHIP", "BOTTOM_RIGHT_CHIP", "BOTTOM_MIDDLE_CHIP", "BOTTOM_FULL_WIDTH_BAR", "TOP_LEFT_CHIP", "TOP_RIGHT_CHIP", "TOP_MIDDLE_CHIP", "TOP_FULL_WIDTH_BAR"}
	DetailStyles    = []string{"BOTTOM_MIDDLE_CHIP", "BOTTOM_FULL_WIDTH_BAR", "TOP_MIDDLE_CHIP", "TOP_FULL_WIDTH_BAR"}
	TextStyles      = []string{"NONE", "FULL", "NARROW"}
	ScreenShapes    = []string{"DOUBLE_RECTANGLE", "SINGLE_RECTANGLE", "LARGE_SQUARE", "SMALL_SQUARE"}
)

// Bounds of the definition fields.
const (
	MaxTitle      = 255
	MaxText       = 4000 // terms, descriptions, copy
	MaxURL        = 2048 // image URLs and links
	MaxShort      = 64   // colours, codes, enumerations given as text
	MaxMapEntries = 200  // entries of the per-stamp maps
	MaxCodes      = 200  // match codes in a list
	MaxLocations  = 500  // locationIds
	MaxPoints     = 1_000_000_000
	MaxMoney      = 1_000_000_000.0
)

// Points are a perk's point rules (spec: enrichment `points`): integers
// from 0. Absent fields have no rule: no `max` means no ceiling, no
// `maxTotalRedemptions` means no limit.
type Points struct {
	// Initial is the points a new award starts with (also the default of
	// a grant without `points`).
	Initial *int `json:"initial,omitempty"`
	// Min is the floor a redemption may not go below (default 0).
	Min *int `json:"min,omitempty"`
	// Max is the ceiling of an award's available points: a grant beyond it
	// is clamped to it.
	Max *int `json:"max,omitempty"`
	// Step and Redemption describe the card to apps (points per stamp,
	// points one redemption costs); they do not change a write.
	Step       *int `json:"step,omitempty"`
	Redemption *int `json:"redemption,omitempty"`
	// MaxTotalRedemptions is how many redemptions one award allows.
	MaxTotalRedemptions *int `json:"maxTotalRedemptions,omitempty"`
	// Expiry is when the points expire (absent: never; see Expiry).
	Expiry *Expiry `json:"expiry,omitempty"`
}

// InitialOr returns Initial or 0.
func (p *Points) InitialOr() int {
	if p == nil || p.Initial == nil {
		return 0
	}
	return *p.Initial
}

// MinOr returns Min or 0.
func (p *Points) MinOr() int {
	if p == nil || p.Min == nil {
		return 0
	}
	return *p.Min
}

// Validate checks the point rules; path names the object ("points").
func (p *Points) Validate(path string) error {
	if p == nil {
		return nil
	}
	for name, v := range map[string]*int{"initial": p.Initial, "min": p.Min, "max": p.Max, "step": p.Step, "redemption": p.Redemption, "maxTotalRedemptions": p.MaxTotalRedemptions} {
		if v != nil && (*v < 0 || *v > MaxPoints) {
			return apierr.Invalid(path+"."+name, "must be an integer from 0 to %d", MaxPoints)
		}
	}
	if err := p.Expiry.Validate(path + ".expiry"); err != nil {
		return err
	}
	if p.Min != nil && p.Initial != nil && *p.Initial < *p.Min {
		return apierr.Invalid(path+".initial", "must be at least min (%d)", *p.Min)
	}
	if p.Max != nil {
		if p.Initial != nil && *p.Initial > *p.Max {
			return apierr.Invalid(path+".initial", "must be at most max (%d)", *p.Max)
		}
		if p.Min != nil && *p.Min > *p.Max {
			return apierr.Invalid(path+".min", "must be at most max (%d)", *p.Max)
		}
	}
	return nil
}

// Discount is the value a redemption gives (spec: Discount). No other
// properties are allowed.
type Discount struct {
	Value    *float64 `json:"value,omitempty"`
	Type     *string  `json:"type,omitempty"`
	MaxValue *float64 `json:"maxValue,omitempty"`
	MaxCount *int     `json:"maxCount,omitempty"`
	Scope    *string  `json:"scope,omitempty"`
	// ScopeMatchCode is a string, an array of strings or an array of
	// arrays of strings.
	ScopeMatchCode json.RawMessage `json:"scopeMatchCode,omitempty"`
	Rule           *string         `json:"rule,omitempty"`
	ChildItemRule  *string         `json:"childItemRule,omitempty"`
	// CombinationRule and DiscountCharges may be null (stored as absent).
	CombinationRule *string `json:"combinationRule,omitempty"`
	// DiscountCharges is bit flags: 1 service charges, 2 delivery charges
	// (absent means 1).
	DiscountCharges *int `json:"discountCharges,omitempty"`
}

// Validate checks a discount; path names it.
func (d *Discount) Validate(path string) error {
	if d == nil {
		return nil
	}
	if err := money(path+".value", d.Value); err != nil {
		return err
	}
	if err := money(path+".maxValue", d.MaxValue); err != nil {
		return err
	}
	if d.Type != nil && !upperSnake(*d.Type) {
		return apierr.Invalid(path+".type", "must be an UPPER_SNAKE value such as VALUE")
	}
	if d.MaxCount != nil && (*d.MaxCount < 1 || *d.MaxCount > 20) {
		return apierr.Invalid(path+".maxCount", "must be an integer from 1 to 20")
	}
	if err := oneOf(path+".scope", d.Scope, Scopes); err != nil {
		return err
	}
	if err := matchCodes(path+".scopeMatchCode", d.ScopeMatchCode, true); err != nil {
		return err
	}
	if err := oneOf(path+".rule", d.Rule, DiscountRules); err != nil {
		return err
	}
	if err := oneOf(path+".childItemRule", d.ChildItemRule, ChildItemRules); err != nil {
		return err
	}
	if err := oneOf(path+".combinationRule", d.CombinationRule, CombinationRule); err != nil {
		return err
	}
	if d.DiscountCharges != nil && (*d.DiscountCharges < 0 || *d.DiscountCharges > 3) {
		return apierr.Invalid(path+".discountCharges", "must be bit flags from 0 to 3 (1 service charges, 2 delivery charges)")
	}
	return nil
}

// BasketQualification says which basket qualifies (spec: Award
// basketQualification).
type BasketQualification struct {
	// MatchCode is a string or an array of strings.
	MatchCode    json.RawMessage `json:"matchCode,omitempty"`
	MaxCount     *int            `json:"maxCount,omitempty"`
	MinimumItems *int            `json:"minimumItems,omitempty"`
	MinimumValue *float64        `json:"minimumValue,omitempty"`
	Scope        *string         `json:"scope,omitempty"`
}

// Validate checks a basket qualification; path names it.
func (b *BasketQualification) Validate(path string) error {
	if b == nil {
		return nil
	}
	if err := matchCodes(path+".matchCode", b.MatchCode, false); err != nil {
		return err
	}
	if b.MaxCount != nil && (*b.MaxCount < 0 || *b.MaxCount > MaxPoints) {
		return apierr.Invalid(path+".maxCount", "must be an integer from 0 to %d", MaxPoints)
	}
	if b.MinimumItems != nil && (*b.MinimumItems < 0 || *b.MinimumItems > MaxPoints) {
		return apierr.Invalid(path+".minimumItems", "must be an integer from 0 to %d", MaxPoints)
	}
	if err := money(path+".minimumValue", b.MinimumValue); err != nil {
		return err
	}
	return oneOf(path+".scope", b.Scope, Scopes)
}

// Codes returns the match codes (one string or a list) of a basket
// qualification.
func (b *BasketQualification) Codes() []string {
	if b == nil || len(b.MatchCode) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(b.MatchCode, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(b.MatchCode, &many)
	return many
}

// DateTimeRestriction limits when an award may be redeemed. Times are
// local to the redemption's location (UTC without one): startTime and
// endTime are 24-hour HHMM integers (1130 is 11:30; endTime 2400 is the
// end of the day; a startTime after endTime spans midnight; startTime
// equal to endTime, an empty window, is refused); daysOfWeek
// is bit flags, 1 Monday, 2 Tuesday, 4 Wednesday, 8 Thursday, 16 Friday,
// 32 Saturday, 64 Sunday (0 or absent: every day); startDate and endDate
// are YYYY-MM-DD, both inclusive.
type DateTimeRestriction struct {
	StartTime  *int    `json:"startTime,omitempty"`
	EndTime    *int    `json:"endTime,omitempty"`
	DaysOfWeek *int    `json:"daysOfWeek,omitempty"`
	StartDate  *string `json:"startDate,omitempty"`
	EndDate    *string `json:"endDate,omitempty"`
}

// Validate checks a date and time restriction; path names it.
func (d *DateTimeRestriction) Validate(path string) error {
	if d == nil {
		return nil
	}
	if d.StartTime != nil && !hhmm(*d.StartTime, false) {
		return apierr.Invalid(path+".startTime", "must be a 24-hour HHMM time from 0 to 2359 (1130 is 11:30)")
	}
	if d.EndTime != nil && !hhmm(*d.EndTime, true) {
		return apierr.Invalid(path+".endTime", "must be a 24-hour HHMM time from 1 to 2400 (1130 is 11:30)")
	}
	if d.StartTime != nil && d.EndTime != nil && *d.StartTime == *d.EndTime {
		// start <= now < end holds at no time: never redeemable.
		return apierr.Invalid(path+".endTime", "must differ from startTime: an empty window is never redeemable (leave both out for the whole day)")
	}
	if d.DaysOfWeek != nil && (*d.DaysOfWeek < 0 || *d.DaysOfWeek > 127) {
		return apierr.Invalid(path+".daysOfWeek", "must be bit flags from 0 to 127 (1 Monday ... 64 Sunday)")
	}
	var start, end time.Time
	var err error
	if d.StartDate != nil {
		if start, err = time.Parse(time.DateOnly, *d.StartDate); err != nil {
			return apierr.Invalid(path+".startDate", "must be a date YYYY-MM-DD")
		}
	}
	if d.EndDate != nil {
		if end, err = time.Parse(time.DateOnly, *d.EndDate); err != nil {
			return apierr.Invalid(path+".endDate", "must be a date YYYY-MM-DD")
		}
	}
	if d.StartDate != nil && d.EndDate != nil && end.Before(start) {
		return apierr.Invalid(path+".endDate", "must not be before startDate")
	}
	return nil
}

func hhmm(v int, end bool) bool {
	if end && v == 2400 {
		return true
	}
	if v < 0 || v > 2359 || v%100 > 59 {
		return false
	}
	return !end || v > 0
}

// Allows reports whether the restriction allows a redemption at t (already
// in the location's zone). A nil restriction allows any time.
func (d *DateTimeRestriction) Allows(t time.Time) bool {
	if d == nil {
		return true
	}
	day := t.Format(time.DateOnly)
	if d.StartDate != nil && day < *d.StartDate {
		return false
	}
	if d.EndDate != nil && day > *d.EndDate {
		return false
	}
	if d.DaysOfWeek != nil && *d.DaysOfWeek != 0 {
		bit := 1 << ((int(t.Weekday()) + 6) % 7) // Monday 1 ... Sunday 64
		if *d.DaysOfWeek&bit == 0 {
			return false
		}
	}
	now := t.Hour()*100 + t.Minute()
	start, end := 0, 2400
	if d.StartTime != nil {
		start = *d.StartTime
	}
	if d.EndTime != nil {
		end = *d.EndTime
	}
	if start <= end {
		return now >= start && now < end
	}
	return now >= start || now < end // spans midnight
}

// Wallet is how a mobile wallet pass shows the award.
type Wallet struct {
	Enabled       *bool       `json:"enabled,omitempty"`
	DisplayPoints *bool       `json:"displayPoints,omitempty"`
	Hidden        *bool       `json:"hidden,omitempty"`
	Title         *string     `json:"title,omitempty"`
	Description   *string     `json:"description,omitempty"`
	Terms         *string     `json:"terms,omitempty"`
	Link          *string     `json:"link,omitempty"`
	Priority      *float64    `json:"priority,omitempty"`
	ImageURLs     []NameValue `json:"imageUrls,omitempty"`
}

// NameValue is one named image of a wallet pass.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Visualisation is how apps draw an award (spec: Visualisation). No other
// properties are allowed.
type Visualisation struct {
	StampImageURL                            *string           `json:"stampImageUrl,omitempty"`
	StampBackgroundURL                       *string           `json:"stampBackgroundUrl,omitempty"`
	BackgroundImageURL                       *string           `json:"backgroundImageUrl,omitempty"`
	BackgroundImageURLNoAvailableRedemptions *string           `json:"backgroundImageUrlNoAvailableRedemptions,omitempty"`
	BackgroundImageURLAvailableRedemptions   *string           `json:"backgroundImageUrlAvailableRedemptions,omitempty"`
	TitleText                                *string           `json:"titleText,omitempty"`
	SubtitleText                             *string           `json:"subtitleText,omitempty"`
	SubtitleTwoText                          *string           `json:"subtitleTwoText,omitempty"`
	Description                              *string           `json:"description,omitempty"`
	AvailableCardCopy                        *string           `json:"availableCardCopy,omitempty"`
	NextCardProgressCopy                     *string           `json:"nextCardProgressCopy,omitempty"`
	Terms                                    *string           `json:"terms,omitempty"`
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
	Priority                                 *float64          `json:"priority,omitempty"`
	TextAlignment                            *string           `json:"textAlignment,omitempty"`
	VerticalAlignment                        *string           `json:"verticalAlignment,omitempty"`
	ExpiryLabelAnchorStyle                   *string           `json:"expiryLabelAnchorStyle,omitempty"`
	ExpiryLabelDetailStyle                   *string           `json:"expiryLabelDetailStyle,omitempty"`
	ExpiryLabelTextStyle                     *string           `json:"expiryLabelTextStyle,omitempty"`
	AwardsScreenShape                        *string           `json:"awardsScreenShape,omitempty"`
	Wallet                                   *Wallet           `json:"wallet,omitempty"`
}

// Validate checks a visualisation; path names it.
func (v *Visualisation) Validate(path string) error {
	if v == nil {
		return nil
	}
	urls := map[string]*string{
		"stampImageUrl": v.StampImageURL, "stampBackgroundUrl": v.StampBackgroundURL, "backgroundImageUrl": v.BackgroundImageURL,
		"backgroundImageUrlNoAvailableRedemptions": v.BackgroundImageURLNoAvailableRedemptions,
		"backgroundImageUrlAvailableRedemptions":   v.BackgroundImageURLAvailableRedemptions,
	}
	for _, name := range sortedKeys(urls) {
		if err := web.CheckText(path+"."+name, urls[name], MaxURL); err != nil {
			return err
		}
	}
	texts := map[string]*string{
		"titleText": v.TitleText, "subtitleText": v.SubtitleText, "subtitleTwoText": v.SubtitleTwoText,
		"description": v.Description, "availableCardCopy": v.AvailableCardCopy, "nextCardProgressCopy": v.NextCardProgressCopy,
		"terms": v.Terms,
	}
	for _, name := range sortedKeys(texts) {
		if err := web.CheckText(path+"."+name, texts[name], MaxText); err != nil {
			return err
		}
	}
	colours := map[string]*string{"textColour": v.TextColour, "stampColour": v.StampColour, "backgroundOverlayColour": v.BackgroundOverlayColour}
	for _, name := range sortedKeys(colours) {
		if err := web.CheckText(path+"."+name, colours[name], MaxShort); err != nil {
			return err
		}
	}
	maps := map[string]map[string]string{
		"stampImageUrlPerStamp": v.StampImageURLPerStamp, "stampColourPerStamp": v.StampColourPerStamp,
		"stampBackgroundUrlPerStamp": v.StampBackgroundURLPerStamp,
	}
	for _, name := range sortedKeys(maps) {
		if err := stringMap(path+"."+name, maps[name]); err != nil {
			return err
		}
	}
	if len(v.RandomiseStampPositionsPerStamp) > MaxMapEntries {
		return apierr.Invalid(path+".randomiseStampPositionsPerStamp", "at most %d entries", MaxMapEntries)
	}
	for k := range v.RandomiseStampPositionsPerStamp {
		if err := mapKey(path+".randomiseStampPositionsPerStamp", k); err != nil {
			return err
		}
	}
	if o := v.BackgroundOverlayOpacity; o != nil && (*o < 0 || *o > 1) {
		return apierr.Invalid(path+".backgroundOverlayOpacity", "must be a number from 0 to 1")
	}
	if p := v.Priority; p != nil && (*p < -MaxMoney || *p > MaxMoney) {
		return apierr.Invalid(path+".priority", "is out of range")
	}
	enums := []struct {
		name  string
		v     *string
		allow []string
	}{
		{"textAlignment", v.TextAlignment, TextAlignments}, {"verticalAlignment", v.VerticalAlignment, VAlignments},
		{"expiryLabelAnchorStyle", v.ExpiryLabelAnchorStyle, AnchorStyles}, {"expiryLabelDetailStyle", v.ExpiryLabelDetailStyle, DetailStyles},
		{"expiryLabelTextStyle", v.ExpiryLabelTextStyle, TextStyles}, {"awardsScreenShape", v.AwardsScreenShape, ScreenShapes},
	}
	for _, e := range enums {
		if err := oneOf(path+"."+e.name, e.v, e.allow); err != nil {
			return err
		}
	}
	return v.Wallet.validate(path + ".wallet")
}

func (w *Wallet) validate(path string) error {
	if w == nil {
		return nil
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"title", w.Title, MaxTitle}, {"description", w.Description, MaxText}, {"terms", w.Terms, MaxText}, {"link", w.Link, MaxURL}} {
		if err := web.CheckText(path+"."+f.name, f.v, f.max); err != nil {
			return err
		}
	}
	if p := w.Priority; p != nil && (*p < -MaxMoney || *p > MaxMoney) {
		return apierr.Invalid(path+".priority", "is out of range")
	}
	if len(w.ImageURLs) > 50 {
		return apierr.Invalid(path+".imageUrls", "at most 50 items")
	}
	for i, nv := range w.ImageURLs {
		at := fmt.Sprintf("%s.imageUrls[%d]", path, i)
		if err := web.CheckText(at+".name", &nv.Name, MaxShort); err != nil {
			return err
		}
		if err := web.CheckText(at+".value", &nv.Value, MaxURL); err != nil {
			return err
		}
	}
	return nil
}

// Shared checks.

// snake is an UPPER_SNAKE_CASE code, compiled on first use so that a cold
// start does not pay for it.
var snake = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`) })

func upperSnake(s string) bool { return len(s) <= MaxShort && snake().MatchString(s) }

func oneOf(path string, v *string, allowed []string) error {
	if v != nil && !slices.Contains(allowed, *v) {
		return apierr.Invalid(path, "must be one of %s", strings.Join(allowed, ", "))
	}
	return nil
}

func money(path string, v *float64) error {
	if v != nil && (*v < 0 || *v > MaxMoney) {
		return apierr.Invalid(path, "must be a number from 0 to %.0f", MaxMoney)
	}
	return nil
}

func mapKey(path, k string) error {
	if k == "" || utf8.RuneCountInString(k) > MaxShort {
		return apierr.Invalid(path, "keys must be 1 to %d characters", MaxShort)
	}
	return nil
}

func stringMap(path string, m map[string]string) error {
	if len(m) > MaxMapEntries {
		return apierr.Invalid(path, "at most %d entries", MaxMapEntries)
	}
	for _, k := range sortedKeys(m) {
		if err := mapKey(path, k); err != nil {
			return err
		}
		v := m[k]
		if err := web.CheckText(path+"."+k, &v, MaxURL); err != nil {
			return err
		}
	}
	return nil
}

// matchCodes checks a match code value: a string or an array of strings,
// and with nested also an array of arrays of strings.
func matchCodes(path string, raw json.RawMessage, nested bool) error {
	if len(raw) == 0 {
		return nil
	}
	want := "a string or an array of strings"
	if nested {
		want = "a string, an array of strings or an array of arrays of strings"
	}
	trimmed := bytes.TrimSpace(raw)
	if bytes.Equal(trimmed, []byte("null")) {
		return apierr.Invalid(path, "must be %s", want)
	}
	var one string
	if json.Unmarshal(trimmed, &one) == nil {
		return web.CheckText(path, &one, MaxShort*4)
	}
	var flat []string
	if json.Unmarshal(trimmed, &flat) == nil {
		return codeList(path, flat)
	}
	if nested {
		var deep [][]string
		if json.Unmarshal(trimmed, &deep) == nil {
			if len(deep) > MaxCodes {
				return apierr.Invalid(path, "at most %d lists", MaxCodes)
			}
			for i, l := range deep {
				if err := codeList(fmt.Sprintf("%s[%d]", path, i), l); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return apierr.Invalid(path, "must be %s", want)
}

func codeList(path string, l []string) error {
	if len(l) > MaxCodes {
		return apierr.Invalid(path, "at most %d codes", MaxCodes)
	}
	for i := range l {
		if err := web.CheckText(fmt.Sprintf("%s[%d]", path, i), &l[i], MaxShort*4); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// compact returns raw without insignificant white space (so stored JSON
// compares by value).
func compact(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return raw
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
