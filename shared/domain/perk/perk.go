// Package perk is the loyalty programme definitions of a tenant (the
// Perk body of the OpenAPI document): the definition side of an
// Award (title, template, discount, visualisation, qualification,
// restrictions), its point rules, the segment a CLUB or LEVEL perk is tied
// to, and whether it is enabled. Awards (shared/domain/award) are users'
// instances of perks; enrichments (shared/domain/enrichment) add display data to
// them. Admins write perks; users read the enabled ones.
package perk

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/metadata"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Templates (spec: award `template`).
const (
	TemplateStampCard      = "STAMP_CARD"
	TemplatePseudoCurrency = "PSEUDO_CURRENCY"
	TemplateAdHoc          = "AD_HOC"
	TemplateClub           = "CLUB"
	TemplateLevel          = "LEVEL"
)

// ProviderInternal is the loyalty provider of the platform's own perks.
const ProviderInternal = "INTERNAL"

// Sentinel errors of the perk domain.
var (
	ErrNotFound       = apierr.New(apierr.NotFound, "perk not found")
	ErrUnknownSegment = apierr.Invalid("segmentId", "no such segment")
)

// Definition is what an admin writes of a perk: the definition side of the
// API's Award plus the point rules and the segment of a CLUB or LEVEL
// perk. Optional objects are omitted when absent.
type Definition struct {
	Title                 string               `json:"title"`
	Template              string               `json:"template"`
	Terms                 *string              `json:"terms,omitempty"`
	Priority              float64              `json:"priority"`
	RedemptionMethod      *string              `json:"redemptionMethod,omitempty"`
	Auto                  bool                 `json:"auto"`
	Token                 *string              `json:"token,omitempty"`
	MaximumPointCashValue *float64             `json:"maximumPointCashValue,omitempty"`
	Discount              *Discount            `json:"discount,omitempty"`
	DateTimeRestriction   *DateTimeRestriction `json:"dateTimeRestriction,omitempty"`
	BasketQualification   *BasketQualification `json:"basketQualification,omitempty"`
	Visualisation         *Visualisation       `json:"visualisation,omitempty"`
	IsDonatable           bool                 `json:"isDonatable"`
	IsGlobal              bool                 `json:"isGlobal"`
	IsTier                bool                 `json:"isTier"`
	LocationIDs           []string             `json:"locationIds"`
	BarcodeValue          *string              `json:"barcodeValue,omitempty"`
	Points                Points               `json:"points"`
	// SegmentID ties a CLUB or LEVEL perk to the segment whose members
	// hold it (required for those templates, refused for the others).
	SegmentID string `json:"segmentId,omitempty"`
	// Metadata is the tenant's own fields on the perk (see
	// shared/platform/metadata), absent when none; a perk's awards show
	// it too.
	Metadata metadata.Metadata `json:"metadata,omitempty"`
}

// Perk is a stored perk as the API returns it.
type Perk struct {
	ID              string `json:"_id"`
	TenantID        string `json:"tenantId"`
	LoyaltyProvider string `json:"loyaltyProvider"`
	Definition
	Enabled   bool   `json:"enabled"`
	Created   string `json:"created"`
	UpdatedAt string `json:"updatedAt"`
}

// Input is the body of POST /perks and PUT /perks/{perkId}: the
// definition, `enabled`, and the read-only fields a client may send back
// as GET returned them (POST ignores them; PUT requires them unchanged).
type Input struct {
	ID              *string `json:"_id"`
	TenantID        *string `json:"tenantId"`
	LoyaltyProvider *string `json:"loyaltyProvider"`
	Created         *string `json:"created"`
	UpdatedAt       *string `json:"updatedAt"`
	Definition
	Enabled *bool `json:"enabled"`
}

// HeldThroughSegment reports whether the perk is held by the members of a
// segment (CLUB and LEVEL) rather than granted.
func (d *Definition) HeldThroughSegment() bool {
	return d.Template == TemplateClub || d.Template == TemplateLevel
}

// Validate checks a definition against the API's enums and bounds; every
// error names the field's path.
func (d *Definition) Validate() error {
	d.Title = strings.TrimSpace(d.Title)
	if d.Title == "" {
		return apierr.Invalid("title", "is required (1 to %d characters)", MaxTitle)
	}
	if utf8.RuneCountInString(d.Title) > MaxTitle {
		return apierr.Invalid("title", "must be 1 to %d characters", MaxTitle)
	}
	if d.Template == "" {
		return apierr.Invalid("template", "is required: one of %s", strings.Join(Templates, ", "))
	}
	if err := oneOf("template", &d.Template, Templates); err != nil {
		return err
	}
	if err := web.CheckText("terms", d.Terms, MaxText); err != nil {
		return err
	}
	if d.Priority < -MaxMoney || d.Priority > MaxMoney {
		return apierr.Invalid("priority", "is out of range")
	}
	if d.RedemptionMethod != nil && !upperSnake(*d.RedemptionMethod) {
		return apierr.Invalid("redemptionMethod", "must be an UPPER_SNAKE value such as AUTO")
	}
	if err := web.CheckText("token", d.Token, MaxTitle); err != nil {
		return err
	}
	if err := money("maximumPointCashValue", d.MaximumPointCashValue); err != nil {
		return err
	}
	if err := d.Discount.Validate("discount"); err != nil {
		return err
	}
	if err := d.DateTimeRestriction.Validate("dateTimeRestriction"); err != nil {
		return err
	}
	if err := d.BasketQualification.Validate("basketQualification"); err != nil {
		return err
	}
	if err := d.Visualisation.Validate("visualisation"); err != nil {
		return err
	}
	if d.LocationIDs == nil {
		d.LocationIDs = []string{}
	}
	if len(d.LocationIDs) > MaxLocations {
		return apierr.Invalid("locationIds", "at most %d items", MaxLocations)
	}
	for i, id := range d.LocationIDs {
		if !web.ValidID(id) {
			return apierr.Invalid(fmt.Sprintf("locationIds[%d]", i), "is not a location id")
		}
	}
	if slices.Contains(d.LocationIDs, "") {
		return apierr.Invalid("locationIds", "items must not be empty")
	}
	if err := web.CheckText("barcodeValue", d.BarcodeValue, MaxTitle); err != nil {
		return err
	}
	if err := d.Points.Validate("points"); err != nil {
		return err
	}
	switch {
	case d.HeldThroughSegment() && d.SegmentID == "":
		return apierr.Invalid("segmentId", "is required for %s perks: its members hold the perk", d.Template)
	case d.HeldThroughSegment() && !web.ValidID(d.SegmentID):
		return ErrUnknownSegment
	case !d.HeldThroughSegment() && d.SegmentID != "":
		return apierr.Invalid("segmentId", "is only for CLUB and LEVEL perks")
	case d.HeldThroughSegment() && d.IsGlobal:
		return apierr.Invalid("isGlobal", "must be false for %s perks: the segment's members hold them", d.Template)
	}
	if d.Discount != nil {
		d.Discount.ScopeMatchCode = compact(d.Discount.ScopeMatchCode)
	}
	if d.BasketQualification != nil {
		d.BasketQualification.MatchCode = compact(d.BasketQualification.MatchCode)
	}
	m, err := d.Metadata.Clean()
	d.Metadata = m
	return err
}

// idSeq orders the ids one process makes within one millisecond.
var idSeq atomic.Uint32

// NewID returns a new id of 24 hex characters: the creation time in
// milliseconds (6 bytes), a per-process sequence (2 bytes) and 4 random
// bytes, so ids sort by creation (one process's strictly).
func NewID(now time.Time) string {
	var b [12]byte
	ms := uint64(now.UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	binary.BigEndian.PutUint16(b[6:8], uint16(idSeq.Add(1)))
	_, _ = rand.Read(b[8:])
	return hex.EncodeToString(b[:])
}
