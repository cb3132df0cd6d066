// Package location is the locations domain: a tenant's stores and
// restaurants with their opening hours, services, branding, tags, regions
// and zones, and the tag groups an app shows as filters. It holds the types,
// their validation, the DynamoDB store (the only place that builds this
// domain's keys), the service other domains call (check-ins, the location
// import and export jobs) and the HTTP handlers of the locations function.
package location

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // timezone names are checked without relying on the host's zoneinfo
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Location states.
const (
	StatePending = "PENDING"
	StateActive  = "ACTIVE"
	StateRetired = "RETIRED"
)

// DefaultState is the state of a location created without one: a merchant
// who adds a location expects it to show in the app; PENDING is the opt-in
// state for locations that are not open yet.
const DefaultState = StateActive

// Services are the keys a location's `services` object may hold (spec
// Location), each a boolean.
var Services = []string{
	"checkins", "offline_checkin", "pre_order", "book_table", "book_room", "tab",
	"order_to_table", "pay_at_table", "pay_at_table_nfc", "delivery", "dine_in",
}

// Weekdays are the keys of `openingHours`.
var Weekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}

// Size limits of a location's fields.
const (
	MaxTitle         = 200
	MaxDescription   = 10000
	MaxHTML          = 10000
	MaxURL           = 2048
	MaxShortText     = 200
	MaxListItems     = 100
	MaxListItem      = 100
	MaxButtons       = 20
	MaxLinks         = 20
	MaxBeacons       = 100
	MaxZones         = 100
	MaxZoneTables    = 500
	MaxNotes         = 20
	MaxExtendedBytes = 16 << 10
	MaxBoundaryBytes = 128 << 10
	// MaxLocationBytes bounds a whole location (as JSON), well under
	// DynamoDB's 400 KB item limit.
	MaxLocationBytes = 300 << 10
)

// Sentinel errors of the locations domain.
var (
	ErrNotFound         = apierr.New(apierr.NotFound, "location not found")
	ErrTagGroupNotFound = apierr.New(apierr.NotFound, "tag group not found")
	ErrConcurrentUpdate = apierr.New(apierr.Conflict, "the location was changed by another request; retry")
	ErrTooManyTagGroups = apierr.New(apierr.ValidationFailed, "a tenant has at most 100 tag groups")
	ErrTagGroupConflict = apierr.New(apierr.Conflict, "the tag group was changed by other requests; retry")
)

// Location is a tenant's store or restaurant, as the API returns it and as
// it is stored. Every field of the API's Location is here, plus `extended`
// (tenant extensions) and `deliveryBoundaries` (free JSON), which the CSV
// import and export carry. Absent optional fields and empty strings are
// omitted from responses; an empty list or object the client sent is kept
// and returned (json omitzero, dynamodbav omitempty omit only nil).
type Location struct {
	ID       string `json:"_id" dynamodbav:"id"`
	TenantID string `json:"tenantId" dynamodbav:"tenantId"`
	Created  string `json:"created,omitempty" dynamodbav:"created"`
	Updated  string `json:"updated,omitempty" dynamodbav:"updated"`

	Title                       string            `json:"title" dynamodbav:"title"`
	Description                 string            `json:"description,omitempty" dynamodbav:"description,omitempty"`
	State                       string            `json:"state,omitempty" dynamodbav:"state"`
	MainImageURL                string            `json:"mainImageUrl,omitempty" dynamodbav:"mainImageUrl,omitempty"`
	ListingImageURL             string            `json:"listingImageUrl,omitempty" dynamodbav:"listingImageUrl,omitempty"`
	MapPinImageURL              string            `json:"mapPinImageUrl,omitempty" dynamodbav:"mapPinImageUrl,omitempty"`
	OpeningHours                map[string]string `json:"openingHours,omitzero" dynamodbav:"openingHours,omitempty"`
	AlternativeOpeningHoursText string            `json:"alternativeOpeningHoursText,omitempty" dynamodbav:"alternativeOpeningHoursText,omitempty"`
	Facilities                  []string          `json:"facilities,omitzero" dynamodbav:"facilities,omitempty"`
	Services                    map[string]bool   `json:"services,omitzero" dynamodbav:"services,omitempty"`
	Buttons                     []Button          `json:"buttons,omitzero" dynamodbav:"buttons,omitempty"`
	Links                       map[string]Link   `json:"links,omitzero" dynamodbav:"links,omitempty"`
	VATNumber                   string            `json:"VATnumber,omitempty" dynamodbav:"VATnumber,omitempty"`
	Address                     *Address          `json:"address,omitempty" dynamodbav:"address,omitempty"`
	Contacts                    *Contacts         `json:"contacts,omitempty" dynamodbav:"contacts,omitempty"`
	Beacons                     []Beacon          `json:"beacons,omitzero" dynamodbav:"beacons,omitempty"`
	Ordering                    *Ordering         `json:"ordering,omitempty" dynamodbav:"ordering,omitempty"`
	// Geo is [longitude, latitude].
	Geo      []float64       `json:"geo" dynamodbav:"geo"`
	Regions  []string        `json:"regions,omitzero" dynamodbav:"regions,omitempty"`
	Tags     []string        `json:"tags,omitzero" dynamodbav:"tags,omitempty"`
	Timezone string          `json:"timezone,omitempty" dynamodbav:"timezone,omitempty"`
	Zones    map[string]Zone `json:"zones,omitzero" dynamodbav:"zones,omitempty"`
	// Extended holds tenant-specific extensions (a free JSON object).
	Extended map[string]any `json:"extended,omitzero" dynamodbav:"extended,omitempty"`
	// DeliveryBoundaries is free JSON (for example GeoJSON polygons).
	DeliveryBoundaries RawJSON `json:"deliveryBoundaries,omitempty" dynamodbav:"deliveryBoundaries,omitempty"`

	// Distance is the great-circle distance in metres from the search
	// centre of a list with lat and long; it is never stored.
	Distance *float64 `json:"distance,omitempty" dynamodbav:"-"`
}

// Button is a call to action shown on a location.
type Button struct {
	Title      string            `json:"title,omitempty" dynamodbav:"title,omitempty"`
	Style      string            `json:"style,omitempty" dynamodbav:"style,omitempty"`
	Action     string            `json:"action,omitempty" dynamodbav:"action,omitempty"`
	Properties *ButtonProperties `json:"properties,omitempty" dynamodbav:"properties,omitempty"`
}

// ButtonProperties are a button's parameters.
type ButtonProperties struct {
	URL string `json:"url,omitempty" dynamodbav:"url,omitempty"`
}

// Link is a third-party link entry of a location (keyed by provider).
type Link struct {
	Title      string `json:"title,omitempty" dynamodbav:"title,omitempty"`
	Parameters string `json:"parameters,omitempty" dynamodbav:"parameters,omitempty"`
	Enabled    bool   `json:"enabled" dynamodbav:"enabled"`
}

// Address is a location's postal address. It carries both the API's
// Location address keys (address, address2, town, postcode, summary,
// fullAddress, googleMapsShortUrl) and the CSV import keys (line1, line2,
// city, region, postalCode); country is common to both.
type Address struct {
	Address            string `json:"address,omitempty" dynamodbav:"address,omitempty"`
	Address2           string `json:"address2,omitempty" dynamodbav:"address2,omitempty"`
	Town               string `json:"town,omitempty" dynamodbav:"town,omitempty"`
	Country            string `json:"country,omitempty" dynamodbav:"country,omitempty"`
	Postcode           string `json:"postcode,omitempty" dynamodbav:"postcode,omitempty"`
	Summary            string `json:"summary,omitempty" dynamodbav:"summary,omitempty"`
	FullAddress        string `json:"fullAddress,omitempty" dynamodbav:"fullAddress,omitempty"`
	GoogleMapsShortURL string `json:"googleMapsShortUrl,omitempty" dynamodbav:"googleMapsShortUrl,omitempty"`
	Line1              string `json:"line1,omitempty" dynamodbav:"line1,omitempty"`
	Line2              string `json:"line2,omitempty" dynamodbav:"line2,omitempty"`
	City               string `json:"city,omitempty" dynamodbav:"city,omitempty"`
	Region             string `json:"region,omitempty" dynamodbav:"region,omitempty"`
	PostalCode         string `json:"postalCode,omitempty" dynamodbav:"postalCode,omitempty"`
}

// Contacts are a location's e-mail address and phone number.
type Contacts struct {
	Email string `json:"email,omitempty" dynamodbav:"email,omitempty"`
	Phone string `json:"phone,omitempty" dynamodbav:"phone,omitempty"`
}

// Beacon is a Bluetooth beacon at a location; every field is a string.
type Beacon struct {
	Enabled string `json:"enabled,omitempty" dynamodbav:"enabled,omitempty"`
	Minor   string `json:"minor,omitempty" dynamodbav:"minor,omitempty"`
	Major   string `json:"major,omitempty" dynamodbav:"major,omitempty"`
	UUID    string `json:"uuid,omitempty" dynamodbav:"uuid,omitempty"`
}

// Ordering holds a location's ordering configuration.
type Ordering struct {
	ExtendedFields *ExtendedFields `json:"extendedFields,omitempty" dynamodbav:"extendedFields,omitempty"`
}

// ExtendedFields are the extra ordering fields per ordering kind.
type ExtendedFields struct {
	Preorder     *NoteFields `json:"PREORDER,omitempty" dynamodbav:"PREORDER,omitempty"`
	OrderToTable *NoteFields `json:"ORDER_TO_TABLE,omitempty" dynamodbav:"ORDER_TO_TABLE,omitempty"`
}

// NoteFields lists the notes a customer may add to an order.
type NoteFields struct {
	Note []Note `json:"note" dynamodbav:"note"`
}

// Note is one order note field.
type Note struct {
	Title       string `json:"title,omitempty" dynamodbav:"title,omitempty"`
	Description string `json:"description,omitempty" dynamodbav:"description,omitempty"`
}

// Zone is a named set of tables at a location (the zones map is keyed by
// zone name).
type Zone struct {
	Name   string   `json:"name,omitempty" dynamodbav:"name,omitempty"`
	Tables []string `json:"tables,omitempty" dynamodbav:"tables,omitempty"`
}

// RawJSON is a free JSON value. It is stored in DynamoDB as its compact
// JSON text, so any value (object, array, number) round-trips exactly.
type RawJSON []byte

// MarshalJSON returns the value itself (null when empty).
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// UnmarshalJSON keeps a copy of the value; null empties it.
func (r *RawJSON) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*r = nil
		return nil
	}
	*r = append((*r)[:0], b...)
	return nil
}

// MarshalDynamoDBAttributeValue stores the JSON text as a string.
func (r RawJSON) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if len(r) == 0 {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	return &types.AttributeValueMemberS{Value: string(r)}, nil
}

// UnmarshalDynamoDBAttributeValue reads the JSON text back.
func (r *RawJSON) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		*r = RawJSON(v.Value)
	case *types.AttributeValueMemberNULL:
		*r = nil
	default:
		return fmt.Errorf("deliveryBoundaries: unexpected attribute type %T", av)
	}
	return nil
}

// identityFields are the location's identity: the server assigns them. A
// PUT body may repeat them when they equal the addressed location's values
// (so a client can send back what GET returned); a POST body may repeat
// the caller's tenantId, never an _id.
var identityFields = map[string]bool{"_id": true, "tenantId": true}

// serverManaged are the fields the server maintains; a body may carry them
// (whatever their value) and they are ignored.
var serverManaged = map[string]bool{"created": true, "updated": true, "distance": true}

// writable are the JSON names of the fields a client may set (listed on
// first use, not at every cold start).
var writable = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, f := range jsonFields(Location{}) {
		if !identityFields[f] && !serverManaged[f] {
			out[f] = true
		}
	}
	return out
})

// CheckFields rejects unknown top-level fields of a body (exact,
// case-sensitive names). Identity and server-managed fields are known;
// CreateFields and UpdateFields decide what they may hold.
func CheckFields(fields map[string]json.RawMessage) error {
	for _, k := range sortedKeys(fields) {
		if !writable()[k] && !identityFields[k] && !serverManaged[k] {
			return apierr.Invalid(k, "unknown field")
		}
		if notNullable[k] && isNull(fields[k]) {
			return apierr.Invalid(k, "cannot be null")
		}
	}
	return nil
}

// notNullable are the top-level fields a body may not send as null: the
// required ones, the identity, and the state (which has no value to
// remove). null in any other field means "no value": POST leaves the field
// out, PUT removes it.
var notNullable = map[string]bool{"_id": true, "tenantId": true, "title": true, "geo": true, "state": true}

// isNull reports whether a raw JSON value is null.
func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// withoutNulls returns fields without its null values.
func withoutNulls(fields map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		if !isNull(v) {
			out[k] = v
		}
	}
	return out
}

// CreateFields returns the fields of a POST /locations body that create
// the location: `_id` is VALIDATION_FAILED (the server assigns ids),
// `tenantId` must be the caller's tenant, and `created`, `updated` and
// `distance` are dropped, as are fields sent as null. fields is not
// modified.
func CreateFields(fields map[string]json.RawMessage, tenantID string) (map[string]json.RawMessage, error) {
	if err := CheckFields(fields); err != nil {
		return nil, err
	}
	if _, ok := fields["_id"]; ok {
		return nil, apierr.Invalid("_id", "is assigned by the server; leave it out")
	}
	if raw, ok := fields["tenantId"]; ok && !rawStringIs(raw, tenantID) {
		return nil, apierr.Invalid("tenantId", "must be the tenant of the request (x-application-id) or left out")
	}
	return withoutNulls(withoutServerFields(fields)), nil
}

// UpdateFields returns the fields of a PUT /locations/{id} body that
// change the location: `_id` and `tenantId` must equal the addressed
// location's (else VALIDATION_FAILED "cannot be changed"), and `created`,
// `updated` and `distance` are dropped. fields is not modified.
func UpdateFields(fields map[string]json.RawMessage, tenantID, id string) (map[string]json.RawMessage, error) {
	if err := CheckFields(fields); err != nil {
		return nil, err
	}
	if raw, ok := fields["_id"]; ok && !rawStringIs(raw, id) {
		return nil, apierr.Invalid("_id", "cannot be changed")
	}
	if raw, ok := fields["tenantId"]; ok && !rawStringIs(raw, tenantID) {
		return nil, apierr.Invalid("tenantId", "cannot be changed")
	}
	return withoutServerFields(fields), nil
}

// rawStringIs reports whether raw is the JSON string want.
func rawStringIs(raw json.RawMessage, want string) bool {
	var s string
	b := bytes.TrimSpace(raw)
	return len(b) > 0 && b[0] == '"' && json.Unmarshal(b, &s) == nil && s == want
}

// withoutServerFields returns a copy of fields without the identity and
// server-managed fields.
func withoutServerFields(fields map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		if !identityFields[k] && !serverManaged[k] {
			out[k] = v
		}
	}
	return out
}

// The patterns are compiled on first use, not at every cold start (their
// counted repetitions are slow to compile).
var (
	upperSnakeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}$`) })
	providerRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,49}$`) })
	phoneRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9+()./ -]{3,50}$`) })
	serviceSet   = toSet(Services)
	weekdaySet   = toSet(Weekdays)
)

// Validate checks a location's fields by type, enum and size, and
// normalises them: strings trimmed, list items de-duplicated, empty objects
// dropped, deliveryBoundaries compacted. An empty state is allowed here (the
// service fills in the default or keeps the current one). It returns the
// first problem ValidateAll finds.
func (l *Location) Validate() error {
	if errs := l.ValidateAll(); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// ValidateAll is Validate returning every problem found (at most one per
// field), each a VALIDATION_FAILED *apierr.Error whose message starts with
// the field's full path (such as links.ubereats.title, tags[2] or
// zones.bar.tables[0]), in field order. The size of the whole location is
// only checked when there is no other problem.
func (l *Location) ValidateAll() []error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	l.Title = strings.TrimSpace(l.Title)
	if l.Title == "" {
		add(apierr.Invalid("title", "is required"))
	} else {
		add(checkText("title", l.Title, MaxTitle, false))
	}
	add(checkText("description", l.Description, MaxDescription, true))
	switch l.State {
	case "", StatePending, StateActive, StateRetired:
	default:
		add(apierr.Invalid("state", "must be PENDING, ACTIVE or RETIRED"))
	}
	for _, img := range []struct {
		field string
		v     *string
	}{{"mainImageUrl", &l.MainImageURL}, {"listingImageUrl", &l.ListingImageURL}, {"mapPinImageUrl", &l.MapPinImageURL}} {
		*img.v = strings.TrimSpace(*img.v)
		add(checkWebURL(img.field, *img.v))
	}
	for _, k := range sortedKeys(l.OpeningHours) {
		if !weekdaySet[k] {
			add(apierr.Invalid("openingHours."+trunc(k), "is not a day: the keys are monday to sunday (lower case)"))
			continue
		}
		add(checkText("openingHours."+k, l.OpeningHours[k], MaxShortText, false))
	}
	add(checkText("alternativeOpeningHoursText", l.AlternativeOpeningHoursText, MaxHTML, true))
	var err error
	l.Facilities, err = checkList("facilities", l.Facilities)
	add(err)
	for _, k := range sortedKeys(l.Services) {
		if !serviceSet[k] {
			add(apierr.Invalid("services."+trunc(k), "unknown service: one of %s", strings.Join(Services, ", ")))
		}
	}
	l.validateButtons(add)
	l.validateLinks(add)
	add(checkText("VATnumber", l.VATNumber, 50, false))
	l.validateAddress(add)
	l.validateContacts(add)
	l.validateBeacons(add)
	l.validateOrdering(add)
	add(CheckGeo(l.Geo))
	l.Regions, err = checkList("regions", l.Regions)
	add(err)
	l.Tags, err = checkList("tags", l.Tags)
	add(err)
	add(checkTimezone(l.Timezone))
	l.validateZones(add)
	if l.Extended != nil {
		b, err := json.Marshal(l.Extended)
		switch {
		case err != nil:
			add(apierr.Invalid("extended", "must be a JSON object"))
		case len(b) > MaxExtendedBytes:
			add(apierr.Invalid("extended", "must be at most %d bytes of JSON", MaxExtendedBytes))
		}
	}
	if len(l.DeliveryBoundaries) > 0 {
		var buf bytes.Buffer
		switch {
		case json.Compact(&buf, l.DeliveryBoundaries) != nil:
			add(apierr.Invalid("deliveryBoundaries", "must be valid JSON"))
		case buf.Len() > MaxBoundaryBytes:
			add(apierr.Invalid("deliveryBoundaries", "must be at most %d bytes of JSON", MaxBoundaryBytes))
		default:
			l.DeliveryBoundaries = RawJSON(buf.Bytes())
		}
	}
	if len(errs) > 0 {
		return errs
	}
	b, err := json.Marshal(l)
	if err != nil {
		return []error{apierr.Invalid("", "the location cannot be encoded as JSON")}
	}
	if len(b) > MaxLocationBytes {
		return []error{apierr.Invalid("", "the location is larger than %d bytes of JSON", MaxLocationBytes)}
	}
	return nil
}

// CheckGeo checks a [longitude, latitude] pair.
func CheckGeo(geo []float64) error {
	if len(geo) == 0 {
		return apierr.Invalid("geo", "is required: [longitude, latitude]")
	}
	if len(geo) != 2 {
		return apierr.Invalid("geo", "must be exactly 2 numbers: [longitude, latitude]")
	}
	if math.IsNaN(geo[0]) || geo[0] < -180 || geo[0] > 180 {
		return apierr.Invalid("geo", "longitude (first number) must be from -180 to 180")
	}
	if math.IsNaN(geo[1]) || geo[1] < -90 || geo[1] > 90 {
		return apierr.Invalid("geo", "latitude (second number) must be from -90 to 90")
	}
	return nil
}

// CheckTransition returns VALIDATION_FAILED unless a location may go from
// state from to state to: PENDING -> ACTIVE, ACTIVE -> RETIRED and
// RETIRED -> ACTIVE (and staying in the same state).
func CheckTransition(from, to string) error {
	if from == to || from == "" {
		return nil
	}
	switch {
	case from == StatePending && to == StateActive,
		from == StateActive && to == StateRetired,
		from == StateRetired && to == StateActive:
		return nil
	}
	return apierr.Invalid("state", "a location cannot go from %s to %s (allowed: PENDING to ACTIVE, ACTIVE to RETIRED, RETIRED to ACTIVE)", from, to)
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *Location) validateButtons(add func(error)) {
	if len(l.Buttons) > MaxButtons {
		add(apierr.Invalid("buttons", "at most %d buttons", MaxButtons))
		return
	}
	for i := range l.Buttons {
		b := &l.Buttons[i]
		at := fmt.Sprintf("buttons[%d]", i)
		add(checkText(at+".title", b.Title, MaxShortText, false))
		if b.Style != "" && !upperSnakeRe().MatchString(b.Style) {
			add(apierr.Invalid(at+".style", "must be an UPPER_SNAKE value such as PRIMARY"))
		}
		if b.Action != "" && !upperSnakeRe().MatchString(b.Action) {
			add(apierr.Invalid(at+".action", "must be an UPPER_SNAKE value such as PREORDER"))
		}
		if b.Properties != nil {
			add(checkAnyURL(at+".properties.url", b.Properties.URL))
			if *b.Properties == (ButtonProperties{}) {
				b.Properties = nil
			}
		}
	}
}

func (l *Location) validateLinks(add func(error)) {
	if len(l.Links) > MaxLinks {
		add(apierr.Invalid("links", "at most %d link entries", MaxLinks))
		return
	}
	for _, k := range sortedKeys(l.Links) {
		v := l.Links[k]
		if !providerRe().MatchString(k) {
			add(apierr.Invalid("links", "key %q must be a provider name of letters, digits, _ or - (at most 50)", trunc(k)))
			continue
		}
		add(checkText("links."+k+".title", v.Title, MaxShortText, false))
		add(checkText("links."+k+".parameters", v.Parameters, MaxURL, false))
	}
}

func (l *Location) validateAddress(add func(error)) {
	a := l.Address
	if a == nil {
		return
	}
	for _, f := range []struct {
		field string
		v     *string
	}{
		{"address", &a.Address}, {"address2", &a.Address2}, {"town", &a.Town}, {"country", &a.Country},
		{"postcode", &a.Postcode}, {"summary", &a.Summary}, {"fullAddress", &a.FullAddress},
		{"line1", &a.Line1}, {"line2", &a.Line2}, {"city", &a.City}, {"region", &a.Region}, {"postalCode", &a.PostalCode},
	} {
		*f.v = strings.TrimSpace(*f.v)
		add(checkText("address."+f.field, *f.v, 500, false))
	}
	a.GoogleMapsShortURL = strings.TrimSpace(a.GoogleMapsShortURL)
	add(checkWebURL("address.googleMapsShortUrl", a.GoogleMapsShortURL))
	if *a == (Address{}) {
		l.Address = nil
	}
}

func (l *Location) validateContacts(add func(error)) {
	c := l.Contacts
	if c == nil {
		return
	}
	c.Email, c.Phone = strings.TrimSpace(c.Email), strings.TrimSpace(c.Phone)
	if c.Email != "" {
		a, err := mail.ParseAddress(c.Email)
		if err != nil || a.Address != c.Email || len(c.Email) > 254 {
			add(apierr.Invalid("contacts.email", "must be an e-mail address"))
		}
	}
	if c.Phone != "" && !phoneRe().MatchString(c.Phone) {
		add(apierr.Invalid("contacts.phone", "must be a phone number (digits, spaces, + - ( ) . /; 3 to 50 characters)"))
	}
	if *c == (Contacts{}) {
		l.Contacts = nil
	}
}

func (l *Location) validateBeacons(add func(error)) {
	if len(l.Beacons) > MaxBeacons {
		add(apierr.Invalid("beacons", "at most %d beacons", MaxBeacons))
		return
	}
	for i, b := range l.Beacons {
		at := fmt.Sprintf("beacons[%d]", i)
		add(firstErr(
			checkText(at+".enabled", b.Enabled, MaxListItem, false),
			checkText(at+".minor", b.Minor, MaxListItem, false),
			checkText(at+".major", b.Major, MaxListItem, false),
			checkText(at+".uuid", b.UUID, MaxListItem, false),
		))
	}
}

func (l *Location) validateOrdering(add func(error)) {
	o := l.Ordering
	if o == nil {
		return
	}
	if o.ExtendedFields != nil {
		for _, k := range []struct {
			kind string
			nf   *NoteFields
		}{{"PREORDER", o.ExtendedFields.Preorder}, {"ORDER_TO_TABLE", o.ExtendedFields.OrderToTable}} {
			nf := k.nf
			if nf == nil {
				continue
			}
			field := "ordering.extendedFields." + k.kind + ".note"
			if len(nf.Note) > MaxNotes {
				add(apierr.Invalid(field, "at most %d notes", MaxNotes))
				continue
			}
			for i, n := range nf.Note {
				at := fmt.Sprintf("%s[%d]", field, i)
				add(checkText(at+".title", n.Title, MaxShortText, false))
				add(checkText(at+".description", n.Description, 2000, true))
			}
			if nf.Note == nil {
				nf.Note = []Note{}
			}
		}
		if o.ExtendedFields.Preorder == nil && o.ExtendedFields.OrderToTable == nil {
			o.ExtendedFields = nil
		}
	}
	if o.ExtendedFields == nil {
		l.Ordering = nil
	}
}

func (l *Location) validateZones(add func(error)) {
	if len(l.Zones) > MaxZones {
		add(apierr.Invalid("zones", "at most %d zones", MaxZones))
		return
	}
	for _, k := range sortedKeys(l.Zones) {
		z := l.Zones[k]
		if strings.TrimSpace(k) == "" {
			add(apierr.Invalid("zones", "zone names must not be empty"))
			continue
		}
		if ae, bad := apierr.As(checkText("", k, MaxListItem, false)); bad {
			add(apierr.Invalid("zones", "zone name %q %s", trunc(k), ae.Message))
			continue
		}
		add(checkText("zones."+k+".name", z.Name, MaxListItem, false))
		if len(z.Tables) > MaxZoneTables {
			add(apierr.Invalid("zones."+k+".tables", "at most %d tables", MaxZoneTables))
			continue
		}
		for i, t := range z.Tables {
			at := fmt.Sprintf("zones.%s.tables[%d]", k, i)
			if strings.TrimSpace(t) == "" {
				add(apierr.Invalid(at, "must not be empty"))
				break
			}
			if err := checkText(at, t, MaxListItem, false); err != nil {
				add(err)
				break
			}
		}
	}
}

func checkTimezone(tz string) error {
	if tz == "" {
		return nil
	}
	if len(tz) > 64 || tz == "Local" {
		return apierr.Invalid("timezone", "must be an IANA time zone name such as Europe/London")
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return apierr.Invalid("timezone", "must be an IANA time zone name such as Europe/London")
	}
	return nil
}

// checkText checks the length (in characters) of a text field and that it
// holds no control characters (multiline allows newlines and tabs).
func checkText(field, v string, max int, multiline bool) error {
	if !utf8.ValidString(v) {
		return apierr.Invalid(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(v) > max {
		return apierr.Invalid(field, "must be at most %d characters", max)
	}
	for _, r := range v {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			return apierr.Invalid(field, "must not contain control characters")
		}
	}
	return nil
}

// checkList checks a list of short strings and returns it trimmed and
// without repeats.
func checkList(field string, list []string) ([]string, error) {
	if len(list) > MaxListItems {
		return nil, apierr.Invalid(field, "at most %d items", MaxListItems)
	}
	if list == nil {
		return nil, nil
	}
	out := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, v := range list {
		v = strings.TrimSpace(v)
		at := fmt.Sprintf("%s[%d]", field, i)
		if v == "" {
			return nil, apierr.Invalid(at, "must not be empty")
		}
		if err := checkText(at, v, MaxListItem, false); err != nil {
			return nil, err
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil // an empty list sent stays empty (not absent)
}

// checkWebURL accepts "" or an absolute http(s) URL of at most MaxURL bytes.
func checkWebURL(field, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if len(v) > MaxURL || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(v, " \t\r\n") {
		return apierr.Invalid(field, "must be an absolute http or https URL of at most %d characters", MaxURL)
	}
	return nil
}

// checkAnyURL accepts "" or an absolute URL of any scheme (web or app deep
// link) of at most MaxURL bytes.
func checkAnyURL(field, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if len(v) > MaxURL || err != nil || u.Scheme == "" || strings.ContainsAny(v, " \t\r\n") {
		return apierr.Invalid(field, "must be an absolute URL (web or app link) of at most %d characters", MaxURL)
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// sortedKeys returns a map's keys in order (problems are reported in a
// stable order).
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func toSet(list []string) map[string]bool {
	out := make(map[string]bool, len(list))
	for _, v := range list {
		out[v] = true
	}
	return out
}

// jsonFields returns the JSON names of a struct's fields.
func jsonFields(v any) []string {
	var out []string
	t := reflect.TypeOf(v)
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}
