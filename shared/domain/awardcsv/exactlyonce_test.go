package awardcsv_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// grid is a file of grants over users × perks: row i (from 1) grants i
// points of perk (i-1)/len(users) to user (i-1)%len(users), every award
// once; then the first `again` awards are granted 1000 more.
type grid struct {
	users, perks []string
	again        int
}

func newGrid(t *testing.T, h *ts.Harness, nUsers, nPerks, again int) grid {
	t.Helper()
	g := grid{users: users(t, h, nUsers), again: again}
	for i := 0; i < nPerks; i++ {
		g.perks = append(g.perks, newPerk(t, h, map[string]any{"points": pointsOf(0, 1_000_000)}))
	}
	return g
}

func (g grid) awards() int { return len(g.users) * len(g.perks) }
func (g grid) rows() int   { return g.awards() + g.again }

// row returns the user, perk and points of row i (from 1).
func (g grid) row(i int) (string, string, int) {
	if i > g.awards() {
		j := i - g.awards()
		u, p, _ := g.row(j)
		return u, p, 1000
	}
	return g.users[(i-1)%len(g.users)], g.perks[(i-1)/len(g.users)], i
}

func (g grid) file() string {
	var b strings.Builder
	b.WriteString("user_id,perk_id,points\n")
	for i := 1; i <= g.rows(); i++ {
		u, p, n := g.row(i)
		fmt.Fprintf(&b, "%s,%s,%d\n", u, p, n)
	}
	return b.String()
}

// startCaptured starts an import whose S3 events the test runs itself.
func startCaptured(t *testing.T, h *ts.Harness, c *ts.S3Capture, query, file string) (string, events.S3Event) {
	t.Helper()
	op := upload(h, query, file).Expect(t, 202, "").Map(t)
	ev := c.Next(t)
	if k := ev.Records[0].S3.Object.Key; !strings.HasSuffix(k, op["_id"].(string)+"/input.csv") {
		t.Fatalf("event key = %q", k)
	}
	return op["_id"].(string), ev
}

// checkOnce checks that the import applied every row of g exactly once:
// the operation counts every row imported, the results file lists each row
// once, in order, with the points its award held after it, and every
// award holds exactly its rows' points.
func checkOnce(t *testing.T, h *ts.Harness, id string, g grid) map[string]any {
	t.Helper()
	op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	n := g.rows()
	if op["status"] != "DONE" || counts(op) != [4]int{n, n, 0, 0} {
		t.Fatalf("operation = %v", op)
	}
	recs := results(h, op)
	if len(recs) != n+1 {
		t.Fatalf("results rows = %d, want %d", len(recs)-1, n)
	}
	for i := 1; i <= n; i++ {
		u, p, pts := g.row(i)
		want := pts
		if i > g.awards() {
			_, _, first := g.row(i - g.awards())
			want = first + pts
		}
		got := recs[i]
		if got[0] != u || got[1] != p || got[2] != strconv.Itoa(pts) || got[3] != "ok" || got[6] != strconv.Itoa(want) {
			t.Fatalf("results row %d = %q, want %s %s %d ok ... %d", i, got, u, p, pts, want)
		}
	}
	for ui, u := range g.users {
		held := awards(t, h, u)
		for pi, p := range g.perks {
			i := pi*len(g.users) + ui + 1
			want := i
			if i <= g.again {
				want += 1000
			}
			if held[p] != want {
				t.Fatalf("award of user %d perk %d = %d, want %d", ui, pi, held[p], want)
			}
		}
	}
	return op
}

// TestCrashAndResume: a run that stops mid-file (after committing some
// batches, without releasing its lease, as a crashed Lambda would) is
// resumed by the next delivery once the lease has expired, and every row
// is applied exactly once: each award holds exactly its rows' points, each
// grant recorded one action, and the results file lists each row once.
func TestCrashAndResume(t *testing.T) {
	t.Parallel()
	for _, query := range []string{"dryRun=false", "dryRun=false&suppressEvents=false"} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			c := h.CaptureS3("jobs")
			g := newGrid(t, h, 15, 10, 30) // 180 rows
			id, ev := startCaptured(t, h, c, query, g.file())
			jobs := h.Deps.Jobs
			at := ts.CrashOnceMidFile(jobs)
			defer func() { jobs.Crash = nil }()
			ctx := context.Background()
			if err := jobs.HandleS3(ctx, ev); err != nil {
				t.Fatal(err)
			}
			crashedAt := *at
			if crashedAt == 0 || crashedAt >= int64(g.rows()) {
				t.Fatalf("the run did not stop mid-file (at %d)", crashedAt)
			}
			mid := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if mid["status"] != "RUNNING" || counts(mid)[1] != int(crashedAt) {
				t.Fatalf("after the crash = %v", mid)
			}
			// A delivery while the crashed run's lease holds does nothing.
			jobs.StopBefore = 24 * time.Hour
			if err := jobs.HandleS3(ctx, ev); err != nil {
				t.Fatal(err)
			}
			jobs.StopBefore = 0
			if got := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); counts(got)[1] != int(crashedAt) {
				t.Fatalf("a delivery during the lease ran: %v", got)
			}
			h.Clock.Advance(job.DefaultLease + time.Second)
			if err := jobs.HandleS3(ctx, ev); err != nil {
				t.Fatal(err)
			}
			checkOnce(t, h, id, g)
			want := 0
			if strings.Contains(query, "suppressEvents=false") {
				want = len(g.perks) + 2 // the first 30 awards are the first two perks' of the 15 users
			}
			for _, u := range g.users {
				if n := len(granted(t, h, u)); n != want {
					t.Fatalf("AWARD_GRANTED actions of %s = %d, want %d", u, n, want)
				}
			}
		})
	}
}
