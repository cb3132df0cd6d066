package main

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/testkit"
)

// TestRestartResumesStoppedJobs: an import whose run died with the stack
// (killed mid-file: the operation RUNNING, the dead run's lease held) was
// RUNNING for ever, and the same request answered it so. A stack that
// starts again resumes it from its checkpoint, as Lambda's retry would:
// it ends DONE with every row applied once, the same nonce answers the
// finished operation, and its results file is there.
func TestRestartResumesStoppedJobs(t *testing.T) {
	t.Parallel()
	h := testkit.New(t)
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	t.Cleanup(func() { jobs.Crash, jobs.Sleep = nil, nil })
	ctx := context.Background()

	const rows = 150
	var file strings.Builder
	file.WriteString("title,geo_longitude,geo_latitude\n")
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&file, "Restart %03d,%d.5,%d.25\n", i, i%180, i%90)
	}
	nonce := testkit.Nonce()
	post := func() map[string]any {
		t.Helper()
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		part, err := w.CreateFormFile("file", "locations.csv")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = part.Write([]byte(file.String()))
		_ = w.Close()
		return h.Do("POST", "/locations/imports?dryRun=false", body.Bytes(), h.Admin(),
			testkit.Headers{"Content-Type", w.FormDataContentType(), "x-platform-req-nonce", nonce}).Expect(t, 202, "").Map(t)
	}
	id := post()["_id"].(string)

	// The stack dies after the run's first commit mid-file.
	crashed := false
	jobs.Crash = func(cp operation.Checkpoint) bool {
		if !crashed && cp.Rows > 0 && !cp.InputDone {
			crashed = true
			return true
		}
		return false
	}
	if err := jobs.HandleS3(ctx, c.Next(t)); err != nil {
		t.Fatal(err)
	}
	jobs.Crash = nil
	if !crashed {
		t.Fatal("the run did not stop mid-file")
	}
	if again := post(); again["_id"] != id || again["status"] != "RUNNING" {
		t.Fatalf("the same request after the crash = %v", again)
	}

	// The stack starts again. Its jobs function is the harness's, on the
	// harness's clock: the wait for the dead run's lease advances it.
	st := testkit.Stack(t)
	h.OnS3("jobs", jobs.HandleS3)
	jobs.Sleep = func(d time.Duration) { h.Clock.Advance(d) }
	l := &local{template: h.Template, stack: st, deps: h.Deps}
	n, err := l.resumeJobs(ctx, func(tenantID string) bool { return tenantID == h.Tenant.ID })
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("resumed %d operations, want 1", n)
	}

	done := h.WaitOperation(id)
	res, _ := done["result"].(map[string]any)
	if done["status"] != "DONE" || res["total"] != float64(rows) || res["imported"] != float64(rows) || res["errors"] != float64(0) {
		t.Fatalf("after the restart = %v", done)
	}
	if again := post(); again["_id"] != id || again["status"] != "DONE" {
		t.Fatalf("the same request after the restart = %v", again)
	}
	results := h.Do("GET", "/locations/imports/"+id, nil, h.Admin()).Expect(t, 200, "")
	if lines := strings.Count(strings.TrimSpace(string(results.Body)), "\n") + 1; lines != rows+1 {
		t.Fatalf("results file of %d lines, want the header and %d rows", lines, rows)
	}
	list := h.Do("GET", "/locations?limit=1000&search=Restart", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got := len(list["items"].([]any)); got != rows {
		t.Fatalf("locations = %d, want %d (each row once)", got, rows)
	}
}
