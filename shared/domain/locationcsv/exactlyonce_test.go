package locationcsv_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/locationcsv"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// rowsFile returns a file of n new locations titled "<prefix> <i>".
func rowsFile(prefix string, n int) string {
	var b strings.Builder
	b.WriteString("title,geo_longitude,geo_latitude,tags\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %03d,%d.5,%d.25,t%d|batch\n", prefix, i, i%180, i%90, i)
	}
	return b.String()
}

// startCaptured starts an import whose S3 events the test runs itself. It
// records its actions (suppressEvents=false), so that checkOnce counts
// them.
func startCaptured(t *testing.T, h *ts.Harness, c *ts.S3Capture, file string) (string, events.S3Event) {
	t.Helper()
	op := upload(h, "dryRun=false&suppressEvents=false", file).Expect(t, 202, "").Map(t)
	ev := c.Next(t)
	if k := ev.Records[0].S3.Object.Key; !strings.HasSuffix(k, op["_id"].(string)+"/input.csv") {
		t.Fatalf("event key = %q", k)
	}
	return op["_id"].(string), ev
}

// checkOnce checks that an import of n new rows applied every row exactly
// once: the results list each row once as created, the tenant has n
// locations with the prefix, and n LOCATION_CREATED actions, one per
// location, numbered 1 .. n by the tenant's feed head (the tenant records
// nothing else).
func checkOnce(t *testing.T, h *ts.Harness, id, prefix string, n int) map[string]any {
	t.Helper()
	op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if op["status"] != "DONE" || counts(op) != [4]int{n, n, 0, 0} {
		t.Fatalf("operation = %v", op)
	}
	recs := results(h, op)
	titles := column(t, recs, "title")
	actions := column(t, recs, "action")
	ids := column(t, recs, "locationId")
	if len(titles) != n {
		t.Fatalf("results rows = %d, want %d", len(titles), n)
	}
	seen := map[string]bool{}
	for i := range titles {
		if want := fmt.Sprintf("%s %03d", prefix, i+1); titles[i] != want || actions[i] != "created" || seen[ids[i]] {
			t.Fatalf("results row %d = %q %q %q", i+1, titles[i], actions[i], ids[i])
		}
		seen[ids[i]] = true
	}
	list := h.Do("GET", "/locations?limit=1000&search="+strings.ReplaceAll(prefix, " ", "%20"), nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got := len(list["items"].([]any)); got != n {
		t.Fatalf("locations = %d, want %d", got, n)
	}
	ctx := context.Background()
	created, _, err := h.Deps.Actions.List(ctx, h.Tenant.ID, action.Scope{}, action.Filter{Types: []string{locationcsv.ActionLocationCreated}}, nil, 2*n+1)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]bool{}
	for _, a := range created {
		at[a.Context.Location.ID] = true
	}
	if len(created) != n || len(at) != n {
		t.Fatalf("LOCATION_CREATED actions = %d at %d locations, want %d at %d", len(created), len(at), n, n)
	}
	if seq, _, err := h.Deps.Actions.Head(ctx, h.Tenant.ID, action.ScopeTenant); err != nil || seq != int64(n) {
		t.Fatalf("the tenant's feed head = %d (%v), want %d", seq, err, n)
	}
	return op
}

// TestCrashAndResume: a run that stops mid-file (after committing some
// batches, without releasing its lease, as a crashed Lambda would) is
// resumed by the next delivery once the lease has expired, and every row
// is applied exactly once.
func TestCrashAndResume(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	const n = 600 // several chunks of new locations
	id, ev := startCaptured(t, h, c, rowsFile("Crash", n))
	jobs := h.Deps.Jobs
	at := ts.CrashOnceMidFile(jobs)
	defer func() { jobs.Crash = nil }()
	ctx := context.Background()
	if err := jobs.HandleS3(ctx, ev); err != nil {
		t.Fatal(err)
	}
	crashedAt := *at
	if crashedAt == 0 || crashedAt >= n {
		t.Fatalf("the run did not stop mid-file (at %d)", crashedAt)
	}
	mid := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if mid["status"] != "RUNNING" || counts(mid)[1] != int(crashedAt) {
		t.Fatalf("after the crash = %v", mid)
	}
	t.Run("RedeliveryWhileLeasedDoesNothing", func(t *testing.T) {
		// The lease runs until its expiry; a delivery now does not wait
		// for it (StopBefore leaves it no time to) and leaves it alone.
		jobs.StopBefore = 24 * time.Hour
		defer func() { jobs.StopBefore = 0 }()
		if err := jobs.HandleS3(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if got := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); counts(got)[1] != int(crashedAt) {
			t.Fatalf("a delivery during the lease ran: %v", got)
		}
	})
	h.Clock.Advance(job.DefaultLease + time.Second)
	if err := jobs.HandleS3(ctx, ev); err != nil {
		t.Fatal(err)
	}
	op := checkOnce(t, h, id, "Crash", n)
	if op["status"] != "DONE" {
		t.Fatalf("operation = %v", op)
	}
}

// TestCrashOutOfOrder: a run whose chunks committed out of order (a later
// one committed, an earlier one never did) stops; the next run skips the
// rows of the committed chunks past the checkpoint and commits the
// others: every row is applied once and listed once, in order.
func TestCrashOutOfOrder(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	const n = 800 // chunks of 250 new locations: one commits past the held one
	id, ev := startCaptured(t, h, c, rowsFile("Order", n))
	jobs := h.Deps.Jobs
	defer func() { jobs.Crash, jobs.WriteChunk = nil, nil }()
	h.CrashOutOfOrder(jobs, id, ev)
	checkOnce(t, h, id, "Order", n)
}

// TestDuplicateEvents: the same S3 event delivered several times at once
// runs the job once.
func TestDuplicateEvents(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	const n = 120
	id, ev := startCaptured(t, h, c, rowsFile("Dup", n))
	jobs := h.Deps.Jobs
	ts.DeliverAll(t, jobs, ev, 4)
	checkOnce(t, h, id, "Dup", n)
	// A late duplicate after the end does nothing either.
	if err := jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, h, id, "Dup", n)
}

// TestContinuation: a run that reaches its limit commits, writes a
// continue object and gives its lease up; the continue object's event runs
// the next part, until the job is done.
func TestContinuation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	const n = 130
	id, ev := startCaptured(t, h, c, rowsFile("Cont", n))
	jobs := h.Deps.Jobs
	jobs.MaxRowsPerRun = 40
	_, runs := h.RunJob(jobs, c, id, ev, 11, func(_ int, _ map[string]any, next events.S3Event) {
		key := next.Records[0].S3.Object.Key
		if !strings.Contains(key, id+"/continue-") || !strings.HasSuffix(key, ".json") {
			t.Fatalf("continue event key = %q", key)
		}
		if _, _, ok := job.ParseKey(key); !ok {
			t.Fatalf("ParseKey(%q) failed", key)
		}
	})
	if runs != 4 { // 40 + 40 + 40 + 10 rows
		t.Fatalf("runs = %d, want 4", runs)
	}
	checkOnce(t, h, id, "Cont", n)
}

// TestUnknownOperationEventIgnored: an event for a key of no operation, or
// outside the jobs layout, or of another bucket, is ignored without error.
func TestUnknownOperationEventIgnored(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	bucket := h.Deps.Config.Buckets.Files
	for _, key := range []string{
		"jobs/" + h.Tenant.ID + "/0123456789abcdef01234567/input.csv",
		"jobs/" + h.Tenant.ID + "/0123456789abcdef01234567/continue-00001-1.json",
		"jobs/not+a+tenant/x/input.csv",
		"jobs/" + h.Tenant.ID + "/0123456789abcdef01234567/results.csv",
		"other/input.csv",
	} {
		ev := events.S3Event{Records: []events.S3EventRecord{{EventSource: "aws:s3", EventName: "ObjectCreated:Put", S3: events.S3Entity{Bucket: events.S3Bucket{Name: bucket}, Object: events.S3Object{Key: key}}}}}
		if err := h.Deps.Jobs.HandleS3(context.Background(), ev); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	ev := events.S3Event{Records: []events.S3EventRecord{{EventName: "ObjectCreated:Put", S3: events.S3Entity{Bucket: events.S3Bucket{Name: "someone-elses"}, Object: events.S3Object{Key: "jobs/" + h.Tenant.ID + "/0123456789abcdef01234567/input.csv"}}}}}
	if err := h.Deps.Jobs.HandleS3(context.Background(), ev); err != nil {
		t.Errorf("other bucket: %v", err)
	}
}

// TestResumeReadsTheSameInput: a resumed run reads on only while the input
// file is the one the first run read (its ETag is in the checkpoint); a
// replaced file FAILS the operation with CONFLICT.
func TestResumeReadsTheSameInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// replace is the content written over input.csv after the crash
		// ("" writes nothing).
		replace func(file string) string
		status  string
	}{
		{"Unchanged", nil, "DONE"},
		{"RewrittenWithTheSameBytes", func(file string) string { return file }, "DONE"},
		{"Replaced", func(file string) string { return strings.Replace(file, "Etag 001", "Other 001", 1) }, "FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			capture := h.CaptureS3("jobs")
			const n = 600 // several chunks of new locations
			file := rowsFile("Etag", n)
			id, ev := startCaptured(t, h, capture, file)
			jobs := h.Deps.Jobs
			at := ts.CrashOnceMidFile(jobs)
			defer func() { jobs.Crash = nil }()
			ctx := context.Background()
			if err := jobs.HandleS3(ctx, ev); err != nil {
				t.Fatal(err)
			}
			if *at == 0 {
				t.Fatal("the run did not stop mid-file")
			}
			if c.replace != nil {
				body := c.replace(file)
				_, err := jobs.S3.PutObject(ctx, &s3.PutObjectInput{
					Bucket: aws.String(jobs.Bucket), Key: aws.String(job.InputKey(h.Tenant.ID, id)),
					Body: strings.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			h.Clock.Advance(job.DefaultLease + time.Second)
			if err := jobs.HandleS3(ctx, ev); err != nil {
				t.Fatal(err)
			}
			if c.status == "DONE" {
				checkOnce(t, h, id, "Etag", n)
				return
			}
			op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			e, _ := op["error"].(map[string]any)
			if op["status"] != "FAILED" || e["code"] != "CONFLICT" || e["message"] != "the input file changed while the job ran" {
				t.Fatalf("operation = %v", op)
			}
		})
	}
}

// TestCrashBeforeCommitEditedMeanwhile: a run that died between a chunk's
// direct writes and its commit left the chunk's new locations in the
// table, uncommitted; meanwhile a client renamed one of them. The next
// run creates the chunk's rows again under the same ids, as the file
// says: every row once, one location per row, and nothing left under the
// client's title. The run that died may be the first, or one that
// continued after a run that yielded.
func TestCrashBeforeCommitEditedMeanwhile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// yielded is the rows a first run commits before it yields.
		yielded int
	}{{"FirstRun", 0}, {"AfterAYield", 5}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := ts.New(t)
			capture := h.CaptureS3("jobs")
			const n = 20 // one chunk
			id, ev := startCaptured(t, h, capture, rowsFile("Left", n))
			jobs := h.Deps.Jobs
			defer func() { jobs.AfterDirect, jobs.MaxRowsPerRun = nil, 0 }()
			ctx := context.Background()
			if c.yielded > 0 {
				jobs.MaxRowsPerRun = int64(c.yielded)
				if err := jobs.HandleS3(ctx, ev); err != nil {
					t.Fatal(err)
				}
				jobs.MaxRowsPerRun = 0
				ev = capture.Next(t)
			}
			crash := errors.New("crash before the commit")
			jobs.AfterDirect = func(context.Context) error { return crash }
			if err := jobs.HandleS3(ctx, ev); !errors.Is(err, crash) {
				t.Fatalf("run = %v, want the crash", err)
			}
			jobs.AfterDirect = nil
			left := h.Do("GET", "/locations?limit=100&search=Left", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
			if len(left) != n {
				t.Fatalf("locations after the crash = %d, want %d", len(left), n)
			}
			var edited string
			for _, it := range left {
				if l := it.(map[string]any); l["title"] == fmt.Sprintf("Left %03d", n) {
					edited = l["_id"].(string)
				}
			}
			h.Do("PUT", "/locations/"+edited, map[string]any{"title": "Edited meanwhile", "geo": []float64{1, 2}}, h.Admin()).Expect(t, 200, "")

			h.Clock.Advance(job.DefaultLease + time.Second)
			if err := jobs.HandleS3(ctx, ev); err != nil {
				t.Fatal(err)
			}
			op := checkOnce(t, h, id, "Left", n)
			if ids := column(t, results(h, op), "locationId"); !slices.Contains(ids, edited) {
				t.Fatalf("results ids %v do not hold the edited location %s", ids, edited)
			}
			if got := h.Do("GET", "/locations?limit=100&search=Edited", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any); len(got) != 0 {
				t.Fatalf("found by the client's title: %v", got)
			}
			h.Do("GET", "/locations/"+edited, nil, h.Admin()).Expect(t, 200, "")
		})
	}
}
