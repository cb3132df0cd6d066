// Package audience is segments (audiences) and their members (the
// Segment body of the OpenAPI document): groups of users, joined and left
// by explicit requests (and later by rules), with the expiry the segment's
// type decides. Joining and leaving run the OnJoin and OnLeave hooks in the
// membership's transaction: the loyalty domain adds there the actions of
// the CLUB and LEVEL perks a member holds through the segment.
//
// Expiry: SCHEDULED drops a member once expiryHorizon has passed since
// they were first added; ROLLING does the same but restarts the clock
// whenever they are added again; PERSISTENT never expires. The daily
// expiry run (Service.Expire, 00:00 UTC) removes them, so a membership
// ends at the first run at or after the horizon: its end is rounded up to
// the next 00:00 UTC, and every read treats a membership whose end has
// passed as absent, before the run removed it or not.
package audience

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Segment types (spec: Segment `type`).
const (
	Scheduled  = "SCHEDULED"
	Rolling    = "ROLLING"
	Persistent = "PERSISTENT"
)

// Limits of segments and their members.
const (
	MaxTitle       = 255
	MaxDescription = 4000
	// MaxMembersPerCall is the most userIds one POST of members takes.
	MaxMembersPerCall = 100
	// MaxHorizon is the longest expiryHorizon.
	MaxHorizon = 10 * 366 * 24 * time.Hour
)

// Sentinel errors of the audience domain.
var (
	ErrNotFound       = apierr.New(apierr.NotFound, "segment not found")
	ErrNotMember      = apierr.New(apierr.NotFound, "the user is not a member of this segment")
	ErrConcurrent     = apierr.New(apierr.Conflict, "the segment was changed by another request; retry")
	ErrPerksTied      = apierr.New(apierr.Conflict, "enabled CLUB or LEVEL perks are tied to this segment: disable them (DELETE /perks/{perkId}) first")
	ErrTooManyMembers = apierr.Invalid("userIds", "at most %d per call", MaxMembersPerCall)
)

// Definition is what an admin writes of a segment.
type Definition struct {
	Title       string  `json:"title"`
	Description *string `json:"description,omitempty"`
	Type        string  `json:"type"`
	// ExpiryHorizon is an ISO 8601 duration (P30D, PT12H, P1Y2M): how long
	// a membership lasts. Required for SCHEDULED and ROLLING, refused for
	// PERSISTENT.
	ExpiryHorizon *string `json:"expiryHorizon,omitempty"`
}

// Segment is a stored segment as the API returns it.
type Segment struct {
	ID       string `json:"_id"`
	TenantID string `json:"tenantId"`
	Definition
	Created   string `json:"created"`
	UpdatedAt string `json:"updatedAt"`
}

// Input is the body of POST /segments and PUT /segments/{segmentId}: the
// definition and the read-only fields a client may send back.
type Input struct {
	ID        *string `json:"_id"`
	TenantID  *string `json:"tenantId"`
	Created   *string `json:"created"`
	UpdatedAt *string `json:"updatedAt"`
	Definition
}

// Validate checks a segment definition.
func (d *Definition) Validate() error {
	d.Title = strings.TrimSpace(d.Title)
	if d.Title == "" {
		return apierr.Invalid("title", "is required (1 to %d characters)", MaxTitle)
	}
	if utf8.RuneCountInString(d.Title) > MaxTitle {
		return apierr.Invalid("title", "must be 1 to %d characters", MaxTitle)
	}
	if d.Description != nil && (*d.Description == "" || utf8.RuneCountInString(*d.Description) > MaxDescription) {
		return apierr.Invalid("description", "must be 1 to %d characters", MaxDescription)
	}
	switch d.Type {
	case Scheduled, Rolling:
		if d.ExpiryHorizon == nil {
			return apierr.Invalid("expiryHorizon", "is required for %s segments (an ISO 8601 duration such as P30D)", d.Type)
		}
		if _, err := ParseHorizon(*d.ExpiryHorizon); err != nil {
			return err
		}
	case Persistent:
		if d.ExpiryHorizon != nil {
			return apierr.Invalid("expiryHorizon", "PERSISTENT segments never expire: leave expiryHorizon out")
		}
	case "":
		return apierr.Invalid("type", "is required: SCHEDULED, ROLLING or PERSISTENT")
	default:
		return apierr.Invalid("type", "must be SCHEDULED, ROLLING or PERSISTENT")
	}
	return nil
}

// Expires reports whether members of the segment expire.
func (d *Definition) Expires() bool { return d.Type != Persistent && d.ExpiryHorizon != nil }

// Horizon is a parsed ISO 8601 duration: calendar parts (years, months,
// days, weeks as days) and a clock part.
type Horizon struct {
	Years, Months, Days int
	Clock               time.Duration
}

// horizonPattern is compiled on first use, not at every cold start.
var horizonPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$`)
})

// ParseHorizon parses an ISO 8601 duration such as P30D, P1Y2M, P2W or
// PT36H. It must be positive and at most about ten years.
func ParseHorizon(s string) (Horizon, error) {
	bad := apierr.Invalid("expiryHorizon", "must be a positive ISO 8601 duration such as P30D, P2W, P1M or PT12H (at most 10 years)")
	m := horizonPattern().FindStringSubmatch(s)
	if m == nil || s == "P" || strings.HasSuffix(s, "T") {
		return Horizon{}, bad
	}
	n := make([]int, 8)
	for i := 1; i < len(m); i++ {
		if m[i] == "" {
			continue
		}
		v, err := strconv.Atoi(m[i])
		if err != nil || v > 100000 {
			return Horizon{}, bad
		}
		n[i] = v
	}
	h := Horizon{Years: n[1], Months: n[2], Days: n[3]*7 + n[4],
		Clock: time.Duration(n[5])*time.Hour + time.Duration(n[6])*time.Minute + time.Duration(n[7])*time.Second}
	probe := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if d := h.After(probe).Sub(probe); d <= 0 || d > MaxHorizon {
		return Horizon{}, bad
	}
	return h, nil
}

// After returns t plus the horizon.
func (h Horizon) After(t time.Time) time.Time {
	return t.AddDate(h.Years, h.Months, h.Days).Add(h.Clock)
}

// RunHour is the hour (UTC) of the daily expiry run (template.yaml
// schedules the expiry function at 00:00 UTC).
const RunHour = 0

// EndOf returns when a membership added at t ends under horizon h: the
// first daily run at or after t plus h.
func EndOf(t time.Time, h Horizon) time.Time {
	end := h.After(t).UTC()
	run := time.Date(end.Year(), end.Month(), end.Day(), RunHour, 0, 0, 0, time.UTC)
	if run.Before(end) {
		run = run.AddDate(0, 0, 1)
	}
	return run
}

func (s Segment) String() string { return fmt.Sprintf("segment %s", s.ID) }
