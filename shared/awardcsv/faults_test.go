package awardcsv_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/operation"
	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// deliverAll delivers ev to n runs at once (S3 delivering an event more
// than once).
func deliverAll(t *testing.T, jobs *job.Service, ev events.S3Event, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = jobs.HandleS3(context.Background(), ev)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

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
			// process died; each redelivery (three at once) after the
			// lease expired resumes at the checkpoint.
			var mu sync.Mutex
			crashes := 0
			jobs.Crash = func(cp operation.Checkpoint) bool {
				mu.Lock()
				defer mu.Unlock()
				if cp.InputDone {
					return false
				}
				crashes++
				return true
			}
			deliverAll(t, jobs, ev, 1)
			for runs := 1; ; runs++ {
				if op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); op["status"] == "DONE" {
					break
				}
				if runs > 50 {
					t.Fatal("not done after 50 runs")
				}
				h.Clock.Advance(job.DefaultLease + time.Second)
				deliverAll(t, jobs, ev, 3)
			}
			if crashes < 2 {
				t.Fatalf("crashes = %d, want several", crashes)
			}
		}},
		{"TwoWorkers", func(t *testing.T, h *ts.Harness, jobs *job.Service, id string, ev events.S3Event) {
			// The first run stalls after its first commit until its lease
			// expired; a second run claims the operation and finishes
			// it; then the first run goes on: its next commit finds the
			// lease lost and it stops without writing anything.
			stalled := false
			jobs.Crash = func(cp operation.Checkpoint) bool {
				if stalled {
					return false
				}
				stalled = true
				h.Clock.Advance(job.DefaultLease + time.Second)
				deliverAll(t, jobs, ev, 1)
				return false
			}
			deliverAll(t, jobs, ev, 1)
			if !stalled {
				t.Fatal("the first run did not commit")
			}
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
