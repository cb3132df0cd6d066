package job_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// operate sends an operator's command through the jobs function's
// handler and decodes the answer.
func operate(t *testing.T, jobs *job.Service, payload string) (job.OperatorResponse, error) {
	t.Helper()
	raw, err := jobs.Handle(context.Background(), json.RawMessage(payload))
	if err != nil {
		return job.OperatorResponse{}, err
	}
	var resp job.OperatorResponse
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	return resp, nil
}

func command(action, tenantID, id string) string {
	return fmt.Sprintf(`{"action":%q,"tenantId":%q,"operationId":%q}`, action, tenantID, id)
}

// crashMidFile runs the job of ev until its first commit mid-file, where
// the run stops as a killed process would: the operation stays RUNNING
// with the run's lease, as a crashed local stack left it.
func crashMidFile(t *testing.T, jobs *job.Service, h *ts.Harness, ev any) int64 {
	t.Helper()
	var crashedAt int64
	jobs.Crash = func(cp operation.Checkpoint) bool {
		if crashedAt == 0 && cp.Rows > 0 && !cp.InputDone {
			crashedAt = cp.Rows
			return true
		}
		return false
	}
	defer func() { jobs.Crash = nil }()
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Handle(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	if crashedAt == 0 {
		t.Fatal("the run did not stop mid-file")
	}
	return crashedAt
}

// TestOperatorResume: an import left RUNNING by a run that died is
// described (its lease live, then run out and stuck), resumed from its
// checkpoint by the continue object the command writes, and ends DONE with
// every row applied once.
func TestOperatorResume(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	t.Cleanup(func() { jobs.Sleep = nil })
	id, ev := startImport(t, h, c, rowsFile("Stuck", 150))
	crashedAt := crashMidFile(t, jobs, h, ev)

	got, err := operate(t, jobs, command("describe", h.Tenant.ID, id))
	if err != nil {
		t.Fatal(err)
	}
	st := got.State
	if st.Operation.Status != operation.Running || st.Lease == nil || !st.Lease.Live || st.Stuck || st.Runs != 1 ||
		st.Checkpoint.Rows < crashedAt || !st.InputStored || got.Outcome != "described; nothing changed" {
		t.Fatalf("just after the crash = %+v", got)
	}

	h.Clock.Advance(operation.StuckAfter)
	got, err = operate(t, jobs, command("describe", h.Tenant.ID, id))
	if err != nil {
		t.Fatal(err)
	}
	if st := got.State; st.Lease == nil || st.Lease.Live || !st.Stuck || st.IdleSeconds < int64(operation.StuckAfter/time.Second) {
		t.Fatalf("%v after the crash = %+v", operation.StuckAfter, got)
	}

	got, err = operate(t, jobs, command("resume", h.Tenant.ID, id))
	if err != nil {
		t.Fatal(err)
	}
	wantKey := "jobs/" + h.Tenant.ID + "/" + id + "/continue-resume-"
	if !strings.HasPrefix(got.ContinueKey, wantKey) || !strings.HasPrefix(got.Outcome, "resumed") {
		t.Fatalf("resume = %+v", got)
	}
	// The continue object's notification invokes the jobs function.
	next := c.Next(t)
	if key := next.Records[0].S3.Object.Key; key != got.ContinueKey {
		t.Fatalf("notified key = %q, want %q", key, got.ContinueKey)
	}
	raw, _ := json.Marshal(next)
	if _, err := jobs.Handle(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	op := getOp(t, h, id)
	res, _ := op["result"].(map[string]any)
	if op["status"] != "DONE" || res["total"] != float64(150) || res["imported"] != float64(150) {
		t.Fatalf("after the resume = %v", op)
	}
	list := h.Do("GET", "/locations?limit=1000&search=Stuck", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if n := len(list["items"].([]any)); n != 150 {
		t.Fatalf("locations = %d, want 150 (each row once)", n)
	}

	t.Run("FinishedIsLeftAlone", func(t *testing.T) {
		tests := []struct{ action, outcome string }{
			{"describe", "described; nothing changed"},
			{"resume", "nothing to resume: the operation is DONE"},
			{"fail", "nothing to fail: the operation is DONE"},
		}
		for _, tc := range tests {
			got, err := operate(t, jobs, command(tc.action, h.Tenant.ID, id))
			if err != nil {
				t.Fatalf("%s: %v", tc.action, err)
			}
			if got.Outcome != tc.outcome || got.ContinueKey != "" || got.State.Operation.Status != operation.Done || got.State.Stuck {
				t.Errorf("%s = %+v, want outcome %q", tc.action, got, tc.outcome)
			}
		}
		if pending := c.Pending(); len(pending) != 0 {
			t.Fatalf("objects written for a finished operation: %d events", len(pending))
		}
	})
}

// TestOperatorFail: an import left RUNNING by a run that died is FAILED by
// the command as the failure queue would fail it, once the dead run's
// lease ran out: the rows applied counted, not retryable.
func TestOperatorFail(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	t.Cleanup(func() { jobs.Sleep = nil })
	id, ev := startImport(t, h, c, rowsFile("Failing", 150))
	crashMidFile(t, jobs, h, ev)
	waitByClock(h, nil)
	start := h.Clock.Now()
	got, err := operate(t, jobs, command("fail", h.Tenant.ID, id))
	if err != nil {
		t.Fatal(err)
	}
	if waited := h.Clock.Now().Sub(start); waited < job.DefaultLease-time.Second {
		t.Fatalf("failed after waiting %v, before the dead run's lease ran out", waited)
	}
	st := got.State
	list := h.Do("GET", "/locations?limit=1000&search=Failing", nil, h.Admin()).Expect(t, 200, "").Map(t)
	applied := int64(len(list["items"].([]any)))
	if st.Operation.Status != operation.Failed || st.Operation.Error == nil || *st.Operation.Error != job.StoppedError ||
		st.Operation.IsRetryable || st.Operation.Result == nil || st.Operation.Result.Total != applied || st.Lease != nil ||
		!strings.HasPrefix(got.Outcome, "failed") {
		t.Fatalf("fail = %+v (%d rows applied)", got, applied)
	}
	if op := getOp(t, h, id); op["status"] != "FAILED" {
		t.Fatalf("operation = %v", op)
	}
}

// TestOperatorRequests: what a malformed or unknown command answers.
func TestOperatorRequests(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	jobs := h.Deps.Jobs
	tests := []struct {
		name, payload string
		want          apierr.Code
	}{
		{"UnknownAction", command("restart", h.Tenant.ID, "0123456789abcdef01234567"), apierr.ValidationFailed},
		{"NoTenant", command("describe", "", "0123456789abcdef01234567"), apierr.ValidationFailed},
		{"BadOperationId", command("describe", h.Tenant.ID, "op-1"), apierr.ValidationFailed},
		{"UnknownOperation", command("describe", h.Tenant.ID, "0123456789abcdef01234567"), apierr.NotFound},
		{"UnknownField", `{"action":"describe","tenantId":"` + h.Tenant.ID + `","operationId":"0123456789abcdef01234567","force":true}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := operate(t, jobs, tc.payload)
			if err == nil {
				t.Fatalf("answer = %+v, want an error", got)
			}
			if code := apierr.CodeOf(err); code != tc.want && tc.want != "" {
				t.Fatalf("error = %v (code %s), want %s", err, code, tc.want)
			}
		})
	}
}
