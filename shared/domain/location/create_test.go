package location_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestCreateLocation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)

	t.Run("EveryField", func(t *testing.T) {
		body := full("Soho")
		got := create(t, h, body)
		if got["_id"] == "" || got["tenantId"] != h.Tenant.ID || got["created"] == "" || got["updated"] != got["created"] {
			t.Fatalf("server fields: %v", got)
		}
		// Every field sent comes back as sent (JSON-equal).
		for k, want := range body {
			wantJSON, _ := json.Marshal(want)
			var wantV any
			_ = json.Unmarshal(wantJSON, &wantV)
			if !reflect.DeepEqual(got[k], wantV) {
				t.Errorf("%s = %v, want %v", k, got[k], wantV)
			}
		}
		read := h.Do("GET", "/locations/"+got["_id"].(string), nil, h.Admin()).Expect(t, 200, "").Map(t)
		if !reflect.DeepEqual(read, got) {
			t.Errorf("GET = %v\nwant %v", read, got)
		}
	})
	t.Run("MinimalDefaultsToActive", func(t *testing.T) {
		got := create(t, h, minimal("  Tiny  "))
		if got["state"] != "ACTIVE" || got["title"] != "Tiny" {
			t.Errorf("got %v", got)
		}
		for _, k := range []string{"services", "tags", "address", "deliveryBoundaries", "extended", "distance"} {
			if _, ok := got[k]; ok {
				t.Errorf("%s present on a minimal location: %v", k, got[k])
			}
		}
	})
	t.Run("AnyInitialState", func(t *testing.T) {
		for _, st := range []string{"PENDING", "ACTIVE", "RETIRED"} {
			b := minimal("State " + st)
			b["state"] = st
			if got := create(t, h, b); got["state"] != st {
				t.Errorf("state = %v, want %s", got["state"], st)
			}
		}
	})
	t.Run("ApiVersionAccepted", func(t *testing.T) {
		h.Do("POST", "/locations", minimal("Versioned"), h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 201, "")
	})
	t.Run("NormalisesLists", func(t *testing.T) {
		b := minimal("Lists")
		b["tags"] = []string{" a ", "a", "b"}
		b["address"] = map[string]any{}
		b["deliveryBoundaries"] = json.RawMessage(`{ "type" : "Point" }`)
		got := create(t, h, b)
		if tags, _ := json.Marshal(got["tags"]); string(tags) != `["a","b"]` {
			t.Errorf("tags = %s", tags)
		}
		if _, ok := got["address"]; ok {
			t.Errorf("empty address kept: %v", got["address"])
		}
		if db, _ := json.Marshal(got["deliveryBoundaries"]); string(db) != `{"type":"Point"}` {
			t.Errorf("deliveryBoundaries = %s", db)
		}
	})
}

func TestCreateLocationAuth(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token := activeUser(t, h)
	for _, tc := range []struct {
		name    string
		headers ts.Headers
		status  int
		code    string
	}{
		{"Anonymous", h.Anon(), 401, "UNAUTHORIZED"},
		{"NoTenant", nil, 401, "UNAUTHORIZED"},
		{"User", ts.Token(token), 401, "UNAUTHORIZED"},
		{"BadServiceKey", ts.Headers{"x-service-auth-token", "nope", "x-application-id", h.Tenant.ID}, 401, "UNAUTHORIZED"},
		{"Admin", h.Admin(), 201, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/locations", minimal("Auth "+tc.name), tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("UserWritesNothing", func(t *testing.T) {
		l := list(t, h, "?title=Auth%20User", h.Admin())
		if len(l.Items) != 0 {
			t.Errorf("a USER's create was stored: %v", l.Items)
		}
	})
}

func TestCreateLocationBadInput(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	with := func(k string, v any) map[string]any {
		b := minimal("Bad")
		b[k] = v
		return b
	}
	without := func(k string) map[string]any {
		b := minimal("Bad")
		delete(b, k)
		return b
	}
	for _, tc := range []struct {
		name string
		body any
		code string
	}{
		{"MalformedJSON", `{"title": "x", "geo": [1,`, "VALIDATION_FAILED"},
		{"NotAnObject", `[1,2]`, "VALIDATION_FAILED"},
		{"Empty", ``, "VALIDATION_FAILED"},
		{"TwoObjects", `{"title":"a","geo":[0,0]}{}`, "VALIDATION_FAILED"},
		{"UnknownField", with("colour", "red"), "VALIDATION_FAILED"},
		{"WrongCaseField", with("Title", "x"), "VALIDATION_FAILED"},
		{"ReadOnlyID", with("_id", "abc"), "VALIDATION_FAILED"},
		{"OtherTenant", with("tenantId", "other"), "VALIDATION_FAILED"},
		{"MissingTitle", without("title"), "VALIDATION_FAILED"},
		{"BlankTitle", with("title", "   "), "VALIDATION_FAILED"},
		{"TitleNotString", with("title", 42), "VALIDATION_FAILED"},
		{"TitleTooLong", with("title", strings.Repeat("x", 201)), "VALIDATION_FAILED"},
		{"TitleControlChar", with("title", "a\x01b"), "VALIDATION_FAILED"},
		{"MissingGeo", without("geo"), "VALIDATION_FAILED"},
		{"GeoNull", with("geo", nil), "VALIDATION_FAILED"},
		{"GeoOneNumber", with("geo", []float64{1}), "VALIDATION_FAILED"},
		{"GeoThreeNumbers", with("geo", []float64{1, 2, 3}), "VALIDATION_FAILED"},
		{"GeoStrings", with("geo", []string{"1", "2"}), "VALIDATION_FAILED"},
		{"GeoObject", with("geo", map[string]any{"lat": 1, "lng": 2}), "VALIDATION_FAILED"},
		{"LongitudeOutOfRange", with("geo", []float64{180.5, 0}), "VALIDATION_FAILED"},
		{"LatitudeOutOfRange", with("geo", []float64{0, -90.01}), "VALIDATION_FAILED"},
		{"LatLongSwappedOutOfRange", with("geo", []float64{51.5, 120}), "VALIDATION_FAILED"},
		{"BadState", with("state", "OPEN"), "VALIDATION_FAILED"},
		{"LowerCaseState", with("state", "active"), "VALIDATION_FAILED"},
		{"StateNotString", with("state", true), "VALIDATION_FAILED"},
		{"DescriptionTooLong", with("description", strings.Repeat("d", 10001)), "VALIDATION_FAILED"},
		{"ImageURLNotURL", with("mainImageUrl", "not a url"), "VALIDATION_FAILED"},
		{"ImageURLFTP", with("listingImageUrl", "ftp://x.example.com/a.png"), "VALIDATION_FAILED"},
		{"ImageURLTooLong", with("mapPinImageUrl", "https://x.example.com/"+strings.Repeat("a", 2048)), "VALIDATION_FAILED"},
		{"OpeningHoursUnknownDay", with("openingHours", map[string]any{"funday": "9-5"}), "VALIDATION_FAILED"},
		{"OpeningHoursCapitalDay", with("openingHours", map[string]any{"Monday": "9-5"}), "VALIDATION_FAILED"},
		{"OpeningHoursNumber", with("openingHours", map[string]any{"monday": 9}), "VALIDATION_FAILED"},
		{"OpeningHoursArray", with("openingHours", []string{"9-5"}), "VALIDATION_FAILED"},
		{"FacilitiesNotArray", with("facilities", "wifi"), "VALIDATION_FAILED"},
		{"FacilitiesEmptyItem", with("facilities", []string{""}), "VALIDATION_FAILED"},
		{"FacilitiesTooMany", with("facilities", make101()), "VALIDATION_FAILED"},
		{"ServicesUnknown", with("services", map[string]any{"valet": true}), "VALIDATION_FAILED"},
		{"ServicesNotBoolean", with("services", map[string]any{"checkins": "yes"}), "VALIDATION_FAILED"},
		{"ServicesArray", with("services", []string{"checkins"}), "VALIDATION_FAILED"},
		{"ButtonUnknownField", with("buttons", []map[string]any{{"title": "x", "colour": "red"}}), "VALIDATION_FAILED"},
		{"ButtonBadStyle", with("buttons", []map[string]any{{"style": "primary big"}}), "VALIDATION_FAILED"},
		{"ButtonBadAction", with("buttons", []map[string]any{{"action": 5}}), "VALIDATION_FAILED"},
		{"ButtonPropertiesUnknown", with("buttons", []map[string]any{{"properties": map[string]any{"target": "x"}}}), "VALIDATION_FAILED"},
		{"ButtonURLNoScheme", with("buttons", []map[string]any{{"properties": map[string]any{"url": "preorder"}}}), "VALIDATION_FAILED"},
		{"LinksNotObject", with("links", []string{"x"}), "VALIDATION_FAILED"},
		{"LinksBadKey", with("links", map[string]any{"a.b": map[string]any{"enabled": true}}), "VALIDATION_FAILED"},
		{"LinkEnabledString", with("links", map[string]any{"ubereats": map[string]any{"enabled": "yes"}}), "VALIDATION_FAILED"},
		{"LinkUnknownField", with("links", map[string]any{"ubereats": map[string]any{"url": "x"}}), "VALIDATION_FAILED"},
		{"VATTooLong", with("VATnumber", strings.Repeat("1", 51)), "VALIDATION_FAILED"},
		{"AddressUnknownField", with("address", map[string]any{"street": "x"}), "VALIDATION_FAILED"},
		{"AddressNotObject", with("address", "1 High St"), "VALIDATION_FAILED"},
		{"AddressMapsURL", with("address", map[string]any{"googleMapsShortUrl": "maps"}), "VALIDATION_FAILED"},
		{"ContactsBadEmail", with("contacts", map[string]any{"email": "not-an-email"}), "VALIDATION_FAILED"},
		{"ContactsBadPhone", with("contacts", map[string]any{"phone": "call us!"}), "VALIDATION_FAILED"},
		{"ContactsUnknown", with("contacts", map[string]any{"fax": "1"}), "VALIDATION_FAILED"},
		{"BeaconEnabledBoolean", with("beacons", []map[string]any{{"enabled": true}}), "VALIDATION_FAILED"},
		{"BeaconUnknown", with("beacons", []map[string]any{{"rssi": "1"}}), "VALIDATION_FAILED"},
		{"OrderingUnknownKind", with("ordering", map[string]any{"extendedFields": map[string]any{"DELIVERY": map[string]any{"note": []any{}}}}), "VALIDATION_FAILED"},
		{"OrderingNoteNotArray", with("ordering", map[string]any{"extendedFields": map[string]any{"PREORDER": map[string]any{"note": "x"}}}), "VALIDATION_FAILED"},
		{"OrderingUnknown", with("ordering", map[string]any{"menus": 1}), "VALIDATION_FAILED"},
		{"RegionsNotStrings", with("regions", []int{1}), "VALIDATION_FAILED"},
		{"TagTooLong", with("tags", []string{strings.Repeat("t", 101)}), "VALIDATION_FAILED"},
		{"TimezoneUnknown", with("timezone", "Mars/Olympus"), "VALIDATION_FAILED"},
		{"TimezoneLocal", with("timezone", "Local"), "VALIDATION_FAILED"},
		{"TimezonePath", with("timezone", "../../etc/passwd"), "VALIDATION_FAILED"},
		{"ZonesArray", with("zones", []any{map[string]any{"name": "a"}}), "VALIDATION_FAILED"},
		{"ZoneTablesNotStrings", with("zones", map[string]any{"bar": map[string]any{"tables": []int{1}}}), "VALIDATION_FAILED"},
		{"ZoneUnknownField", with("zones", map[string]any{"bar": map[string]any{"seats": 3}}), "VALIDATION_FAILED"},
		{"ExtendedNotObject", with("extended", []int{1}), "VALIDATION_FAILED"},
		{"ExtendedTooLarge", with("extended", map[string]any{"x": strings.Repeat("e", 17<<10)}), "VALIDATION_FAILED"},
		{"BoundariesTooLarge", with("deliveryBoundaries", []string{strings.Repeat("b", 129<<10)}), "VALIDATION_FAILED"},
		{"LocationTooLarge", func() map[string]any {
			b := minimal("Big")
			b["description"] = strings.Repeat("d", 10000)
			b["alternativeOpeningHoursText"] = strings.Repeat("h", 10000)
			b["deliveryBoundaries"] = []string{strings.Repeat("b", 120<<10), strings.Repeat("b", 0)}
			b["extended"] = map[string]any{"x": strings.Repeat("e", 15<<10)}
			zones := map[string]any{}
			for i := 0; i < 100; i++ {
				tables := make([]string, 20)
				for j := range tables {
					tables[j] = strings.Repeat("t", 100)
				}
				zones[strings.Repeat("z", 90)+string(rune('a'+i%26))+string(rune('a'+i/26))] = map[string]any{"tables": tables}
			}
			b["zones"] = zones
			return b
		}(), "VALIDATION_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/locations", tc.body, h.Admin()).Expect(t, 422, tc.code)
		})
	}
	t.Run("TooLargeBody", func(t *testing.T) {
		h.Do("POST", "/locations", `{"title":"`+strings.Repeat("x", 1<<20)+`"}`, h.Admin()).Expect(t, 413, "PAYLOAD_TOO_LARGE")
	})
	t.Run("BadApiVersion", func(t *testing.T) {
		h.Do("POST", "/locations", minimal("V"), h.Admin(), ts.Headers{"x-api-version", "nine"}).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("NothingWritten", func(t *testing.T) {
		if l := list(t, h, "", h.Admin()); len(l.Items) != 0 {
			t.Errorf("bad input was stored: %v", l.titles())
		}
	})
}

func make101() []string {
	out := make([]string, 101)
	for i := range out {
		out[i] = strings.Repeat("f", i%50+1) + string(rune('a'+i%26))
	}
	return out
}
