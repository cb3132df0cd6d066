package locationcsv_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestImportBooleans: every boolean column (services.<service> and
// links.<provider>.enabled) reads the same spellings: true, false, yes, no,
// 1 and 0 in any case, surrounding spaces ignored; anything else is a row
// error naming the column.
func TestImportBooleans(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	const refused = "must be a boolean: true, false, yes, no, 1 or 0 (any case)"
	cases := []struct {
		name, cell string
		ok, want   bool
	}{
		{"True", "true", true, true},
		{"TrueUpper", "TRUE", true, true},
		{"Yes", "yes", true, true},
		{"YesMixed", "Yes", true, true},
		{"One", "1", true, true},
		{"Spaces", "  true ", true, true},
		{"False", "false", true, false},
		{"FalseMixed", "False", true, false},
		{"No", "no", true, false},
		{"NoUpper", "NO", true, false},
		{"Zero", "0", true, false},
		{"On", "on", false, false},
		{"Off", "off", false, false},
		{"Y", "y", false, false},
		{"N", "n", false, false},
		{"T", "t", false, false},
		{"F", "f", false, false},
		{"Two", "2", false, false},
		{"Maybe", "maybe", false, false},
	}
	for _, col := range []string{"services.checkins", "links.ubereats.enabled"} {
		t.Run(strings.ReplaceAll(col, ".", "_"), func(t *testing.T) {
			recs := [][]string{{"title", "geo_longitude", "geo_latitude", col}}
			for _, c := range cases {
				recs = append(recs, []string{title("Bool " + c.name), "1", "2", c.cell})
			}
			op := importFile(h, "dryRun=false", csvOf(recs...))
			res := results(h, op)
			errs, ids := column(t, res, "error"), column(t, res, "locationId")
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					if !c.ok {
						if want := col + ": " + refused; errs[i] != want || ids[i] != "" {
							t.Fatalf("error = %q (locationId %q), want %q", errs[i], ids[i], want)
						}
						return
					}
					if errs[i] != "" || ids[i] == "" {
						t.Fatalf("error = %q (locationId %q), want the row imported", errs[i], ids[i])
					}
					l := h.Do("GET", "/locations/"+ids[i], nil, h.Admin()).Expect(t, 200, "").Map(t)
					var got any
					if col == "services.checkins" {
						got = l["services"].(map[string]any)["checkins"]
					} else {
						got = l["links"].(map[string]any)["ubereats"].(map[string]any)["enabled"]
					}
					if got != c.want {
						t.Fatalf("%s = %v, want %v", col, got, c.want)
					}
				})
			}
		})
	}
}

// TestImportRowListsEveryError: a row's error cell lists its cell errors
// and the location's field problems (state, e-mail, URL, time zone, ...)
// together, in column then field order, whether or not the cells parsed.
func TestImportRowListsEveryError(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	cols := []string{"title", "geo_longitude", "geo_latitude", "state", "services.checkins", "contacts.email", "mainImageUrl", "timezone", "tags"}
	cases := []struct {
		name string
		row  []string
		want string
	}{
		{"StateAndCellErrors", []string{"A", "x", "2", "FOO", "maybe", "nobody", "", "", ""},
			"geo_longitude: must be a number|services.checkins: must be a boolean: true, false, yes, no, 1 or 0 (any case)|state: must be PENDING, ACTIVE or RETIRED|contacts.email: must be an e-mail address"},
		{"OnlyFieldProblems", []string{"A", "1", "2", "FOO", "", "nobody", "not a url", "Mars/Olympus", ""},
			"state: must be PENDING, ACTIVE or RETIRED|mainImageUrl: must be an absolute http or https URL of at most 2048 characters|contacts.email: must be an e-mail address|timezone: must be an IANA time zone name such as Europe/London"},
		{"MissingTitleAndBadState", []string{"", "1", "2", "closed", "", "", "", "", ""},
			"title: is required|state: must be PENDING, ACTIVE or RETIRED"},
		{"TooLongTitleAndTag", []string{strings.Repeat("t", 201), "1", "2", "", "", "", "", "", "ok|" + strings.Repeat("x", 101)},
			"title: must be at most 200 characters|tags[1]: must be at most 100 characters"},
		{"Good", []string{"Good row", "1", "2", "pending", "yes", "a@example.com", "", "Europe/London", "a|b"}, ""},
	}
	recs := [][]string{cols}
	for _, c := range cases {
		recs = append(recs, c.row)
	}
	op := importFile(h, "dryRun=true", csvOf(recs...))
	errs := column(t, results(h, op), "error")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if errs[i] != c.want {
				t.Fatalf("error =\n%q\nwant\n%q", errs[i], c.want)
			}
		})
	}
}
