package awardcsv_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/job"
	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// TestFaults imports a file that grants some awards twice under faults:
// every award holds exactly its rows' points, the results file lists each
// row once in order with what its award held after it (checkOnce), and
// each grant recorded one action.
func TestFaults(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, h *ts.Harness, jobs *job.Service, id string, ev events.S3Event)
	}{
		{"CrashAfterEveryCommit", func(t *testing.T, h *ts.Harness, jobs *job.Service, id string, ev events.S3Event) {
			// Every run stops right after its first commit, as if the
			// process died; each redelivery resumes at the checkpoint.
			if crashes := h.CrashAfterEveryCommit(jobs, id, ev); crashes < 2 {
				t.Fatalf("crashes = %d, want several", crashes)
			}
		}},
		{"TwoWorkers", func(t *testing.T, h *ts.Harness, jobs *job.Service, id string, ev events.S3Event) {
			// A second run finishes the job while the first stalls; the
			// first then stops without writing anything.
			h.TwoWorkers(jobs, ev)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := ts.New(t)
			capture := h.CaptureS3("jobs")
			g := newGrid(t, h, 10, 12, 80) // 200 rows, the last 80 grant awards again
			id, ev := startCaptured(t, h, capture, "dryRun=false&suppressEvents=false", g.file())
			jobs := h.Deps.Jobs
			defer func() { jobs.Crash = nil }()
			c.run(t, h, jobs, id, ev)
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
