// Package checkin is the check-in domain: a user is checked in at one
// location at a time, for 30 minutes at most. It holds the types and their
// validation, the DynamoDB store (the only place that builds this domain's
// keys), the service with the API's lifecycle, the signed POS notifications
// and the HTTP handlers of the checkins function.
package checkin

import (
	"context"
	"strings"
	"time"
	"unicode"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Lifetime is how long a check-in lasts: it is deleted (DynamoDB TTL) and
// treated as absent on every read 30 minutes after creation.
const Lifetime = 30 * time.Minute

// Check-in types.
const (
	TypeAuto    = "AUTO"
	TypeManual  = "MANUAL"
	TypeCFD     = "CFD"
	TypeOffline = "OFFLINE"
	TypeUnknown = "UNKNOWN"
)

// Check-in triggers (what caused the check-in).
const (
	TriggerGeo     = "GEO"
	TriggerBeacon  = "BEACON"
	TriggerCode    = "CODE"
	TriggerPOS     = "POS"
	TriggerUnknown = "UNKNOWN"
)

// Location states and the service a location must offer.
const (
	LocationActive = "ACTIVE"
	ServiceName    = "checkins"
)

var (
	validTypes    = map[string]bool{TypeAuto: true, TypeManual: true, TypeCFD: true, TypeOffline: true, TypeUnknown: true}
	validTriggers = map[string]bool{TriggerGeo: true, TriggerBeacon: true, TriggerCode: true, TriggerPOS: true, TriggerUnknown: true}
)

// Sentinel errors of the check-in domain.
var (
	ErrPhotoRequired      = apierr.New(apierr.ProfilePhotoRequired, "the user needs a profile photo to check in")
	ErrAlreadyCheckedIn   = apierr.New(apierr.AlreadyCheckedIn, "the user is already checked in at this location")
	ErrNotCheckedIn       = apierr.New(apierr.NotFound, "the user is not checked in")
	ErrLocationNotFound   = apierr.New(apierr.NotFound, "location not found")
	ErrLocationInactive   = apierr.Invalid("locationId", "the location is not ACTIVE")
	ErrCheckinsNotOffered = apierr.Invalid("locationId", "the location does not offer the checkins service")
	ErrConcurrentCheckin  = apierr.New(apierr.Conflict, "the user's check-in was changed by another request; retry")
)

// Checkin is a user's presence at a location, as the API returns it.
type Checkin struct {
	ID            string `json:"_id" dynamodbav:"id"`
	TenantID      string `json:"tenantId" dynamodbav:"tenantId"`
	UserID        string `json:"userId" dynamodbav:"userId"`
	LocationID    string `json:"locationId" dynamodbav:"locationId"`
	LocationTitle string `json:"locationTitle" dynamodbav:"locationTitle"`
	UserFullName  string `json:"userFullName" dynamodbav:"userFullName"`
	Type          string `json:"type" dynamodbav:"type"`
	Trigger       string `json:"trigger" dynamodbav:"trigger"`
	Created       string `json:"created" dynamodbav:"created"`
	Updated       string `json:"updated" dynamodbav:"updated"`
	// ExpiresAt (epoch seconds) is internal: the DynamoDB TTL attribute and
	// the read filter.
	ExpiresAt int64 `json:"-" dynamodbav:"expiresAt"`
}

// live reports whether c has not expired at now.
func (c Checkin) live(now time.Time) bool { return c.ExpiresAt > now.Unix() }

// CreateInput is the body of POST /users/{userId}/checkins.
type CreateInput struct {
	LocationID string `json:"locationId"`
	// Type and Trigger default to UNKNOWN when absent.
	Type    string `json:"type"`
	Trigger string `json:"trigger"`
}

// Validate checks a create body and fills the defaults.
func (in *CreateInput) Validate() error {
	in.LocationID = strings.TrimSpace(in.LocationID)
	if in.LocationID == "" {
		return apierr.Invalid("locationId", "is required")
	}
	if err := checkID("locationId", in.LocationID); err != nil {
		return err
	}
	if in.Type == "" {
		in.Type = TypeUnknown
	}
	if !validTypes[in.Type] {
		return apierr.Invalid("type", "must be one of AUTO, MANUAL, CFD, OFFLINE, UNKNOWN")
	}
	if in.Trigger == "" {
		in.Trigger = TriggerUnknown
	}
	if !validTriggers[in.Trigger] {
		return apierr.Invalid("trigger", "must be one of GEO, BEACON, CODE, POS, UNKNOWN")
	}
	return nil
}

// checkID accepts an opaque id of at most 200 printable characters.
func checkID(field, id string) error {
	if len(id) > 200 {
		return apierr.Invalid(field, "must be at most 200 characters")
	}
	for _, r := range id {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return apierr.Invalid(field, "must not contain spaces or control characters")
		}
	}
	return nil
}

// Place is what a check-in needs to know about a location.
type Place struct {
	ID    string
	Title string
	// State is PENDING, ACTIVE or RETIRED; only ACTIVE locations take
	// check-ins.
	State string
	// Checkins is the location's `services.checkins`.
	Checkins bool
	Geo      []float64
	Regions  []string
	Tags     []string
	// Timezone is an IANA zone name; the actions' day parts are local to it
	// (UTC when empty).
	Timezone string
}

// Places finds locations. An unknown location is an error whose apierr code
// is NOT_FOUND.
type Places interface {
	Place(ctx context.Context, tenantID, id string) (Place, error)
}

// PlacesFunc adapts a function to Places.
type PlacesFunc func(ctx context.Context, tenantID, id string) (Place, error)

// Place calls f.
func (f PlacesFunc) Place(ctx context.Context, tenantID, id string) (Place, error) {
	return f(ctx, tenantID, id)
}

// Paging of the check-in lists (spec Limits: per_page default 20, page
// default 1, the first page is 1).
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
	MaxPage        = 10000
)

// Summary is the paging block of a check-in list.
type Summary struct {
	// Total is the number of live check-ins in the whole list.
	Total int `json:"total"`
	// Count is the number in this page.
	Count int `json:"count"`
	// Pages is ceil(total / per_page); 0 for an empty list.
	Pages int `json:"pages"`
	// Page is the page returned (the first is 1).
	Page int `json:"page"`
}

// List is a page of check-ins.
type List struct {
	Checkins []Checkin `json:"checkins"`
	Summary  Summary   `json:"summary"`
}

// PageQuery is a page-number request.
type PageQuery struct {
	PerPage int
	Page    int
}

func (q PageQuery) offset() int { return (q.Page - 1) * q.PerPage }

func summary(total, count int, q PageQuery) Summary {
	return Summary{Total: total, Count: count, Pages: (total + q.PerPage - 1) / q.PerPage, Page: q.Page}
}
