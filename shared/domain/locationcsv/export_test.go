package locationcsv_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// rich returns a create body that uses every field of a location.
func rich(title string) map[string]any {
	return map[string]any{
		"title":                       title,
		"description":                 "Our flagship, \"best\" in town.\nOpen late.",
		"state":                       "PENDING",
		"mainImageUrl":                "https://img.example.com/main.jpg",
		"listingImageUrl":             "https://img.example.com/list.jpg",
		"mapPinImageUrl":              "https://img.example.com/pin.png",
		"openingHours":                map[string]any{"monday": "08:00-22:00", "sunday": "closed"},
		"alternativeOpeningHoursText": "<p>Open <b>late</b>, really</p>",
		"facilities":                  []string{"wifi", "baby|changing", `back\slash`},
		"services":                    map[string]any{"checkins": true, "pre_order": true, "delivery": false},
		"buttons": []map[string]any{
			{"title": "Order ahead", "style": "PRIMARY", "action": "PREORDER", "properties": map[string]any{"url": "app://preorder"}},
		},
		"links": map[string]any{
			"deliveroo": map[string]any{"title": "Deliveroo", "parameters": "id=123", "enabled": true},
			"opentable": map[string]any{"enabled": false},
		},
		"VATnumber": "GB123456789",
		"address": map[string]any{
			"address": "1 High Street", "town": "London", "country": "GB", "postcode": "W1 1AA",
			"line1": "1 High Street", "city": "London", "region": "Greater London", "postalCode": "W1 1AA",
			"googleMapsShortUrl": "https://goo.gl/maps/abc",
		},
		"contacts": map[string]any{"email": "soho@example.com", "phone": "+44 20 7946 0958"},
		"beacons":  []map[string]any{{"enabled": "true", "minor": "1", "major": "2", "uuid": "f7826da6-4fa2-4e98-8024-bc5b71e0893e"}},
		"ordering": map[string]any{"extendedFields": map[string]any{
			"PREORDER": map[string]any{"note": []map[string]any{{"title": "Allergies", "description": "Tell us"}}},
		}},
		"geo":                []float64{-0.1337, 51.5136},
		"regions":            []string{"London", "South"},
		"tags":               []string{"flagship", "late"},
		"timezone":           "Europe/London",
		"zones":              map[string]any{"Terrace": map[string]any{"name": "Terrace", "tables": []string{"T1", "T2"}}, "bar": map[string]any{"tables": []string{"B1"}}},
		"extended":           map[string]any{"fid": 12, "nested": map[string]any{"a": []any{1, "x"}}},
		"deliveryBoundaries": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{-0.1, 51.5}, {-0.2, 51.5}, {-0.1, 51.6}, {-0.1, 51.5}}}},
	}
}

func startExport(h *ts.Harness, body any) map[string]any {
	h.T.Helper()
	op := h.Do("POST", "/locations/exports", body, h.Admin(), ts.Headers{"x-platform-req-nonce", nonce()}).Expect(h.T, 202, "").Map(h.T)
	return h.WaitOperation(op["_id"].(string))
}

// TestExportRoundTrip: exporting and re-importing the file with
// dryRun=false changes no location.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	var ids []string
	for _, body := range []map[string]any{
		rich("Soho"),
		{"title": "Plain, with comma", "geo": []float64{2.35, 48.85}},
		{"title": "Retired", "geo": []float64{151.2093, -33.8688}, "state": "ACTIVE", "tags": []string{"x"}},
	} {
		l := h.Do("POST", "/locations", body, h.Admin()).Expect(t, 201, "").Map(t)
		ids = append(ids, l["_id"].(string))
	}
	h.Do("PUT", "/locations/"+ids[2], map[string]any{"state": "RETIRED"}, h.Admin()).Expect(t, 200, "")
	before := map[string]map[string]any{}
	for _, id := range ids {
		before[id] = h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	}

	op := startExport(h, nil)
	if op["status"] != "DONE" || counts(op)[0] != 3 || op["name"] != "export" {
		t.Fatalf("export = %v", op)
	}
	recs := results(h, op)
	if got := column(t, recs, "_id"); len(got) != 3 {
		t.Fatalf("exported ids = %v", got)
	}
	for _, col := range []string{"address.line1", "address.googleMapsShortUrl", "contacts.email", "services.checkins", "openingHours.monday", "zones.1.name", "zones.1.key", "links.deliveroo.parameters", "links.opentable.enabled", "ordering_json", "deliveryBoundaries_json", "created", "updated"} {
		column(t, recs, col) // fails the test when absent
	}
	file := csvOf(recs...)

	h.Clock.Advance(3600e9) // a changed location would get a later `updated`
	imp := importFile(h, "dryRun=false", file)
	if imp["status"] != "DONE" || counts(imp) != [4]int{3, 0, 3, 0} {
		t.Fatalf("re-import = %v", imp)
	}
	res := results(h, imp)
	if got := strings.Join(column(t, res, "action"), ","); got != "updated,updated,updated" {
		t.Fatalf("actions = %q; errors %v", got, column(t, res, "error"))
	}
	for _, id := range ids {
		after := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if !reflect.DeepEqual(before[id], after) {
			b, _ := json.Marshal(before[id])
			a, _ := json.Marshal(after)
			t.Errorf("location %s changed:\nbefore %s\nafter  %s", id, b, a)
		}
	}
	// The same file as a dry run agrees.
	dry := importFile(h, "", file)
	if counts(dry) != [4]int{3, 0, 3, 0} {
		t.Fatalf("dry run = %v", dry)
	}
}

// TestExportFilters: filters and limit select the exported locations.
func TestExportFilters(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	for _, l := range []map[string]any{
		{"title": "A", "geo": []float64{0, 0}, "tags": []string{"Red"}, "regions": []string{"north"}},
		{"title": "B", "geo": []float64{0, 0}, "tags": []string{"blue"}, "regions": []string{"south"}, "state": "PENDING"},
		{"title": "C", "geo": []float64{0, 0}, "tags": []string{"red", "blue"}},
		{"title": "D", "geo": []float64{0, 0}},
	} {
		h.Do("POST", "/locations", l, h.Admin()).Expect(t, 201, "")
	}
	cases := []struct {
		name string
		body any
		want string
	}{
		{"All", nil, "A,B,C,D"},
		{"EmptyBody", map[string]any{}, "A,B,C,D"},
		{"Limit", map[string]any{"limit": 2}, "A,B"},
		{"State", map[string]any{"filters": map[string]any{"state": "PENDING"}}, "B"},
		{"States", map[string]any{"filters": map[string]any{"state": "ACTIVE,PENDING"}}, "A,B,C,D"},
		{"StateLowerCase", map[string]any{"filters": map[string]any{"state": "pending"}}, "B"},
		{"StatesMixedCase", map[string]any{"filters": map[string]any{"state": "Active, pEnding"}}, "A,B,C,D"},
		{"TagsAny", map[string]any{"filters": map[string]any{"tags": []string{"RED"}}}, "A,C"},
		{"Regions", map[string]any{"filters": map[string]any{"regions": []string{"south", "north"}}}, "A,B"},
		{"Combined", map[string]any{"limit": 1, "filters": map[string]any{"tags": []string{"blue"}, "state": "ACTIVE"}}, "C"},
		{"NothingMatches", map[string]any{"filters": map[string]any{"tags": []string{"green"}}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := startExport(h, c.body)
			recs := results(h, op)
			if got := strings.Join(column(t, recs, "title"), ","); got != c.want {
				t.Fatalf("titles = %q, want %q", got, c.want)
			}
		})
	}
}

// TestExportRequestValidation: bad export bodies are 422 and start nothing.
func TestExportRequestValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	cases := []struct {
		name string
		body any
	}{
		{"MalformedJSON", `{"limit":`},
		{"UnknownField", map[string]any{"limits": 3}},
		{"LimitZero", map[string]any{"limit": 0}},
		{"LimitTooLarge", map[string]any{"limit": 1000001}},
		{"LimitNotNumber", map[string]any{"limit": "ten"}},
		{"BadState", map[string]any{"filters": map[string]any{"state": "OPEN"}}},
		{"StateTooLong", map[string]any{"filters": map[string]any{"state": strings.Repeat("ACTIVE,", 10)}}},
		{"StateNotString", map[string]any{"filters": map[string]any{"state": []string{"ACTIVE"}}}},
		{"TagsNotArray", map[string]any{"filters": map[string]any{"tags": "red"}}},
		{"EmptyTag", map[string]any{"filters": map[string]any{"tags": []string{" "}}}},
		{"UnknownFilter", map[string]any{"filters": map[string]any{"city": "x"}}},
		{"NotAnObject", `[1]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.Do("POST", "/locations/exports", c.body, h.Admin(), ts.Headers{"x-platform-req-nonce", nonce()}).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("MissingNonce", func(t *testing.T) {
		h.Do("POST", "/locations/exports", nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("NotDoneYetIs404", func(t *testing.T) {
		h.Do("GET", "/locations/exports/0123456789abcdef01234567", nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
}

// TestExportRepeatedNonce: a repeated export call answers the same
// operation and exports once.
func TestExportRepeatedNonce(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	n := nonce()
	body := map[string]any{"limit": 5}
	a := h.Do("POST", "/locations/exports", body, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 202, "").Map(t)
	if a["result"] != nil || a["error"] != nil || a["isRetryable"] != false || a["metadata"].(map[string]any)["limit"] != float64(5) {
		t.Fatalf("export operation = %v", a)
	}
	b := h.Do("POST", "/locations/exports", body, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 202, "").Map(t)
	if a["_id"] != b["_id"] {
		t.Fatalf("ids %v and %v", a["_id"], b["_id"])
	}
	h.Do("POST", "/locations/exports", map[string]any{"limit": 6}, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 409, "CONFLICT")
	h.WaitOperation(a["_id"].(string))
}

// TestReimportResultsFile: a results file (with its locationId, action and
// error columns) can be imported again; those columns are ignored and not
// repeated.
func TestReimportResultsFile(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	first := importFile(h, "dryRun=false", header+",tags\nA,1,2,x\nB,3,4,\n,5,6,\n")
	recs := results(h, first)
	again := importFile(h, "dryRun=false", csvOf(recs...))
	if counts(again) != [4]int{3, 0, 2, 1} {
		t.Fatalf("re-import = %v", again)
	}
	res := results(h, again)
	if got := strings.Join(res[0], ","); got != header+",tags,locationId,action,error" {
		t.Fatalf("header = %q", got)
	}
	if got := strings.Join(column(t, res, "action"), ","); got != "updated,updated," {
		t.Fatalf("actions = %q", got)
	}
}
