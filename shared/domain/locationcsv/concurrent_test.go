package locationcsv_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/location"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestConcurrentImportsCreateEachTitleOnce: two imports of the same new
// titles, started with different nonces and run at the same time, create
// each title once: the rows of the import that comes second to a title
// update (or skip) the location the first created, and a third import of
// the file then matches every title (issue 21: each title was created
// twice, and every later import of the file failed on its rows).
func TestConcurrentImportsCreateEachTitleOnce(t *testing.T) {
	const n = 3000
	h := ts.New(t)
	capture := h.CaptureS3("jobs")
	files := []string{rowsFile("Race", n), strings.ReplaceAll(rowsFile("Race", n), "|batch", "|other")}
	var ids []string
	var evs []func() error
	for _, f := range files {
		id, ev := startCaptured(t, h, capture, f)
		ids = append(ids, id)
		evs = append(evs, func() error { return h.Deps.Jobs.HandleS3(context.Background(), ev) })
	}
	var wg sync.WaitGroup
	errs := make([]error, len(evs))
	for i, run := range evs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = run() }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("import %d: %v", i+1, err)
		}
	}
	for i, id := range ids {
		op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got := counts(op); op["status"] != "DONE" || got[0] != n || got[3] != 0 {
			t.Fatalf("import %d = %v", i+1, op)
		}
		for j, a := range column(t, results(h, op), "action") {
			if a != "created" && a != "updated" {
				t.Fatalf("import %d row %d: action %q", i+1, j+1, a)
			}
		}
	}
	byTitle := map[string]int{}
	err := h.Deps.Locations.Each(context.Background(), h.Tenant.ID, location.Filter{}, func(l location.Location) error {
		byTitle[l.Title]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(byTitle), n; got != want {
		t.Errorf("titles = %d, want %d", got, want)
	}
	for i := 1; i <= n; i++ {
		title := fmt.Sprintf("Race %03d", i)
		if got, want := byTitle[title], 1; got != want {
			t.Fatalf("locations titled %q = %d, want %d", title, got, want)
		}
	}
	id, ev := startCaptured(t, h, capture, files[0])
	if err := h.Deps.Jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	again := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got := counts(again); again["status"] != "DONE" || got[0] != n || got[3] != 0 {
		t.Fatalf("the file imported again = %v", again)
	}
}
