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
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
	_ "time/tzdata" // timezone names are checked without relying on the host's zoneinfo
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/apierr"
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
)

// Location is a tenant's store or restaurant, as the API returns it and as
// it is stored. Every field of the spec's Location is here, plus `extended`
// (tenant extensions) and `deliveryBoundaries` (free JSON), which the CSV
// import and export carry. Empty optional fields are omitted from responses.
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
	OpeningHours                map[string]string `json:"openingHours,omitempty" dynamodbav:"openingHours,omitempty"`
	AlternativeOpeningHoursText string            `json:"alternativeOpeningHoursText,omitempty" dynamodbav:"alternativeOpeningHoursText,omitempty"`
	Facilities                  []string          `json:"facilities,omitempty" dynamodbav:"facilities,omitempty"`
	Services                    map[string]bool   `json:"services,omitempty" dynamodbav:"services,omitempty"`
	Buttons                     []Button          `json:"buttons,omitempty" dynamodbav:"buttons,omitempty"`
	Links                       map[string]Link   `json:"links,omitempty" dynamodbav:"links,omitempty"`
	VATNumber                   string            `json:"VATnumber,omitempty" dynamodbav:"VATnumber,omitempty"`
	Address                     *Address          `json:"address,omitempty" dynamodbav:"address,omitempty"`
	Contacts                    *Contacts         `json:"contacts,omitempty" dynamodbav:"contacts,omitempty"`
	Beacons                     []Beacon          `json:"beacons,omitempty" dynamodbav:"beacons,omitempty"`
	Ordering                    *Ordering         `json:"ordering,omitempty" dynamodbav:"ordering,omitempty"`
	// Geo is [longitude, latitude].
	Geo      []float64       `json:"geo" dynamodbav:"geo"`
	Regions  []string        `json:"regions,omitempty" dynamodbav:"regions,omitempty"`
	Tags     []string        `json:"tags,omitempty" dynamodbav:"tags,omitempty"`
	Timezone string          `json:"timezone,omitempty" dynamodbav:"timezone,omitempty"`
	Zones    map[string]Zone `json:"zones,omitempty" dynamodbav:"zones,omitempty"`
	// Extended holds tenant-specific extensions (a free JSON object).
	Extended map[string]any `json:"extended,omitempty" dynamodbav:"extended,omitempty"`
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

// Address is a location's postal address. It carries both the spec's
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

// readOnly are the fields a client may not set: the server assigns them.
var readOnly = map[string]bool{"_id": true, "tenantId": true, "created": true, "updated": true, "distance": true}

// writable are the JSON names of the fields a client may set.
var writable = func() map[string]bool {
	out := map[string]bool{}
	for _, f := range jsonFields(Location{}) {
		if !readOnly[f] {
			out[f] = true
		}
	}
	return out
}()

// CheckFields rejects read-only and unknown top-level fields of a body
// (exact, case-sensitive names).
func CheckFields(fields map[string]json.RawMessage) error {
	for k := range fields {
		if readOnly[k] {
			return apierr.Invalid(k, "is read-only")
		}
		if !writable[k] {
			return apierr.Invalid(k, "unknown field")
		}
	}
	return nil
}

var (
	upperSnakeRe = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}$`)
	providerRe   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,49}$`)
	phoneRe      = regexp.MustCompile(`^[0-9+()./ -]{3,50}$`)
	serviceSet   = toSet(Services)
	weekdaySet   = toSet(Weekdays)
)

// Validate checks a location's fields by type, enum and size, and
// normalises them: strings trimmed, list items de-duplicated, empty objects
// dropped, deliveryBoundaries compacted. An empty state is allowed here (the
// service fills in the default or keeps the current one).
func (l *Location) Validate() error {
	l.Title = strings.TrimSpace(l.Title)
	if l.Title == "" {
		return apierr.Invalid("title", "is required")
	}
	if err := checkText("title", l.Title, MaxTitle, false); err != nil {
		return err
	}
	if err := checkText("description", l.Description, MaxDescription, true); err != nil {
		return err
	}
	switch l.State {
	case "", StatePending, StateActive, StateRetired:
	default:
		return apierr.Invalid("state", "must be PENDING, ACTIVE or RETIRED")
	}
	for field, v := range map[string]*string{"mainImageUrl": &l.MainImageURL, "listingImageUrl": &l.ListingImageURL, "mapPinImageUrl": &l.MapPinImageURL} {
		*v = strings.TrimSpace(*v)
		if err := checkWebURL(field, *v); err != nil {
			return err
		}
	}
	for k, v := range l.OpeningHours {
		if !weekdaySet[k] {
			return apierr.Invalid("openingHours", "unknown day %q: keys are monday to sunday (lower case)", trunc(k))
		}
		if err := checkText("openingHours."+k, v, MaxShortText, false); err != nil {
			return err
		}
	}
	if err := checkText("alternativeOpeningHoursText", l.AlternativeOpeningHoursText, MaxHTML, true); err != nil {
		return err
	}
	var err error
	if l.Facilities, err = checkList("facilities", l.Facilities); err != nil {
		return err
	}
	for k := range l.Services {
		if !serviceSet[k] {
			return apierr.Invalid("services", "unknown service %q: one of %s", trunc(k), strings.Join(Services, ", "))
		}
	}
	if err := l.validateButtons(); err != nil {
		return err
	}
	if err := l.validateLinks(); err != nil {
		return err
	}
	if err := checkText("VATnumber", l.VATNumber, 50, false); err != nil {
		return err
	}
	if err := l.validateAddress(); err != nil {
		return err
	}
	if err := l.validateContacts(); err != nil {
		return err
	}
	if err := l.validateBeacons(); err != nil {
		return err
	}
	if err := l.validateOrdering(); err != nil {
		return err
	}
	if err := CheckGeo(l.Geo); err != nil {
		return err
	}
	if l.Regions, err = checkList("regions", l.Regions); err != nil {
		return err
	}
	if l.Tags, err = checkList("tags", l.Tags); err != nil {
		return err
	}
	if err := checkTimezone(l.Timezone); err != nil {
		return err
	}
	if err := l.validateZones(); err != nil {
		return err
	}
	if l.Extended != nil {
		b, err := json.Marshal(l.Extended)
		if err != nil {
			return apierr.Invalid("extended", "must be a JSON object")
		}
		if len(b) > MaxExtendedBytes {
			return apierr.Invalid("extended", "must be at most %d bytes of JSON", MaxExtendedBytes)
		}
		if len(l.Extended) == 0 {
			l.Extended = nil
		}
	}
	if len(l.DeliveryBoundaries) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, l.DeliveryBoundaries); err != nil {
			return apierr.Invalid("deliveryBoundaries", "must be valid JSON")
		}
		if buf.Len() > MaxBoundaryBytes {
			return apierr.Invalid("deliveryBoundaries", "must be at most %d bytes of JSON", MaxBoundaryBytes)
		}
		l.DeliveryBoundaries = RawJSON(buf.Bytes())
	}
	b, err := json.Marshal(l)
	if err != nil {
		return apierr.Invalid("", "the location cannot be encoded as JSON")
	}
	if len(b) > MaxLocationBytes {
		return apierr.Invalid("", "the location is larger than %d bytes of JSON", MaxLocationBytes)
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

func (l *Location) validateButtons() error {
	if len(l.Buttons) > MaxButtons {
		return apierr.Invalid("buttons", "at most %d buttons", MaxButtons)
	}
	for i := range l.Buttons {
		b := &l.Buttons[i]
		if err := checkText("buttons.title", b.Title, MaxShortText, false); err != nil {
			return err
		}
		if b.Style != "" && !upperSnakeRe.MatchString(b.Style) {
			return apierr.Invalid("buttons.style", "must be an UPPER_SNAKE value such as PRIMARY")
		}
		if b.Action != "" && !upperSnakeRe.MatchString(b.Action) {
			return apierr.Invalid("buttons.action", "must be an UPPER_SNAKE value such as PREORDER")
		}
		if b.Properties != nil {
			if err := checkAnyURL("buttons.properties.url", b.Properties.URL); err != nil {
				return err
			}
			if *b.Properties == (ButtonProperties{}) {
				b.Properties = nil
			}
		}
	}
	return nil
}

func (l *Location) validateLinks() error {
	if len(l.Links) > MaxLinks {
		return apierr.Invalid("links", "at most %d link entries", MaxLinks)
	}
	for k, v := range l.Links {
		if !providerRe.MatchString(k) {
			return apierr.Invalid("links", "key %q must be a provider name of letters, digits, _ or - (at most 50)", trunc(k))
		}
		if err := checkText("links."+k+".title", v.Title, MaxShortText, false); err != nil {
			return err
		}
		if err := checkText("links."+k+".parameters", v.Parameters, MaxURL, false); err != nil {
			return err
		}
	}
	return nil
}

func (l *Location) validateAddress() error {
	a := l.Address
	if a == nil {
		return nil
	}
	for field, v := range map[string]*string{
		"address": &a.Address, "address2": &a.Address2, "town": &a.Town, "country": &a.Country,
		"postcode": &a.Postcode, "summary": &a.Summary, "fullAddress": &a.FullAddress,
		"line1": &a.Line1, "line2": &a.Line2, "city": &a.City, "region": &a.Region, "postalCode": &a.PostalCode,
	} {
		*v = strings.TrimSpace(*v)
		if err := checkText("address."+field, *v, 500, false); err != nil {
			return err
		}
	}
	a.GoogleMapsShortURL = strings.TrimSpace(a.GoogleMapsShortURL)
	if err := checkWebURL("address.googleMapsShortUrl", a.GoogleMapsShortURL); err != nil {
		return err
	}
	if *a == (Address{}) {
		l.Address = nil
	}
	return nil
}

func (l *Location) validateContacts() error {
	c := l.Contacts
	if c == nil {
		return nil
	}
	c.Email, c.Phone = strings.TrimSpace(c.Email), strings.TrimSpace(c.Phone)
	if c.Email != "" {
		a, err := mail.ParseAddress(c.Email)
		if err != nil || a.Address != c.Email || len(c.Email) > 254 {
			return apierr.Invalid("contacts.email", "must be an e-mail address")
		}
	}
	if c.Phone != "" && !phoneRe.MatchString(c.Phone) {
		return apierr.Invalid("contacts.phone", "must be a phone number (digits, spaces, + - ( ) . /; 3 to 50 characters)")
	}
	if *c == (Contacts{}) {
		l.Contacts = nil
	}
	return nil
}

func (l *Location) validateBeacons() error {
	if len(l.Beacons) > MaxBeacons {
		return apierr.Invalid("beacons", "at most %d beacons", MaxBeacons)
	}
	for _, b := range l.Beacons {
		for field, v := range map[string]string{"enabled": b.Enabled, "minor": b.Minor, "major": b.Major, "uuid": b.UUID} {
			if err := checkText("beacons."+field, v, MaxListItem, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Location) validateOrdering() error {
	o := l.Ordering
	if o == nil {
		return nil
	}
	if o.ExtendedFields != nil {
		for kind, nf := range map[string]*NoteFields{"PREORDER": o.ExtendedFields.Preorder, "ORDER_TO_TABLE": o.ExtendedFields.OrderToTable} {
			if nf == nil {
				continue
			}
			field := "ordering.extendedFields." + kind + ".note"
			if len(nf.Note) > MaxNotes {
				return apierr.Invalid(field, "at most %d notes", MaxNotes)
			}
			for _, n := range nf.Note {
				if err := checkText(field+".title", n.Title, MaxShortText, false); err != nil {
					return err
				}
				if err := checkText(field+".description", n.Description, 2000, true); err != nil {
					return err
				}
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
	return nil
}

func (l *Location) validateZones() error {
	if len(l.Zones) > MaxZones {
		return apierr.Invalid("zones", "at most %d zones", MaxZones)
	}
	for k, z := range l.Zones {
		if strings.TrimSpace(k) == "" {
			return apierr.Invalid("zones", "zone names must not be empty")
		}
		if err := checkText("zones", k, MaxListItem, false); err != nil {
			return err
		}
		if err := checkText("zones."+k+".name", z.Name, MaxListItem, false); err != nil {
			return err
		}
		if len(z.Tables) > MaxZoneTables {
			return apierr.Invalid("zones."+k+".tables", "at most %d tables", MaxZoneTables)
		}
		for _, t := range z.Tables {
			if strings.TrimSpace(t) == "" {
				return apierr.Invalid("zones."+k+".tables", "table names must not be empty")
			}
			if err := checkText("zones."+k+".tables", t, MaxListItem, false); err != nil {
				return err
			}
		}
	}
	return nil
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
	for _, v := range list {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil, apierr.Invalid(field, "items must not be empty")
		}
		if err := checkText(field, v, MaxListItem, false); err != nil {
			return nil, err
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
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
