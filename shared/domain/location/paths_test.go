package location_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestLocationErrorPaths: a VALIDATION_FAILED message names the full path
// of the bad value (map keys and array indexes included), on create and on
// update, for wrong JSON types and for failed checks alike.
func TestLocationErrorPaths(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id := createAt(t, h, "Paths", london, nil)
	for _, tc := range []struct {
		name  string
		field string
		value any
		want  string // the message's start
	}{
		{"LinkEnabledType", "links", map[string]any{"x": map[string]any{"enabled": "yes"}}, "links.x.enabled: must be of type boolean"},
		{"ZoneTablesType", "zones", map[string]any{"a": map[string]any{"tables": "x"}}, "zones.a.tables: must be of type array"},
		{"ZoneTableItemType", "zones", map[string]any{"a": map[string]any{"tables": []any{"t1", 2}}}, "zones.a.tables[1]: must be of type string"},
		{"ServiceType", "services", map[string]any{"checkins": "yes"}, "services.checkins: must be of type boolean"},
		{"TagItemType", "tags", []any{1}, "tags[0]: must be of type string"},
		{"GeoItemType", "geo", []any{1, "2"}, "geo[1]: must be of type number"},
		{"OpeningHoursType", "openingHours", map[string]any{"monday": 9}, "openingHours.monday: must be of type string"},
		{"ButtonItemType", "buttons", []any{map[string]any{}, map[string]any{"title": 5}}, "buttons[1].title: must be of type string"},
		{"NoteType", "ordering", map[string]any{"extendedFields": map[string]any{"PREORDER": map[string]any{"note": []any{map[string]any{"title": true}}}}}, "ordering.extendedFields.PREORDER.note[0].title: must be of type string"},
		{"TitleType", "title", 42, "title: must be of type string"},
		{"AddressType", "address", "1 High St", "address: must be of type object"},
		{"TagEmpty", "tags", []string{"a", " "}, "tags[1]: must not be empty"},
		{"TagTooLong", "tags", []string{"a", "b", strings.Repeat("t", 101)}, "tags[2]: must be at most 100 characters"},
		{"RegionControl", "regions", []string{"a\x01"}, "regions[0]: must not contain control characters"},
		{"UnknownService", "services", map[string]any{"valet": true}, "services.valet: unknown service"},
		{"UnknownDay", "openingHours", map[string]any{"funday": "9-5"}, "openingHours.funday: is not a day"},
		{"DayTooLong", "openingHours", map[string]any{"friday": strings.Repeat("h", 201)}, "openingHours.friday: must be at most 200 characters"},
		{"ButtonStyle", "buttons", []any{map[string]any{"style": "PRIMARY"}, map[string]any{"style": "big one"}}, "buttons[1].style: must be an UPPER_SNAKE value"},
		{"ButtonURL", "buttons", []any{map[string]any{"properties": map[string]any{"url": "nope"}}}, "buttons[0].properties.url: must be an absolute URL"},
		{"LinkTitle", "links", map[string]any{"ubereats": map[string]any{"title": strings.Repeat("l", 201)}}, "links.ubereats.title: must be at most 200 characters"},
		{"BeaconText", "beacons", []any{map[string]any{}, map[string]any{"uuid": "a\x02"}}, "beacons[1].uuid: must not contain control characters"},
		{"NoteTitle", "ordering", map[string]any{"extendedFields": map[string]any{"ORDER_TO_TABLE": map[string]any{"note": []any{map[string]any{}, map[string]any{"title": strings.Repeat("n", 201)}}}}}, "ordering.extendedFields.ORDER_TO_TABLE.note[1].title: must be at most 200 characters"},
		{"ZoneTableEmpty", "zones", map[string]any{"bar": map[string]any{"tables": []string{"T1", ""}}}, "zones.bar.tables[1]: must not be empty"},
		{"ZoneName", "zones", map[string]any{"bar": map[string]any{"name": strings.Repeat("z", 101)}}, "zones.bar.name: must be at most 100 characters"},
		{"AddressCity", "address", map[string]any{"city": strings.Repeat("c", 501)}, "address.city: must be at most 500 characters"},
		{"NestedUnknown", "address", map[string]any{"street": "x"}, "address.street: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range []struct{ method, path string }{{"POST", "/locations"}, {"PUT", "/locations/" + id}} {
				body := map[string]any{tc.field: tc.value}
				if op.method == "POST" {
					body = clone(minimal("Bad "+tc.name), body)
				}
				msg, _ := h.Do(op.method, op.path, body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED").Map(t)["message"].(string)
				if !strings.HasPrefix(msg, tc.want) {
					t.Errorf("%s: message = %q, want it to start with %q", op.method, msg, tc.want)
				}
			}
		})
	}
	t.Run("NothingWritten", func(t *testing.T) {
		l := list(t, h, "?include=updated,created", h.Admin())
		if len(l.Items) != 1 || l.Items[0]["updated"] != l.Items[0]["created"] {
			t.Errorf("bad input was stored: %v", l.Items)
		}
	})
}

// TestListLocationsIncludeBrackets: include may also be sent as include[]
// (the API types it as an array), repeated or as a comma list, mixed with
// include.
func TestListLocationsIncludeBrackets(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	createAt(t, h, "Bracket", london, map[string]any{"tags": []string{"a"}, "zones": map[string]any{"z": map[string]any{"name": "Z"}}, "description": "d"})
	for _, tc := range []struct {
		name, query string
		want        []string // optional fields returned
	}{
		{"Plain", "include=tags", []string{"tags"}},
		{"Brackets", "include[]=tags", []string{"tags"}},
		{"BracketsEncoded", "include%5B%5D=tags", []string{"tags"}},
		{"BracketsRepeated", "include[]=tags&include[]=zones", []string{"tags", "zones"}},
		{"BracketsCommaList", "include[]=tags,ZONES", []string{"tags", "zones"}},
		{"BothForms", "include=description&include[]=tags", []string{"description", "tags"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item := list(t, h, "?"+tc.query, h.Anon()).Items[0]
			for _, f := range []string{"tags", "zones", "description"} {
				_, got := item[f]
				want := false
				for _, w := range tc.want {
					want = want || w == f
				}
				if got != want {
					t.Errorf("%s present = %v, want %v (item %v)", f, got, want, item)
				}
			}
		})
	}
	t.Run("UnknownInBrackets", func(t *testing.T) {
		r := h.Do("GET", "/locations?include[]=secrets", nil, h.Anon()).Expect(t, 422, "VALIDATION_FAILED")
		if msg := r.Map(t)["message"]; msg != `include: unknown option "secrets"` {
			t.Errorf("message = %q", msg)
		}
	})
	t.Run("OtherTenantSeesNone", func(t *testing.T) {
		if l := list(t, h, "?include[]=tags", otherTenant(h)); len(l.Items) != 0 {
			t.Errorf("another tenant lists %v", l.titles())
		}
	})
}
