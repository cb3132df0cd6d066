package locationcsv

import (
	"maps"

	"github.com/loyalty-platform/platform/shared/domain/location"
)

// An import upserts: a row that matches a stored location sets the fields
// its file has columns for, and the fields of columns absent from the
// file's header keep their stored values (an empty cell in a present
// column clears its field). Per group of columns:
//
//	plain, list and JSON columns   each column is one field
//	address.<key>, contacts.<key>,
//	services.<service>, openingHours.<day>
//	                               each column is one key: absent keys keep their stored values
//	links.<provider>.*             each provider is one unit: a provider with any column is
//	                               defined by the row's cells alone (absent subkeys are
//	                               empty, all cells empty removes it); providers without a
//	                               column keep their stored links
//	zones.<N>.*                    the zones are one unit (their indexes are positions in the
//	                               file, not keys): any zones column makes the row's zones
//	                               replace the stored ones; without one they are kept
//
// title, geo_longitude and geo_latitude are required, so always present.

// keep fills next, the location a row describes, with the stored values of
// the fields whose columns the header lacks (see above). It never modifies
// the maps or structs next shares with the parsed row, nor stored.
func (h *header) keep(stored location.Location, next *location.Location) {
	for _, name := range plainColumns {
		if !h.present[name] {
			copyPlain(next, &stored, name)
		}
	}
	for _, name := range listColumns {
		if h.present[name] {
			continue
		}
		switch name {
		case "facilities":
			next.Facilities = stored.Facilities
		case "regions":
			next.Regions = stored.Regions
		case "tags":
			next.Tags = stored.Tags
		}
	}
	for _, name := range jsonColumns {
		if h.present[name] {
			continue
		}
		switch name {
		case "ordering_json":
			next.Ordering = stored.Ordering
		case "buttons_json":
			next.Buttons = stored.Buttons
		case "beacons_json":
			next.Beacons = stored.Beacons
		case "extended_json":
			next.Extended = stored.Extended
		case "deliveryBoundaries_json":
			next.DeliveryBoundaries = stored.DeliveryBoundaries
		}
	}
	// address.<key>: absent keys keep their stored values.
	var addr *location.Address
	for _, k := range addressKeys {
		if v := addressValue(stored.Address, k); v != "" && !h.present["address."+k] {
			if addr == nil {
				addr = &location.Address{}
				if next.Address != nil {
					*addr = *next.Address
				}
			}
			setAddress(addr, k, v)
		}
	}
	if addr != nil {
		next.Address = addr
	}
	// contacts.<key>, likewise.
	if c := stored.Contacts; c != nil && (c.Email != "" && !h.present["contacts.email"] || c.Phone != "" && !h.present["contacts.phone"]) {
		nc := &location.Contacts{}
		if next.Contacts != nil {
			*nc = *next.Contacts
		}
		if !h.present["contacts.email"] {
			nc.Email = c.Email
		}
		if !h.present["contacts.phone"] {
			nc.Phone = c.Phone
		}
		next.Contacts = nc
	}
	next.Services = keepKeys(next.Services, stored.Services, h.present, "services.")
	next.OpeningHours = keepKeys(next.OpeningHours, stored.OpeningHours, h.present, "openingHours.")
	// links: providers without a column keep their stored links.
	var links map[string]location.Link
	for p, lk := range stored.Links {
		if h.linkProviders[p] {
			continue
		}
		if links == nil {
			links = maps.Clone(next.Links)
			if links == nil {
				links = map[string]location.Link{}
			}
		}
		links[p] = lk
	}
	if links != nil {
		next.Links = links
	}
	if !h.zones {
		next.Zones = stored.Zones
	}
}

// keepKeys returns row's map with the stored keys whose column
// (prefix+key) is absent added; row itself is not modified.
func keepKeys[V any](row, stored map[string]V, present map[string]bool, prefix string) map[string]V {
	var out map[string]V
	for k, v := range stored {
		if present[prefix+k] {
			continue
		}
		if out == nil {
			out = maps.Clone(row)
			if out == nil {
				out = map[string]V{}
			}
		}
		out[k] = v
	}
	if out == nil {
		return row
	}
	return out
}

// copyPlain copies the plain field of column name from src to dst (the
// _id and title columns are not fields to keep).
func copyPlain(dst, src *location.Location, name string) {
	switch name {
	case "state":
		dst.State = src.State
	case "description":
		dst.Description = src.Description
	case "timezone":
		dst.Timezone = src.Timezone
	case "VATnumber":
		dst.VATNumber = src.VATNumber
	case "mainImageUrl":
		dst.MainImageURL = src.MainImageURL
	case "listingImageUrl":
		dst.ListingImageURL = src.ListingImageURL
	case "mapPinImageUrl":
		dst.MapPinImageURL = src.MapPinImageURL
	case "alternativeOpeningHoursText":
		dst.AlternativeOpeningHoursText = src.AlternativeOpeningHoursText
	}
}
