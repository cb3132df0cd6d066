package awardcsv_test

import (
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestFaults imports a file that grants some awards twice under faults:
// every award holds exactly its rows' points, the results file lists each
// row once in order with what its award held after it (checkOnce), and
// each grant recorded one action.
func TestFaults(t *testing.T) {
	t.Parallel()
	for _, f := range ts.JobFaults(2) {
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			capture := h.CaptureS3("jobs")
			g := newGrid(t, h, 10, 12, 80) // 200 rows, the last 80 grant awards again
			id, ev := startCaptured(t, h, capture, "dryRun=false&suppressEvents=false", g.file())
			jobs := h.Deps.Jobs
			defer func() { jobs.Crash, jobs.AfterDirect = nil, nil }()
			f.Run(h, jobs, id, ev)
			checkOnce(t, h, id, g)
			want := map[string]int{}
			for i := 1; i <= g.rows(); i++ {
				u, _, _ := g.row(i)
				want[u]++
			}
			for _, u := range g.users {
				if n := len(granted(t, h, u)); n != want[u] {
					t.Errorf("AWARD_GRANTED actions of %s = %d, want %d", u, n, want[u])
				}
			}
		})
	}
}
