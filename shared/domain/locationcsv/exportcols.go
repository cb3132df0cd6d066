package locationcsv

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/platform/csvcell"
)

// layout collects, over the locations of an export, which dot-notation
// columns are needed; its columns are the export file's header.
type layout struct {
	address   map[string]bool
	contacts  map[string]bool
	services  map[string]bool
	days      map[string]bool
	zones     int
	zoneKeys  bool
	links     map[string]map[string]bool // provider -> subkeys used
	providers []string
}

func newLayout() *layout {
	return &layout{address: map[string]bool{}, contacts: map[string]bool{}, services: map[string]bool{}, days: map[string]bool{}, links: map[string]map[string]bool{}}
}

// add notes the columns a location needs.
func (y *layout) add(l location.Location) {
	for _, k := range addressKeys {
		if addressValue(l.Address, k) != "" {
			y.address[k] = true
		}
	}
	if l.Contacts != nil {
		if l.Contacts.Email != "" {
			y.contacts["email"] = true
		}
		if l.Contacts.Phone != "" {
			y.contacts["phone"] = true
		}
	}
	for k := range l.Services {
		y.services[k] = true
	}
	for k := range l.OpeningHours {
		y.days[k] = true
	}
	y.zones = max(y.zones, len(l.Zones))
	for k, z := range l.Zones {
		if z.Name != k {
			y.zoneKeys = true
		}
	}
	for p, lk := range l.Links {
		used := y.links[p]
		if used == nil {
			used = map[string]bool{"enabled": true}
			y.links[p] = used
		}
		if lk.Parameters != "" {
			used["parameters"] = true
		}
		if lk.Title != "" {
			used["title"] = true
		}
	}
}

// columns returns the header: the plain columns, geo, the lists, the dot
// columns in use (in the documented key orders; providers sorted), the JSON
// columns and the read-only timestamps.
func (y *layout) columns() []string {
	cols := append([]string(nil), plainColumns...)
	cols = append(cols, colLongitude, colLatitude)
	cols = append(cols, listColumns...)
	for _, k := range addressKeys {
		if y.address[k] {
			cols = append(cols, "address."+k)
		}
	}
	for _, k := range contactKeys {
		if y.contacts[k] {
			cols = append(cols, "contacts."+k)
		}
	}
	for _, k := range location.Services {
		if y.services[k] {
			cols = append(cols, "services."+k)
		}
	}
	for _, k := range location.Weekdays {
		if y.days[k] {
			cols = append(cols, "openingHours."+k)
		}
	}
	for n := 0; n < y.zones; n++ {
		cols = append(cols, fmt.Sprintf("zones.%d.name", n), fmt.Sprintf("zones.%d.tables", n))
		if y.zoneKeys {
			cols = append(cols, fmt.Sprintf("zones.%d.key", n))
		}
	}
	providers := make([]string, 0, len(y.links))
	for p := range y.links {
		providers = append(providers, p)
	}
	sort.Strings(providers)
	for _, p := range providers {
		for _, k := range linkKeys {
			if y.links[p][k] {
				cols = append(cols, "links."+p+"."+k)
			}
		}
	}
	cols = append(cols, jsonColumns...)
	return append(cols, colCreated, colUpdated)
}

// exportRow returns the cells of a location under the header cols (made by
// layout.columns); a cell whose field is absent is empty. Cells are written
// as csvcell says: geo_longitude and geo_latitude are numbers, the others
// text.
func exportRow(cols []string, l location.Location) []string {
	zoneNames := make([]string, 0, len(l.Zones))
	for k := range l.Zones {
		zoneNames = append(zoneNames, k)
	}
	sort.Strings(zoneNames)
	out := make([]string, len(cols))
	for i, name := range cols {
		if name == colLongitude || name == colLatitude {
			out[i] = csvcell.Number(cell(name, l, zoneNames))
		} else {
			out[i] = csvcell.Text(cell(name, l, zoneNames))
		}
	}
	return out
}

func cell(name string, l location.Location, zoneNames []string) string {
	switch name {
	case colID:
		return l.ID
	case colTitle:
		return l.Title
	case "state":
		return l.State
	case "description":
		return l.Description
	case "timezone":
		return l.Timezone
	case "VATnumber":
		return l.VATNumber
	case "mainImageUrl":
		return l.MainImageURL
	case "listingImageUrl":
		return l.ListingImageURL
	case "mapPinImageUrl":
		return l.MapPinImageURL
	case "alternativeOpeningHoursText":
		return l.AlternativeOpeningHoursText
	case colLongitude, colLatitude:
		if len(l.Geo) != 2 {
			return ""
		}
		if name == colLongitude {
			return formatFloat(l.Geo[0])
		}
		return formatFloat(l.Geo[1])
	case "facilities":
		return joinList(l.Facilities)
	case "regions":
		return joinList(l.Regions)
	case "tags":
		return joinList(l.Tags)
	case colCreated:
		return l.Created
	case colUpdated:
		return l.Updated
	}
	if inList(jsonColumns, name) {
		return jsonValue(&l, name)
	}
	prefix, key, _ := strings.Cut(name, ".")
	switch prefix {
	case "address":
		return addressValue(l.Address, key)
	case "contacts":
		if l.Contacts == nil {
			return ""
		}
		if key == "email" {
			return l.Contacts.Email
		}
		return l.Contacts.Phone
	case "services":
		if b, ok := l.Services[key]; ok {
			return strconv.FormatBool(b)
		}
		return ""
	case "openingHours":
		return l.OpeningHours[key]
	case "zones":
		ns, sub, _ := strings.Cut(key, ".")
		n, err := strconv.Atoi(ns)
		if err != nil || n >= len(zoneNames) {
			return ""
		}
		k := zoneNames[n]
		z := l.Zones[k]
		switch sub {
		case "name":
			return z.Name
		case "tables":
			return joinList(z.Tables)
		case "key":
			return k
		}
	case "links":
		i := strings.LastIndex(key, ".")
		if i < 0 {
			return ""
		}
		lk, ok := l.Links[key[:i]]
		if !ok {
			return ""
		}
		switch key[i+1:] {
		case "enabled":
			return strconv.FormatBool(lk.Enabled)
		case "parameters":
			return lk.Parameters
		case "title":
			return lk.Title
		}
	}
	return ""
}
