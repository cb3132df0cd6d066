package locationcsv_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestImportValuesDynamoDBCannotHold: a row whose JSON column holds a value
// DynamoDB cannot store fails with a reason naming the column; the other
// rows are imported and the operation ends DONE. The dry run reports the
// same rows.
func TestImportValuesDynamoDBCannotHold(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)
	file := csvOf(
		[]string{"title", "geo_longitude", "geo_latitude", "extended_json"},
		[]string{title("Good"), "-0.1", "51.5", `{"n":1e125}`},
		[]string{title("Huge"), "-0.1", "51.5", `{"n":1e308}`},
		[]string{title("Good"), "-0.1", "51.5", ""},
		[]string{title("Deep"), "-0.1", "51.5", deep},
		[]string{title("Good"), "-0.1", "51.5", `{"a":[1,"b",{"c":-1e-130}]}`},
	)
	wantErrs := []string{"", "extended_json: number 1e308 is out of range", "", "extended_json: is nested deeper than 31 levels", ""}
	for _, tc := range []struct {
		name, query string
		counts      [4]int // a dry run counts the rows it would import as skipped
	}{{"DryRun", "", [4]int{5, 0, 3, 2}}, {"Import", "dryRun=false", [4]int{5, 3, 0, 2}}} {
		t.Run(tc.name, func(t *testing.T) {
			op := importFile(h, tc.query, file)
			if op["status"] != "DONE" || counts(op) != tc.counts {
				t.Fatalf("operation = %v", op)
			}
			errs := column(t, results(h, op), "error")
			for i, want := range wantErrs {
				if (want == "") != (errs[i] == "") || !strings.HasPrefix(errs[i], want) {
					t.Errorf("row %d error = %q, want %q...", i+1, errs[i], want)
				}
			}
		})
	}
}

// TestFormulaCells: text cells that a spreadsheet would run as formulas are
// written with a leading apostrophe (export and results file); numbers of
// numeric columns are not; import removes the apostrophe, so the exported
// file imported again keeps the values; the API returns text as stored.
func TestFormulaCells(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	titles := []string{`=HYPERLINK("x")`, `@SUM(1+1)`, `'=already quoted`}
	ids := map[string]string{}
	for _, ti := range titles {
		l := h.Do("POST", "/locations", map[string]any{"title": ti, "geo": []float64{-5, -33.5}, "tags": []string{"-tag", "+x"}}, h.Admin()).Expect(t, 201, "").Map(t)
		if l["title"] != ti {
			t.Fatalf("title = %q, want %q", l["title"], ti)
		}
		ids[l["_id"].(string)] = ti
	}
	recs := results(h, startExport(h, nil))
	byID := map[string]int{}
	for i, id := range column(t, recs, "_id") {
		byID[id] = i
	}
	wantCells := map[string]string{`=HYPERLINK("x")`: `'=HYPERLINK("x")`, `@SUM(1+1)`: `'@SUM(1+1)`, `'=already quoted`: `''=already quoted`}
	for id, ti := range ids {
		i := byID[id]
		if got := column(t, recs, "title")[i]; got != wantCells[ti] {
			t.Errorf("exported title = %q, want %q", got, wantCells[ti])
		}
		if got := column(t, recs, "geo_longitude")[i]; got != "-5" {
			t.Errorf("exported geo_longitude = %q, want -5", got)
		}
		if got := column(t, recs, "tags")[i]; got != "'-tag|+x" {
			t.Errorf("exported tags = %q, want '-tag|+x", got)
		}
	}

	imp := importFile(h, "dryRun=false", csvOf(recs...))
	if counts(imp) != [4]int{3, 0, 3, 0} {
		t.Fatalf("re-import = %v", imp)
	}
	res := results(h, imp)
	for i, id := range column(t, res, "locationId") {
		ti := ids[id]
		if got := column(t, res, "title")[i]; got != wantCells[ti] {
			t.Errorf("results title = %q, want %q", got, wantCells[ti])
		}
		if got := column(t, res, "geo_longitude")[i]; got != "-5" {
			t.Errorf("results geo_longitude = %q, want -5", got)
		}
		l := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if l["title"] != ti || strings.Join(anyStrings(l["tags"]), "|") != "-tag|+x" {
			t.Errorf("after re-import: title %q tags %v, want %q", l["title"], l["tags"], ti)
		}
	}

	t.Run("FailedRowEchoesEscaped", func(t *testing.T) {
		op := importFile(h, "", csvOf([]string{"title", "geo_longitude", "geo_latitude"}, []string{"=cmd|' /C calc'!A0", "-5+cmd", "-33.5"}))
		res := results(h, op)
		if got := column(t, res, "title")[0]; got != "'=cmd|' /C calc'!A0" {
			t.Errorf("results title = %q", got)
		}
		if got := column(t, res, "geo_longitude")[0]; got != "'-5+cmd" {
			t.Errorf("results geo_longitude = %q", got)
		}
		if got := column(t, res, "error")[0]; !strings.HasPrefix(got, "geo_longitude: must be a number") {
			t.Errorf("error = %q", got)
		}
	})
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
