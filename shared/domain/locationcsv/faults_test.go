package locationcsv_test

import (
	"fmt"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// mixedFile returns n rows titled "<prefix> <i>" whose later rows depend
// on earlier ones: every 5th row updates the location row i-3 created (a
// new description), every 7th row the one the row just before created
// (the same transaction cannot hold both), every 11th row is invalid (its
// longitude), and the others create locations.
func mixedFile(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("title,geo_longitude,geo_latitude,description,_id\n")
	for i := 1; i <= n; i++ {
		switch {
		case i%11 == 0:
			fmt.Fprintf(&b, "%s %03d,not a number,1,bad,\n", prefix, i)
		case i%5 == 0 && i > 3:
			fmt.Fprintf(&b, "%s %03d,%d.5,1.5,updated by row %d,\n", prefix, i-3, i%180, i)
		case i%7 == 0:
			fmt.Fprintf(&b, "%s %03d,%d.5,1.75,updated by row %d,\n", prefix, i-1, i%180, i)
		default:
			fmt.Fprintf(&b, "%s %03d,%d.5,1.25,row %d,\n", prefix, i, i%180, i)
		}
	}
	return b.String()
}

// outcome is what an import left: its counts, its results file (location
// ids numbered in order of appearance, so two tenants' files compare) and
// the locations with the prefix by title (their descriptions).
type outcome struct {
	counts    [4]int
	results   string
	locations map[string]string
}

func outcomeOf(t *testing.T, h *ts.Harness, id, prefix string) outcome {
	t.Helper()
	op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if op["status"] != "DONE" {
		t.Fatalf("operation = %v", op)
	}
	recs := results(h, op)
	idCol := -1
	for i, c := range recs[0] {
		if c == "locationId" {
			idCol = i
		}
	}
	if idCol < 0 {
		t.Fatalf("no locationId column in %v", recs[0])
	}
	seen := map[string]string{}
	var sb strings.Builder
	for _, r := range recs {
		if v := r[idCol]; v != "" && v != "locationId" {
			if _, ok := seen[v]; !ok {
				seen[v] = fmt.Sprintf("#%d", len(seen)+1)
			}
			r[idCol] = seen[v]
		}
		sb.WriteString(strings.Join(r, ",") + "\n")
	}
	out := outcome{counts: counts(op), results: sb.String(), locations: map[string]string{}}
	list := h.Do("GET", "/locations?limit=1000&search="+strings.ReplaceAll(prefix, " ", "%20"), nil, h.Admin()).Expect(t, 200, "").Map(t)
	for _, it := range list["items"].([]any) {
		l := it.(map[string]any)
		title := l["title"].(string)
		if _, dup := out.locations[title]; dup {
			t.Fatalf("two locations titled %q", title)
		}
		out.locations[title], _ = l["description"].(string)
	}
	return out
}

// TestFaults runs a file whose rows depend on each other under faults and
// compares what it left with an uninterrupted run of the same file in
// another tenant: the counts, the results file (in row order) and the
// locations are the same, so no row was applied twice or lost.
func TestFaults(t *testing.T) {
	t.Parallel()
	const n = 160
	const prefix = "Fault"
	file := mixedFile(prefix, n)
	ref := func() outcome {
		h := ts.New(t)
		op := importFile(h, "dryRun=false", file)
		return outcomeOf(t, h, op["_id"].(string), prefix)
	}()
	if ref.counts[0] != n || ref.counts[1] == 0 || ref.counts[3] == 0 || strings.Count(ref.results, ",updated,") == 0 {
		t.Fatalf("reference run = %v\n%s", ref.counts, ref.results)
	}
	for _, f := range ts.JobFaults(3) {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			capture := h.CaptureS3("jobs")
			id, ev := startCaptured(t, h, capture, file)
			jobs := h.Deps.Jobs
			defer func() { jobs.Crash, jobs.AfterDirect = nil, nil }()
			f.Run(h, jobs, id, ev)
			got := outcomeOf(t, h, id, prefix)
			if got.counts != ref.counts {
				t.Errorf("counts = %v, want %v", got.counts, ref.counts)
			}
			if got.results != ref.results {
				t.Errorf("results file =\n%s\nwant\n%s", got.results, ref.results)
			}
			if len(got.locations) != len(ref.locations) {
				t.Errorf("locations = %d, want %d", len(got.locations), len(ref.locations))
			}
			for title, d := range ref.locations {
				if got.locations[title] != d {
					t.Errorf("location %q: description %q, want %q", title, got.locations[title], d)
				}
			}
		})
	}
}

// TestImportTitlesOfEarlierRows: a row finds by title the location an
// earlier row of the same file created or renamed (the run's index of
// titles learns of each commit), ignoring case and spaces around it.
func TestImportTitlesOfEarlierRows(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	camden := h.Do("POST", "/locations", map[string]any{"title": "Camden", "geo": []float64{-0.14, 51.54}}, h.Admin()).Expect(t, 201, "").Map(t)
	file := csvOf(
		[]string{"_id", "title", "geo_longitude", "geo_latitude", "description"},
		[]string{camden["_id"].(string), "Renamed Camden", "-0.14", "51.54", "renamed"},
		[]string{"", "renamed camden", "-0.14", "51.54", "found by its new title"},
		[]string{"", "New Place", "1", "2", "created"},
		[]string{"", " NEW PLACE ", "1", "2", "found by the title a row created"},
		[]string{"", "Camden", "3", "4", "the old title is free"},
	)
	op := importFile(h, "dryRun=false", file)
	if op["status"] != "DONE" || counts(op) != [4]int{5, 5, 0, 0} {
		t.Fatalf("operation = %v", op)
	}
	recs := results(h, op)
	if got, want := strings.Join(column(t, recs, "action"), ","), "updated,updated,created,updated,created"; got != want {
		t.Fatalf("actions = %s, want %s", got, want)
	}
	ids := column(t, recs, "locationId")
	if ids[0] != camden["_id"] || ids[1] != camden["_id"] || ids[3] != ids[2] || ids[4] == camden["_id"] || ids[4] == ids[2] {
		t.Fatalf("locationIds = %v", ids)
	}
	got := h.Do("GET", "/locations/"+ids[2], nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got["title"] != "NEW PLACE" || got["description"] != "found by the title a row created" {
		t.Fatalf("location = %v", got)
	}
}
