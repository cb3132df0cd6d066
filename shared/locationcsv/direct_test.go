package locationcsv_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/location"
	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// runCrashingBeforeMarkers runs the captured import id until it is DONE,
// each run stopping (as if the process died) when a chunk's new locations
// are written and its marker is not, at the run's second such chunk; the
// next delivery comes once the lease expired. It returns the crashes.
func runCrashingBeforeMarkers(t *testing.T, h *ts.Harness, id string, ev events.S3Event) (crashes int) {
	t.Helper()
	jobs := h.Deps.Jobs
	defer func() { jobs.CrashBeforeMarker = nil }()
	for run := 0; run < 30; run++ {
		calls := 0
		crashed := false
		jobs.CrashBeforeMarker = func() bool {
			calls++
			if calls == 2 && !crashed {
				crashed = true
				return true
			}
			return false
		}
		if err := jobs.HandleS3(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
		if crashed {
			crashes++
		}
		op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if op["status"] == "DONE" {
			return crashes
		}
		h.Clock.Advance(job.DefaultLease + time.Second)
	}
	t.Fatal("the import did not finish in 30 runs")
	return crashes
}

// TestCrashBeforeMarker: runs that die after a chunk's new locations were
// written (they are not in the chunk's transaction) and before its marker
// leave, once resumed, what an uninterrupted run leaves: the same counts,
// results file and locations (each created once, under the id its row
// derives, none twice).
func TestCrashBeforeMarker(t *testing.T) {
	const n = 160
	const prefix = "Marker"
	file := mixedFile(prefix, n)
	ref := func() outcome {
		h := ts.New(t)
		op := importFile(h, "dryRun=false", file)
		return outcomeOf(t, h, op["_id"].(string), prefix)
	}()
	h := ts.New(t)
	jobs := h.Deps.Jobs
	width := jobs.CommitWidth
	jobs.CommitWidth = 1 // a run commits its first chunk and stops at its second
	defer func() { jobs.CommitWidth = width }()
	capture := h.CaptureS3("jobs")
	id, ev := startCaptured(t, h, capture, file)
	if crashes := runCrashingBeforeMarkers(t, h, id, ev); crashes < 2 {
		t.Fatalf("crashes = %d, want at least 2", crashes)
	}
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
}

// TestCrashBeforeMarkerActions: with suppressEvents=false, a new location
// written again by a resumed run records its LOCATION_CREATED action once
// (the action's id derives from the row too); every row is applied once.
func TestCrashBeforeMarkerActions(t *testing.T) {
	const n = 150
	h := ts.New(t)
	capture := h.CaptureS3("jobs")
	op := upload(h, "dryRun=false&suppressEvents=false", rowsFile("Acts", n)).Expect(t, 202, "").Map(t)
	id := op["_id"].(string)
	ev := capture.Next(t)
	if crashes := runCrashingBeforeMarkers(t, h, id, ev); crashes < 1 {
		t.Fatalf("crashes = %d, want at least 1", crashes)
	}
	checkOnce(t, h, id, "Acts", n)
	ids := column(t, results(h, h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)), "locationId")
	for i, lid := range ids {
		acts, err := h.Deps.Actions.ByLocation(context.Background(), h.Tenant.ID, lid, 10)
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for _, a := range acts {
			types = append(types, a.Type)
		}
		if got := strings.Join(types, ","); got != "LOCATION_CREATED" {
			t.Fatalf("row %d: actions of %s = %s, want one LOCATION_CREATED", i+1, lid, got)
		}
	}
}

// TestImportIDs: a new location's id derives from the operation and the
// row (the same on every run of the row), and differs between rows and
// operations.
func TestImportIDs(t *testing.T) {
	h := ts.New(t)
	file := rowsFile("Ids", 3)
	a := importFile(h, "dryRun=false", file)
	b := importFile(h, "dryRun=false", strings.ReplaceAll(file, "Ids", "Sdi"))
	idsA, idsB := column(t, results(h, a), "locationId"), column(t, results(h, b), "locationId")
	seen := map[string]bool{}
	for _, id := range append(idsA, idsB...) {
		if seen[id] || len(id) != 24 {
			t.Fatalf("ids = %v and %v", idsA, idsB)
		}
		seen[id] = true
	}
	// The first row starts after the header.
	off := int64(len(strings.SplitN(file, "\n", 2)[0]) + 1)
	if got, want := idsA[0], location.ImportID(a["_id"].(string), off); got != want {
		t.Fatalf("id of row 1 = %s, want %s", got, want)
	}
}
