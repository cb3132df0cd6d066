// Package action is the platform's event log: the Action shape of the API,
// the calendar facts of its `when`, and a Recorder that appends actions to
// the Actions table, either alone (Put) or inside the transaction of the
// change that causes them (Record, TransactItems), each with its scope's
// feed head, which numbers a user's (or, without a user, the tenant's)
// actions in order (feed.go: FeedOf reads a head's stream record). It
// lists actions by user, location or tenant (list.go; keys in store.go).
package action

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"
	// The location's time zone decides a `when`'s day part; Lambda's
	// provided.al2023 image is not guaranteed to ship the zone database.
	_ "time/tzdata"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// EnvironmentProduction is the environment of every action the platform
// records today.
const EnvironmentProduction = "PRODUCTION"

// Action types recorded so far. Types are UPPER_SNAKE; rules match on them.
const (
	// CheckinCreated: a user checked in at a location (POST
	// /users/{userId}/checkins). Metadata: checkinId, type, trigger and,
	// when the user was checked in elsewhere, replacedCheckinId.
	CheckinCreated = "CHECKIN_CREATED"
	// Checkout: a user's check-in ended before it expired. Metadata:
	// checkinId, type, trigger, checkedInAt, durationSeconds and reason
	// (REQUESTED for DELETE /users/{userId}/checkins, CHECKED_IN_ELSEWHERE
	// when a check-in at another location replaced it). Expiry after 30
	// minutes records nothing.
	Checkout = "CHECKOUT"
)

// Types lists every action type the platform records, in one place every
// domain can reach (the domains own their constants: award.ActionGranted,
// pos.ActionOrderCompleted, ...; the rule package's test checks that they
// and the OpenAPI document's ActionType and RuleTrigger agree with this
// list). Rules name one of them as their trigger (RULES_BUDGET_EXCEEDED
// aside: rules never run on it); webhook endpoints name those they take.
var Types = []string{
	CheckinCreated, Checkout,
	"USER_CREATED", "USER_ACTIVATED",
	"AWARD_GRANTED", "AWARD_REDEEMED", "AWARD_REFUNDED", "AWARD_REVOKED", "AWARD_REVERSED",
	"SEGMENT_JOINED", "SEGMENT_LEFT",
	"ORDER_COMPLETED", "TRANSACTION_CREATED", "TRANSACTION_REFUNDED", "BALANCE_CREDITED",
	"LOCATION_CREATED", "LOCATION_UPDATED",
	"TENANT_UPDATED",
	"RULES_BUDGET_EXCEEDED",
	"WEBHOOK_EXHAUSTED", "WEBHOOK_ENDPOINT_DISABLED",
}

// Day parts of When.Daypart, by the hour of the local time (see DaypartOf).
const (
	Morning   = "morning"
	Afternoon = "afternoon"
	Evening   = "evening"
	Night     = "night"
)

// Action is one entry of the event log, in the API's shape plus its `_id`.
type Action struct {
	ID          string         `json:"_id" dynamodbav:"id"`
	Type        string         `json:"type" dynamodbav:"type"`
	TenantID    string         `json:"tenantId" dynamodbav:"tenantId"`
	When        When           `json:"when" dynamodbav:"when"`
	Metadata    map[string]any `json:"metadata" dynamodbav:"metadata"`
	Context     Context        `json:"context" dynamodbav:"context"`
	Environment string         `json:"environment" dynamodbav:"environment"`
}

// When is the moment of an action with the calendar facts rules and reports
// group by, taken in the time zone of the action's location (UTC when there
// is none).
type When struct {
	// Timestamp is the instant in UTC (ISO 8601 with milliseconds).
	Timestamp string `json:"timestamp" dynamodbav:"timestamp"`
	// MonthOfYear is 1 (January) to 12.
	MonthOfYear int `json:"monthofyear" dynamodbav:"monthofyear"`
	// WeekOfYear is the ISO 8601 week, 1 to 53.
	WeekOfYear int `json:"weekofyear" dynamodbav:"weekofyear"`
	// DayOfMonth is 1 to 31.
	DayOfMonth int `json:"dayofmonth" dynamodbav:"dayofmonth"`
	// DayOfWeek is the ISO 8601 weekday: 1 (Monday) to 7 (Sunday).
	DayOfWeek int `json:"dayofweek" dynamodbav:"dayofweek"`
	// Daypart is morning, afternoon, evening or night.
	Daypart string `json:"daypart" dynamodbav:"daypart"`
}

// Context names who and where an action concerns.
type Context struct {
	Tenant   TenantRef    `json:"tenant" dynamodbav:"tenant"`
	User     *UserRef     `json:"user,omitempty" dynamodbav:"user,omitempty"`
	Location *LocationRef `json:"location,omitempty" dynamodbav:"location,omitempty"`
	// Tags label the action itself (none are set by the platform yet).
	Tags []string `json:"tags" dynamodbav:"tags"`
}

// TenantRef is the tenant of an action.
type TenantRef struct {
	ID    string `json:"_id" dynamodbav:"id"`
	Title string `json:"title" dynamodbav:"title"`
}

// UserRef is the user an action concerns.
type UserRef struct {
	ID              string `json:"_id" dynamodbav:"id"`
	Name            string `json:"name" dynamodbav:"name"`
	PrimaryPlatform string `json:"primaryPlatform" dynamodbav:"primaryPlatform"`
}

// LocationRef is the location an action happened at.
type LocationRef struct {
	ID      string    `json:"_id" dynamodbav:"id"`
	Title   string    `json:"title" dynamodbav:"title"`
	Geo     []float64 `json:"geo" dynamodbav:"geo"`
	Regions []string  `json:"regions" dynamodbav:"regions"`
	Tags    []string  `json:"tags" dynamodbav:"tags"`
}

// typePattern is an action type (UPPER_SNAKE_CASE), compiled on first use
// so that a cold start does not pay for it.
var typePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`) })

// idSeq orders the ids one process makes within one millisecond.
var idSeq atomic.Uint32

// NewID returns a new action id of 24 hex characters: the wall clock in
// milliseconds (6 bytes), a per-process sequence (2 bytes) and 4 random
// bytes. Actions sort by timestamp, then id, so the actions one request
// records at one instant (USER_CREATED then USER_ACTIVATED, ORDER_COMPLETED
// then CHECKOUT) list in the order they were made.
func NewID() string {
	var b [12]byte
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	binary.BigEndian.PutUint16(b[6:8], uint16(idSeq.Add(1)))
	_, _ = rand.Read(b[8:])
	return hex.EncodeToString(b[:])
}

// Zone returns the time zone named (an IANA name such as Europe/London), or
// UTC when the name is empty or unknown.
func Zone(name string) *time.Location {
	if name == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// WhenAt returns the When of instant t seen in zone loc (nil means UTC).
func WhenAt(t time.Time, loc *time.Location) When {
	if loc == nil {
		loc = time.UTC
	}
	local := t.In(loc)
	_, week := local.ISOWeek()
	dow := int(local.Weekday())
	if dow == 0 {
		dow = 7
	}
	return When{
		Timestamp:   clock.Stamp(t),
		MonthOfYear: int(local.Month()),
		WeekOfYear:  week,
		DayOfMonth:  local.Day(),
		DayOfWeek:   dow,
		Daypart:     DaypartOf(local.Hour()),
	}
}

// DaypartOf returns the day part of a local hour: morning 05:00-11:59,
// afternoon 12:00-16:59, evening 17:00-20:59, night 21:00-04:59.
func DaypartOf(hour int) string {
	switch {
	case hour >= 5 && hour < 12:
		return Morning
	case hour >= 12 && hour < 17:
		return Afternoon
	case hour >= 17 && hour < 21:
		return Evening
	default:
		return Night
	}
}

// normalize fills the defaults of a (copied) action and checks what the
// store relies on: an UPPER_SNAKE type, the tenant, a parseable timestamp.
func (a *Action) normalize() error {
	if a.ID == "" {
		a.ID = NewID()
	}
	if !typePattern().MatchString(a.Type) {
		return apierr.Invalid("type", "must be UPPER_SNAKE, got %q", a.Type)
	}
	if a.TenantID == "" {
		return apierr.Invalid("tenantId", "is required")
	}
	if a.Context.Tenant.ID == "" {
		a.Context.Tenant.ID = a.TenantID
	}
	if a.Context.Tenant.ID != a.TenantID {
		return apierr.Invalid("context.tenant._id", "must be the action's tenantId")
	}
	if _, err := time.Parse(clock.Format, a.When.Timestamp); err != nil {
		return apierr.Invalid("when.timestamp", "must be a UTC timestamp such as 2024-05-01T12:30:00.000Z")
	}
	if a.Environment == "" {
		a.Environment = EnvironmentProduction
	}
	if a.Metadata == nil {
		a.Metadata = map[string]any{}
	}
	if a.Context.Tags == nil {
		a.Context.Tags = []string{}
	}
	if l := a.Context.Location; l != nil {
		if l.Geo == nil {
			l.Geo = []float64{}
		}
		if l.Regions == nil {
			l.Regions = []string{}
		}
		if l.Tags == nil {
			l.Tags = []string{}
		}
	}
	return nil
}

func (a *Action) String() string { return fmt.Sprintf("%s %s", a.Type, a.ID) }
