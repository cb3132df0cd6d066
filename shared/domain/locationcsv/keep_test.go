package locationcsv_test

import (
	"encoding/json"
	"reflect"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestImportKeepsAbsentColumns: a row that matches a stored location sets
// the fields its file has columns for; fields of absent columns keep their
// stored values; an empty cell in a present column clears its field.
func TestImportKeepsAbsentColumns(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	cases := []struct {
		name  string
		cols  []string // after _id,title,geo_longitude,geo_latitude
		cells []string
		// change edits the stored location (as GET shows it) into the
		// expected one; the title and geo are those of the row.
		change func(l map[string]any)
	}{
		{"OnlyRequiredColumns", nil, nil, func(map[string]any) {}},
		{"EmptyCellsClear", []string{"tags", "timezone", "description", "ordering_json"}, []string{"", "", "", ""}, func(l map[string]any) {
			delete(l, "tags")
			delete(l, "timezone")
			delete(l, "description")
			delete(l, "ordering")
		}},
		{"PlainAndListSet", []string{"tags", "VATnumber"}, []string{"new|tags", "GB1"}, func(l map[string]any) {
			l["tags"] = []any{"new", "tags"}
			l["VATnumber"] = "GB1"
		}},
		{"ServicesKeyPresent", []string{"services.delivery"}, []string{"true"}, func(l map[string]any) {
			l["services"].(map[string]any)["delivery"] = true
		}},
		{"ServicesEmptyCellClearsKey", []string{"services.pre_order"}, []string{""}, func(l map[string]any) {
			delete(l["services"].(map[string]any), "pre_order")
		}},
		{"OpeningHoursKeyPresent", []string{"openingHours.tuesday"}, []string{"09:00-17:00"}, func(l map[string]any) {
			l["openingHours"].(map[string]any)["tuesday"] = "09:00-17:00"
		}},
		{"AddressKeysPresent", []string{"address.city", "address.region"}, []string{"Leeds", ""}, func(l map[string]any) {
			a := l["address"].(map[string]any)
			a["city"] = "Leeds"
			delete(a, "region")
		}},
		{"ContactsKeyPresent", []string{"contacts.phone"}, []string{""}, func(l map[string]any) {
			delete(l["contacts"].(map[string]any), "phone")
		}},
		{"LinkProviderIsOneUnit", []string{"links.deliveroo.enabled"}, []string{"false"}, func(l map[string]any) {
			l["links"].(map[string]any)["deliveroo"] = map[string]any{"enabled": false}
		}},
		{"NewLinkProvider", []string{"links.ubereats.enabled"}, []string{"true"}, func(l map[string]any) {
			l["links"].(map[string]any)["ubereats"] = map[string]any{"enabled": true}
		}},
		{"ZonesAreOneUnit", []string{"zones.0.name"}, []string{"Garden"}, func(l map[string]any) {
			l["zones"] = map[string]any{"Garden": map[string]any{"name": "Garden"}}
		}},
		{"StateAbsentKept", []string{"description"}, []string{"New text"}, func(l map[string]any) {
			l["description"] = "New text"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			created := h.Do("POST", "/locations", rich(title("Keep")), h.Admin()).Expect(t, 201, "").Map(t)
			id := created["_id"].(string)
			before := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			want := clone(t, before)
			c.change(want)
			want["title"], want["geo"] = "Renamed "+id, []any{1.5, 2.5}

			hdr := append([]string{"_id", "title", "geo_longitude", "geo_latitude"}, c.cols...)
			row := append([]string{id, "Renamed " + id, "1.5", "2.5"}, c.cells...)
			op := importFile(h, "dryRun=false", csvOf(hdr, row))
			if counts(op) != [4]int{1, 1, 0, 0} {
				t.Fatalf("operation = %v; errors %v", op, column(t, results(h, op), "error"))
			}
			got := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			delete(got, "updated")
			delete(want, "updated")
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Fatalf("location =\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// clone deep-copies a decoded JSON object.
func clone(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
