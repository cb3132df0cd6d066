package audience_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func members(t *testing.T, h *ts.Harness, segID string) []string {
	t.Helper()
	var out []string
	for _, it := range h.Do("GET", "/segments/"+segID+"/members", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any) {
		out = append(out, it.(map[string]any)["userId"].(string))
	}
	return out
}

func actionsOf(t *testing.T, h *ts.Harness, userID, typ string) []action.Action {
	t.Helper()
	all, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, userID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []action.Action
	for _, a := range all {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

func TestAddAndRemoveMembers(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	seg := newSegment(t, h, "PERSISTENT", "")
	a, b := h.AdminUser(t, "Ann", "A"), h.AdminUser(t, "Bob", "B")
	res := h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{a, b, a, "5f1c0a9b2d3e4f5a6b7c8d9e", "not an id"}}, h.Admin()).Expect(t, 200, "").Map(t)
	if fmt.Sprint(res["added"]) != fmt.Sprint([]any{a, b}) || len(res["unknown"].([]any)) != 2 {
		t.Errorf("add = %v", res)
	}
	res = h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{a}}, h.Admin()).Expect(t, 200, "").Map(t)
	if fmt.Sprint(res["alreadyMembers"]) != fmt.Sprint([]any{a}) {
		t.Errorf("adding again = %v, want alreadyMembers", res)
	}
	if got := members(t, h, seg); len(got) != 2 {
		t.Errorf("members = %v", got)
	}
	if n := len(actionsOf(t, h, a, "SEGMENT_JOINED")); n != 1 {
		t.Errorf("SEGMENT_JOINED of %s = %d, want 1", a, n)
	}
	h.Do("DELETE", "/segments/"+seg+"/members/"+a, nil, h.Admin()).Expect(t, 204, "")
	h.Do("DELETE", "/segments/"+seg+"/members/"+a, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	if got := members(t, h, seg); len(got) != 1 || got[0] != b {
		t.Errorf("members after removal = %v", got)
	}
	left := actionsOf(t, h, a, "SEGMENT_LEFT")
	if len(left) != 1 || left[0].Metadata["reason"] != "REMOVED" {
		t.Errorf("SEGMENT_LEFT = %+v", left)
	}
	u := h.Do("GET", "/users/"+b+"?include=segmentIds,segments", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if fmt.Sprint(u["segmentIds"]) != fmt.Sprint([]any{seg}) {
		t.Errorf("segmentIds = %v", u["segmentIds"])
	}
	refs := u["segments"].([]any)
	if len(refs) != 1 || refs[0].(map[string]any)["included"] != true || refs[0].(map[string]any)["_id"] != seg {
		t.Errorf("segments = %v", refs)
	}
	u = h.Do("GET", "/users/"+a+"?include=segments", nil, h.Admin()).Expect(t, 200, "").Map(t)
	if refs := u["segments"].([]any); len(refs) != 1 || refs[0].(map[string]any)["included"] != false {
		t.Errorf("a former member's segments = %v", refs)
	}

	tests := []struct {
		name string
		body any
	}{
		{"MissingUserIDs", map[string]any{}},
		{"EmptyUserIDs", map[string]any{"userIds": []string{}}},
		{"TooMany", map[string]any{"userIds": make([]string, 101)}},
		{"EmptyID", map[string]any{"userIds": []string{""}}},
		{"NotStrings", map[string]any{"userIds": []int{1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/segments/"+seg+"/members", tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	h.Do("POST", "/segments/5f1c0a9b2d3e4f5a6b7c8d9e/members", map[string]any{"userIds": []string{a}}, h.Admin()).Expect(t, 404, "NOT_FOUND")
}

// run runs the daily expiry for the harness's tenant.
func run(t *testing.T, h *ts.Harness) audience.ExpiryReport {
	t.Helper()
	rep, err := h.Deps.Audiences.ExpireTenant(context.Background(), h.Tenant.ID)
	if err != nil {
		t.Fatalf("expiry: %v", err)
	}
	return rep
}

// untilNextRun moves the clock to just after the next 00:00 UTC, plus
// days more.
func untilNextRun(h *ts.Harness, days int) {
	now := h.Clock.Now()
	next := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 1, 0, time.UTC).AddDate(0, 0, 1+days)
	h.Clock.Advance(next.Sub(now))
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	// Start just after 01:00 UTC, so that the two hours below never cross
	// a 00:00 (the test would otherwise fail in the day's last two hours).
	untilNextRun(h, 0)
	h.Clock.Advance(time.Hour)
	scheduled := newSegment(t, h, "SCHEDULED", "P2D")
	rolling := newSegment(t, h, "ROLLING", "P2D")
	persistent := newSegment(t, h, "PERSISTENT", "")
	hourly := newSegment(t, h, "SCHEDULED", "PT1H")
	u := h.AdminUser(t, "Eve", "Expiring")
	for _, s := range []string{scheduled, rolling, persistent, hourly} {
		h.Do("POST", "/segments/"+s+"/members", map[string]any{"userIds": []string{u}}, h.Admin()).Expect(t, 200, "")
	}

	h.Clock.Advance(2 * time.Hour)
	if got := members(t, h, hourly); len(got) != 1 {
		t.Errorf("a sub-day horizon ended before the next run: members = %v", got)
	}
	untilNextRun(h, 0) // just after the first 00:00: the hourly one has ended
	if got := members(t, h, hourly); len(got) != 0 {
		t.Errorf("an ended membership is still listed before the run removed it: %v", got)
	}
	if rep := run(t, h); rep.Removed != 1 {
		t.Errorf("first run removed %d, want 1 (the hourly segment)", rep.Removed)
	}
	if rep := run(t, h); rep.Removed != 0 || rep.Skipped != 0 {
		t.Errorf("a second run the same day changed something: %+v", rep)
	}
	// Re-adding to ROLLING restarts its clock; to SCHEDULED changes nothing.
	res := h.Do("POST", "/segments/"+rolling+"/members", map[string]any{"userIds": []string{u}}, h.Admin()).Expect(t, 200, "").Map(t)
	if fmt.Sprint(res["renewed"]) != fmt.Sprint([]any{u}) {
		t.Errorf("re-adding to ROLLING = %v, want renewed", res)
	}
	res = h.Do("POST", "/segments/"+scheduled+"/members", map[string]any{"userIds": []string{u}}, h.Admin()).Expect(t, 200, "").Map(t)
	if fmt.Sprint(res["alreadyMembers"]) != fmt.Sprint([]any{u}) {
		t.Errorf("re-adding to SCHEDULED = %v, want alreadyMembers", res)
	}
	untilNextRun(h, 1) // two days after joining: the SCHEDULED one ends, the renewed ROLLING one not yet
	if rep := run(t, h); rep.Removed != 1 {
		t.Errorf("second day run removed %d, want 1 (scheduled)", rep.Removed)
	}
	if got := members(t, h, rolling); len(got) != 1 {
		t.Errorf("the renewed ROLLING membership ended early: %v", got)
	}
	untilNextRun(h, 0)
	if rep := run(t, h); rep.Removed != 1 {
		t.Errorf("third run removed %d, want 1 (rolling)", rep.Removed)
	}
	untilNextRun(h, 400)
	run(t, h)
	if got := members(t, h, persistent); len(got) != 1 {
		t.Errorf("a PERSISTENT membership ended: %v", got)
	}
	left := actionsOf(t, h, u, "SEGMENT_LEFT")
	if len(left) != 3 {
		t.Fatalf("SEGMENT_LEFT = %d, want 3", len(left))
	}
	for _, a := range left {
		if a.Metadata["reason"] != "EXPIRED" {
			t.Errorf("SEGMENT_LEFT reason = %v", a.Metadata["reason"])
		}
	}
}

func TestExpiryResumesAfterAFailure(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	seg := newSegment(t, h, "SCHEDULED", "P1D")
	var users []string
	for i := 0; i < 5; i++ {
		users = append(users, h.AdminUser(t, "User", fmt.Sprint(i)))
	}
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": users}, h.Admin()).Expect(t, 200, "")
	untilNextRun(h, 1)
	calls := 0
	h.Deps.Audiences.OnLeave.Add(func(ctx context.Context, tx *ddb.Tx, c audience.Change) error {
		if calls++; calls == 3 {
			return errors.New("the function died")
		}
		return nil
	})
	if _, err := h.Deps.Audiences.ExpireTenant(context.Background(), h.Tenant.ID); err == nil {
		t.Fatal("the run did not report its failure")
	}
	if got := len(members(t, h, seg)); got != 0 {
		t.Errorf("members listed after their end: %d", got)
	}
	rep := run(t, h)
	if rep.Removed != 3 {
		t.Errorf("the second run removed %d, want the 3 left", rep.Removed)
	}
	total := 0
	for _, u := range users {
		total += len(actionsOf(t, h, u, "SEGMENT_LEFT"))
	}
	if total != 5 {
		t.Errorf("SEGMENT_LEFT actions = %d, want exactly 5", total)
	}
}

func TestExpiryCutOffBeforeDeadline(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	seg := newSegment(t, h, "SCHEDULED", "P1D")
	u := h.AdminUser(t, "Cut", "Off")
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": []string{u}}, h.Admin()).Expect(t, 200, "")
	untilNextRun(h, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := h.Deps.Audiences.ExpireTenant(ctx, h.Tenant.ID); !errors.Is(err, audience.ErrCutOff) {
		t.Fatalf("err = %v, want ErrCutOff", err)
	}
	if rep := run(t, h); rep.Removed != 1 {
		t.Errorf("the next run removed %d, want 1", rep.Removed)
	}
}
