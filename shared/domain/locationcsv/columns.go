package locationcsv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/csvcell"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// The CSV notation of a location (spec "Import locations from CSV"). Import
// and export use the same columns.
//
//	_id, title, state, description, timezone, VATnumber, mainImageUrl,
//	listingImageUrl, mapPinImageUrl, alternativeOpeningHoursText
//	                               plain text
//	geo_longitude, geo_latitude    numbers (-180..180, -90..90); required with title
//	facilities, regions, tags      lists, items separated by "|"
//	address.<key>                  line1 line2 city region postalCode country, and the
//	                               Location address keys address address2 town postcode
//	                               summary fullAddress googleMapsShortUrl
//	contacts.email, contacts.phone
//	services.<service>             booleans (see parseBool)
//	openingHours.<day>             monday .. sunday, text
//	zones.<N>.name, zones.<N>.tables (a list), zones.<N>.key
//	                               N is a zero-based index; the key of the zone in the
//	                               zones map is key when given, else name
//	links.<provider>.enabled (boolean, see parseBool), .parameters, .title
//	ordering_json, buttons_json, extended_json, beacons_json, deliveryBoundaries_json
//	                               JSON text of the fields ordering, buttons, extended,
//	                               beacons, deliveryBoundaries
//	created, updated, tenantId     read-only: exported, ignored on import
//	locationId, action, error      the results columns: ignored on import, so a results
//	                               file can be corrected and imported again
//
// An empty cell leaves the field absent (on a matched location: clears
// it; a column absent from the header keeps the stored field, see keep.go).
// In lists (and the error column) a
// "|" inside an item is written "\|" and a backslash "\\".

// Column names.
const (
	colID        = "_id"
	colTitle     = "title"
	colLongitude = "geo_longitude"
	colLatitude  = "geo_latitude"
	colCreated   = "created"
	colUpdated   = "updated"
	colTenantID  = "tenantId"

	colLocationID = "locationId"
	colAction     = "action"
	colError      = "error"
)

// ResultColumns are the columns the results file adds to the input's.
var ResultColumns = []string{colLocationID, colAction, colError}

// plainColumns are the text fields, in export order.
var plainColumns = []string{colID, colTitle, "state", "description", "timezone", "VATnumber", "mainImageUrl", "listingImageUrl", "mapPinImageUrl", "alternativeOpeningHoursText"}

var listColumns = []string{"facilities", "regions", "tags"}

var addressKeys = []string{"line1", "line2", "city", "region", "postalCode", "country", "address", "address2", "town", "postcode", "summary", "fullAddress", "googleMapsShortUrl"}

var contactKeys = []string{"email", "phone"}

var jsonColumns = []string{"ordering_json", "buttons_json", "extended_json", "beacons_json", "deliveryBoundaries_json"}

var linkKeys = []string{"enabled", "parameters", "title"}

var zoneKeys = []string{"name", "tables", "key"}

// The patterns are compiled on first use, not at every cold start.
var (
	providerRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,49}$`) })
	zoneRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^zones\.(0|[1-9][0-9]{0,3})\.(name|tables|key)$`) })
	linkRe     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^links\.([^.]+)\.(enabled|parameters|title)$`) })
)

// column is one recognised header column.
type column struct {
	name string
	kind colKind
	// key is the field key: the address, contacts, service or weekday key,
	// the link provider, or the zone's subkey.
	key string
	// index is the zone index.
	index int
}

type colKind int

const (
	kindPlain colKind = iota
	kindLongitude
	kindLatitude
	kindList
	kindAddress
	kindContacts
	kindService
	kindOpeningHours
	kindZone
	kindLink
	kindJSON
	kindIgnored
)

func inList(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// parseColumn recognises one header name.
func parseColumn(name string) (column, bool) {
	c := column{name: name}
	switch {
	case inList(plainColumns, name):
		c.kind = kindPlain
	case name == colLongitude:
		c.kind = kindLongitude
	case name == colLatitude:
		c.kind = kindLatitude
	case inList(listColumns, name):
		c.kind = kindList
	case inList(jsonColumns, name):
		c.kind = kindJSON
	case name == colCreated, name == colUpdated, name == colTenantID, inList(ResultColumns, name):
		c.kind = kindIgnored
	case strings.HasPrefix(name, "address.") && inList(addressKeys, strings.TrimPrefix(name, "address.")):
		c.kind, c.key = kindAddress, strings.TrimPrefix(name, "address.")
	case strings.HasPrefix(name, "contacts.") && inList(contactKeys, strings.TrimPrefix(name, "contacts.")):
		c.kind, c.key = kindContacts, strings.TrimPrefix(name, "contacts.")
	case strings.HasPrefix(name, "services.") && inList(location.Services, strings.TrimPrefix(name, "services.")):
		c.kind, c.key = kindService, strings.TrimPrefix(name, "services.")
	case strings.HasPrefix(name, "openingHours.") && inList(location.Weekdays, strings.TrimPrefix(name, "openingHours.")):
		c.kind, c.key = kindOpeningHours, strings.TrimPrefix(name, "openingHours.")
	default:
		if m := zoneRe().FindStringSubmatch(name); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n >= location.MaxZones {
				return c, false
			}
			c.kind, c.index, c.key = kindZone, n, m[2]
			return c, true
		}
		if m := linkRe().FindStringSubmatch(name); m != nil && providerRe().MatchString(m[1]) {
			c.kind, c.key = kindLink, m[1]
			c.index = indexOf(linkKeys, m[2])
			return c, true
		}
		return c, false
	}
	return c, true
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

// header is a validated import header.
type header struct {
	names []string
	cols  []column
	// kept are the indexes of the input columns the results file repeats
	// (all but the results columns of an earlier results file).
	kept []int
	// present are the column names of the header; linkProviders the
	// providers of its links columns; zones whether it has zones
	// columns. Fields of absent columns keep their stored values (keep).
	present       map[string]bool
	linkProviders map[string]bool
	zones         bool
}

// parseHeader checks an import header: known column names only, none
// twice, and the required title, geo_longitude and geo_latitude. Its error
// message is the operation's error.
func parseHeader(names []string) (*header, error) {
	seen := map[string]bool{}
	h := &header{names: names, present: seen, linkProviders: map[string]bool{}}
	var unknown []string
	for i, raw := range names {
		name := strings.TrimSpace(raw)
		if name == "" {
			return nil, fmt.Errorf("the header has an empty column name (column %d)", i+1)
		}
		if seen[name] {
			return nil, fmt.Errorf("the header names column %q twice", trunc(name))
		}
		seen[name] = true
		c, ok := parseColumn(name)
		if !ok {
			unknown = append(unknown, strconv.Quote(trunc(name)))
			continue
		}
		h.cols = append(h.cols, c)
		switch c.kind {
		case kindLink:
			h.linkProviders[c.key] = true
		case kindZone:
			h.zones = true
		}
		if !inList(ResultColumns, name) {
			h.kept = append(h.kept, i)
		}
	}
	if len(unknown) > 0 {
		if len(unknown) > 5 {
			unknown = append(unknown[:5], "...")
		}
		return nil, fmt.Errorf("unknown columns %s (wrong header? see the column list of the location import)", strings.Join(unknown, ", "))
	}
	var missing []string
	for _, req := range []string{colTitle, colLongitude, colLatitude} {
		if !seen[req] {
			missing = append(missing, req)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the header lacks the required columns %s", strings.Join(missing, ", "))
	}
	return h, nil
}

// resultsHeader is the header of the results file.
func (h *header) resultsHeader() []string {
	out := make([]string, 0, len(h.kept)+len(ResultColumns))
	for _, i := range h.kept {
		out = append(out, strings.TrimSpace(h.names[i]))
	}
	return append(out, ResultColumns...)
}

// resultLine is a row of the results file: the kept input cells (padded or
// cut to the header's width) and the results columns, each written as
// csvcell says (geo_longitude and geo_latitude are the numeric columns).
func (h *header) resultLine(rec []string, locationID, action string, errs []string) []string {
	out := make([]string, 0, len(h.kept)+len(ResultColumns))
	for _, i := range h.kept {
		v := ""
		if i < len(rec) {
			v = csvcell.Read(rec[i])
		}
		if i < len(h.cols) && numericKind(h.cols[i].kind) {
			out = append(out, csvcell.Number(v))
		} else {
			out = append(out, csvcell.Text(v))
		}
	}
	return append(out, csvcell.Text(locationID), csvcell.Text(action), csvcell.Text(joinList(errs)))
}

// numericKind reports whether the columns of a kind hold numbers.
func numericKind(k colKind) bool { return k == kindLongitude || k == kindLatitude }

// row is a parsed import row: the location it describes, its _id cell and
// the problems found while parsing.
type row struct {
	id   string
	loc  location.Location
	errs []string
}

// parseRow turns a record into a location. Every cell problem is reported
// (as "column: message"); the location is only usable when errs is empty.
func (h *header) parseRow(rec []string) row {
	var r row
	if len(rec) != len(h.names) {
		r.errs = append(r.errs, fmt.Sprintf("the row has %d fields; the header has %d", len(rec), len(h.names)))
		return r
	}
	l := &r.loc
	var lon, lat *float64
	zones := map[int]*zoneCells{}
	links := map[string]*location.Link{}
	linkSet := map[string]bool{}
	bad := func(col, format string, args ...any) {
		r.errs = append(r.errs, col+": "+fmt.Sprintf(format, args...))
	}
	for i, c := range h.cols {
		// h.cols skips nothing: every header column is known here. A cell
		// an export escaped (csvcell.Text) reads as the value.
		v := csvcell.Read(rec[i])
		if strings.TrimSpace(v) == "" && c.kind != kindPlain {
			continue
		}
		switch c.kind {
		case kindPlain:
			setPlain(l, &r.id, c.name, v)
		case kindLongitude, kindLatitude:
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				bad(c.name, "must be a number")
				continue
			}
			if c.kind == kindLongitude {
				if f < -180 || f > 180 {
					bad(c.name, "must be from -180 to 180")
					continue
				}
				lon = &f
			} else {
				if f < -90 || f > 90 {
					bad(c.name, "must be from -90 to 90")
					continue
				}
				lat = &f
			}
		case kindList:
			items := splitList(v)
			switch c.name {
			case "facilities":
				l.Facilities = items
			case "regions":
				l.Regions = items
			case "tags":
				l.Tags = items
			}
		case kindAddress:
			if l.Address == nil {
				l.Address = &location.Address{}
			}
			setAddress(l.Address, c.key, v)
		case kindContacts:
			if l.Contacts == nil {
				l.Contacts = &location.Contacts{}
			}
			if c.key == "email" {
				l.Contacts.Email = v
			} else {
				l.Contacts.Phone = v
			}
		case kindService:
			b, ok := parseBool(v)
			if !ok {
				bad(c.name, boolMessage)
				continue
			}
			if l.Services == nil {
				l.Services = map[string]bool{}
			}
			l.Services[c.key] = b
		case kindOpeningHours:
			if l.OpeningHours == nil {
				l.OpeningHours = map[string]string{}
			}
			l.OpeningHours[c.key] = v
		case kindZone:
			z := zones[c.index]
			if z == nil {
				z = &zoneCells{}
				zones[c.index] = z
			}
			switch c.key {
			case "name":
				z.name = strings.TrimSpace(v)
			case "key":
				z.key = strings.TrimSpace(v)
			case "tables":
				z.tables = splitList(v)
			}
		case kindLink:
			lk := links[c.key]
			if lk == nil {
				lk = &location.Link{}
				links[c.key] = lk
			}
			linkSet[c.key] = true
			switch linkKeys[c.index] {
			case "enabled":
				b, ok := parseBool(v)
				if !ok {
					bad(c.name, boolMessage)
					continue
				}
				lk.Enabled = b
			case "parameters":
				lk.Parameters = v
			case "title":
				lk.Title = v
			}
		case kindJSON:
			if err := setJSON(l, c.name, v); err != nil {
				bad(c.name, "%s", err.Error())
			}
		}
	}
	if strings.TrimSpace(l.Title) == "" {
		bad(colTitle, "is required")
	}
	switch {
	case lon == nil && lat == nil:
		if !hasErr(r.errs, colLongitude) && !hasErr(r.errs, colLatitude) {
			bad("geo", "geo_longitude and geo_latitude are required")
		}
	case lon == nil:
		if !hasErr(r.errs, colLongitude) {
			bad(colLongitude, "is required")
		}
	case lat == nil:
		if !hasErr(r.errs, colLatitude) {
			bad(colLatitude, "is required")
		}
	default:
		l.Geo = []float64{*lon, *lat}
	}
	if len(zones) > 0 {
		idx := make([]int, 0, len(zones))
		for n := range zones {
			idx = append(idx, n)
		}
		sort.Ints(idx)
		l.Zones = map[string]location.Zone{}
		for _, n := range idx {
			z := zones[n]
			key := z.key
			if key == "" {
				key = z.name
			}
			if key == "" {
				bad(fmt.Sprintf("zones.%d.name", n), "is required when the zone has other cells")
				continue
			}
			if _, dup := l.Zones[key]; dup {
				bad(fmt.Sprintf("zones.%d", n), "zone %q is given twice", trunc(key))
				continue
			}
			l.Zones[key] = location.Zone{Name: z.name, Tables: z.tables}
		}
	}
	if len(links) > 0 {
		l.Links = map[string]location.Link{}
		for p, lk := range links {
			if linkSet[p] {
				l.Links[p] = *lk
			}
		}
	}
	r.errs = append(r.errs, fieldProblems(l, r.errs)...)
	return r
}

// fieldProblems returns the problems location validation finds in the
// fields a row sets (state, URLs, e-mail, sizes, ...), so that the results
// file lists them together with the row's cell errors; the row is not
// imported when there are any. The row's location is validated on a copy
// (validation normalises), before the stored fields of absent columns are
// kept (those are valid already). Problems of title and geo cells the row
// already reports are left out.
func fieldProblems(l *location.Location, errs []string) []string {
	b, err := json.Marshal(l)
	if err != nil {
		return []string{"the row cannot be encoded as a location"}
	}
	var v location.Location
	if err := json.Unmarshal(b, &v); err != nil {
		return []string{"the row cannot be encoded as a location"}
	}
	var out []string
	for _, err := range v.ValidateAll() {
		ae, ok := apierr.As(err)
		if !ok {
			continue
		}
		switch {
		case ae.Field == colTitle && strings.TrimSpace(l.Title) == "",
			ae.Field == "geo" && l.Geo == nil,
			hasErr(errs, ae.Field):
			continue
		}
		out = append(out, ae.Message)
	}
	return out
}

type zoneCells struct {
	name, key string
	tables    []string
}

func hasErr(errs []string, col string) bool {
	for _, e := range errs {
		if strings.HasPrefix(e, col+": ") {
			return true
		}
	}
	return false
}

func setPlain(l *location.Location, id *string, name, v string) {
	switch name {
	case colID:
		*id = strings.TrimSpace(v)
	case colTitle:
		l.Title = v
	case "state":
		l.State = strings.ToUpper(strings.TrimSpace(v))
	case "description":
		l.Description = v
	case "timezone":
		l.Timezone = strings.TrimSpace(v)
	case "VATnumber":
		l.VATNumber = v
	case "mainImageUrl":
		l.MainImageURL = v
	case "listingImageUrl":
		l.ListingImageURL = v
	case "mapPinImageUrl":
		l.MapPinImageURL = v
	case "alternativeOpeningHoursText":
		l.AlternativeOpeningHoursText = v
	}
}

func setAddress(a *location.Address, key, v string) {
	switch key {
	case "line1":
		a.Line1 = v
	case "line2":
		a.Line2 = v
	case "city":
		a.City = v
	case "region":
		a.Region = v
	case "postalCode":
		a.PostalCode = v
	case "country":
		a.Country = v
	case "address":
		a.Address = v
	case "address2":
		a.Address2 = v
	case "town":
		a.Town = v
	case "postcode":
		a.Postcode = v
	case "summary":
		a.Summary = v
	case "fullAddress":
		a.FullAddress = v
	case "googleMapsShortUrl":
		a.GoogleMapsShortURL = v
	}
}

func addressValue(a *location.Address, key string) string {
	if a == nil {
		return ""
	}
	switch key {
	case "line1":
		return a.Line1
	case "line2":
		return a.Line2
	case "city":
		return a.City
	case "region":
		return a.Region
	case "postalCode":
		return a.PostalCode
	case "country":
		return a.Country
	case "address":
		return a.Address
	case "address2":
		return a.Address2
	case "town":
		return a.Town
	case "postcode":
		return a.Postcode
	case "summary":
		return a.Summary
	case "fullAddress":
		return a.FullAddress
	case "googleMapsShortUrl":
		return a.GoogleMapsShortURL
	}
	return ""
}

// setJSON decodes a JSON column strictly into its field. The value must be
// one DynamoDB can store (ddb.CheckJSON: the rules of free JSON in request
// bodies).
func setJSON(l *location.Location, name, v string) error {
	raw := []byte(strings.TrimSpace(v))
	if !json.Valid(raw) {
		return fmt.Errorf("is not valid JSON")
	}
	if _, err := ddb.CheckJSON(raw); err != nil {
		var ve *ddb.ValueError
		if errors.As(err, &ve) && ve.Path != "" {
			return fmt.Errorf("%s, at %s", ve.Reason, trunc(ve.Path))
		}
		return err
	}
	strict := func(dst any) error {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst); err != nil {
			msg := strings.TrimPrefix(err.Error(), "json: ")
			return fmt.Errorf("does not match the field's shape (%s)", trunc(msg))
		}
		return nil
	}
	switch name {
	case "ordering_json":
		if raw[0] != '{' {
			return fmt.Errorf("must be a JSON object")
		}
		return strict(&l.Ordering)
	case "buttons_json":
		if raw[0] != '[' {
			return fmt.Errorf("must be a JSON array")
		}
		return strict(&l.Buttons)
	case "beacons_json":
		if raw[0] != '[' {
			return fmt.Errorf("must be a JSON array")
		}
		return strict(&l.Beacons)
	case "extended_json":
		if raw[0] != '{' {
			return fmt.Errorf("must be a JSON object")
		}
		return json.Unmarshal(raw, &l.Extended)
	case "deliveryBoundaries_json":
		l.DeliveryBoundaries = location.RawJSON(raw)
	}
	return nil
}

// jsonValue is the JSON text of a JSON column's field ("" when absent).
func jsonValue(l *location.Location, name string) string {
	var v any
	switch name {
	case "ordering_json":
		if l.Ordering == nil {
			return ""
		}
		v = l.Ordering
	case "buttons_json":
		if len(l.Buttons) == 0 {
			return ""
		}
		v = l.Buttons
	case "beacons_json":
		if len(l.Beacons) == 0 {
			return ""
		}
		v = l.Beacons
	case "extended_json":
		if len(l.Extended) == 0 {
			return ""
		}
		v = l.Extended
	case "deliveryBoundaries_json":
		return string(l.DeliveryBoundaries)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// parseBool reads a boolean cell; every boolean column (services.<service>
// and links.<provider>.enabled) uses it. true, yes and 1 are true; false,
// no and 0 are false (any case, surrounding spaces ignored); anything else
// is not a boolean (a row error naming the column, boolMessage).
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "1":
		return true, true
	case "false", "no", "0":
		return false, true
	}
	return false, false
}

// boolMessage is the row error of a cell parseBool refuses.
const boolMessage = "must be a boolean: true, false, yes, no, 1 or 0 (any case)"

// splitList splits a "|"-separated list ("\|" is a "|" inside an item, "\\"
// a backslash), trimming items and dropping empty ones.
func splitList(v string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i+1 < len(v) && (v[i+1] == '|' || v[i+1] == '\\'):
			cur.WriteByte(v[i+1])
			i++
		case c == '|':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// joinList joins items with "|", escaping "|" and "\" inside them.
func joinList(items []string) string {
	if len(items) == 0 {
		return ""
	}
	esc := strings.NewReplacer(`\`, `\\`, `|`, `\|`)
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = esc.Replace(it)
	}
	return strings.Join(out, "|")
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
