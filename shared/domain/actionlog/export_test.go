package actionlog_test

import (
	"context"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// exportFile downloads a finished export's CSV and returns its rows (the
// header first).
func exportFile(t *testing.T, h *ts.Harness, op map[string]any) [][]string {
	t.Helper()
	if op["status"] != "DONE" {
		t.Fatalf("operation = %v", op)
	}
	href := op["result"].(map[string]any)["href"].(string)
	r := h.Do("GET", href, nil, h.Admin()).Expect(t, 200, "")
	rows, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil {
		t.Fatalf("results CSV: %v", err)
	}
	return rows
}

func startExport(t *testing.T, h *ts.Harness, body map[string]any) map[string]any {
	t.Helper()
	return h.Do("POST", "/actions/exports", body, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, "").Map(t)
}

func TestExport(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ids := seed(t, h, 30, base, "u1", "l1")
	from := base.Add(-19 * time.Second).Format(time.RFC3339) // i = 19 ... 0
	to := base.Add(-5 * time.Second).Format(time.RFC3339)    // i = 5 ... 19
	op := h.WaitOperation(startExport(t, h, map[string]any{"from": from, "to": to, "types": []string{"A_ONE"}})["_id"].(string))
	rows := exportFile(t, h, op)
	if strings.Join(rows[0], ",") != "_id,type,timestamp,monthofyear,weekofyear,dayofmonth,dayofweek,daypart,userId,userName,locationId,locationTitle,paymentType,environment,metadata" {
		t.Errorf("header = %v", rows[0])
	}
	var want []string
	for i := 5; i <= 19; i++ {
		if i%2 == 0 {
			want = append(want, ids[i])
		}
	}
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[0])
		if r[1] != "A_ONE" || r[8] != "u1" {
			t.Errorf("row = %v", r)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("exported %v\nwant %v", got, want)
	}
	t.Run("LimitAndLocation", func(t *testing.T) {
		op := h.WaitOperation(startExport(t, h, map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2027-01-01T00:00:00Z",
			"types": []string{"A_ONE", "A_TWO"}, "locationIds": []string{"l1"}, "limit": 4})["_id"].(string))
		rows := exportFile(t, h, op)
		if len(rows) != 5 || rows[1][0] != ids[0] || rows[2][0] != ids[3] || rows[4][10] != "l1" {
			t.Errorf("rows = %v", rows)
		}
	})
	bad := []struct {
		name string
		body map[string]any
	}{
		{"MissingFrom", map[string]any{"to": to, "types": []string{"A_ONE"}}},
		{"BadTo", map[string]any{"from": from, "to": "tomorrow", "types": []string{"A_ONE"}}},
		{"ToBeforeFrom", map[string]any{"from": to, "to": from, "types": []string{"A_ONE"}}},
		{"NoTypes", map[string]any{"from": from, "to": to, "types": []string{}}},
		{"BadType", map[string]any{"from": from, "to": to, "types": []string{"a"}}},
		{"BadLimit", map[string]any{"from": from, "to": to, "types": []string{"A_ONE"}, "limit": 0}},
		{"BadSize", map[string]any{"from": from, "to": to, "types": []string{"A_ONE"}, "maxFileSizeMB": 5000}},
		{"UnknownField", map[string]any{"from": from, "to": to, "types": []string{"A_ONE"}, "format": "xlsx"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/actions/exports", tc.body, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("NoNonce", func(t *testing.T) {
		h.Do("POST", "/actions/exports", map[string]any{"from": from, "to": to, "types": []string{"A_ONE"}}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("SameNonce", func(t *testing.T) {
		n := ts.Nonce()
		body := map[string]any{"from": from, "to": to, "types": []string{"A_ONE"}}
		a := h.Do("POST", "/actions/exports", body, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 202, "").Map(t)
		b := h.Do("POST", "/actions/exports", body, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 202, "").Map(t)
		if a["_id"] != b["_id"] {
			t.Errorf("the same nonce made two operations")
		}
		h.WaitOperation(a["_id"].(string))
	})
	t.Run("UserIsNotAdmin", func(t *testing.T) {
		_, token, _ := h.ActiveUser(t, "Eve", "Export")
		h.Do("POST", "/actions/exports", map[string]any{"from": from, "to": to, "types": []string{"A_ONE"}}, ts.Token(token), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/actions/exports/"+op["_id"].(string), nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
}

// TestExportResumes: an export that crashes after a commit and continues
// in new invocations writes every action exactly once.
func TestExportResumes(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	base := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ids := seed(t, h, 23, base, "u1", "l1")
	c := h.CaptureS3("jobs")
	h.Deps.Fn.Jobs.ActionLog.ExportPage = 2 // 12 parts: more than the assembly reads ahead
	op := startExport(t, h, map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2027-01-01T00:00:00Z", "types": []string{"A_ONE", "A_TWO"}})
	ev := c.Next(t)
	jobs := h.Deps.Jobs
	jobs.MaxRowsPerRun = 9
	crashed := false
	jobs.Crash = func(cp operation.Checkpoint) bool {
		if !crashed && cp.Rows >= 8 && !cp.InputDone {
			crashed = true
			return true
		}
		return false
	}
	ctx := context.Background()
	if err := jobs.HandleS3(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if !crashed {
		t.Fatal("the run did not crash after a commit")
	}
	h.Clock.Advance(job.DefaultLease + time.Second)
	continued := 0
	for i := 0; i < 20; i++ {
		if err := jobs.HandleS3(ctx, ev); err != nil {
			t.Fatal(err)
		}
		for _, e := range c.Pending() {
			continued++
			if err := jobs.HandleS3(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		got := h.Do("GET", "/operations/"+op["_id"].(string), nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got["status"] == "DONE" {
			rows := exportFile(t, h, got)
			var seen []string
			for _, r := range rows[1:] {
				seen = append(seen, r[0])
			}
			if strings.Join(seen, ",") != strings.Join(ids, ",") {
				t.Fatalf("exported %v\nwant %v", seen, ids)
			}
			if continued == 0 {
				t.Error("the export never continued in a new invocation")
			}
			return
		}
	}
	t.Fatal("the export did not finish")
}
