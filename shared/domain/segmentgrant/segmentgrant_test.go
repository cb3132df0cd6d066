package segmentgrant_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// fixture is a segment of members and an AD_HOC perk to grant them.
type fixture struct {
	seg, perk string
	members   []string
}

// newFixture creates n users, a segment holding them and a perk.
func newFixture(t *testing.T, h *ts.Harness, n int) fixture {
	t.Helper()
	f := fixture{
		seg:  h.Do("POST", "/segments", map[string]any{"title": "Everyone", "type": "PERSISTENT"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string),
		perk: h.Do("POST", "/perks", map[string]any{"title": "Promo", "template": "AD_HOC", "points": map[string]any{"max": 1000}}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string),
	}
	for i := range n {
		f.members = append(f.members, h.AdminUser(t, "Member", fmt.Sprintf("N%d", i)))
	}
	for i := 0; i < n; i += 100 {
		h.Do("POST", "/segments/"+f.seg+"/members", map[string]any{"userIds": f.members[i:min(i+100, n)]}, h.Admin()).Expect(t, 200, "")
	}
	return f
}

// grant sends the legacy grant of f's perk to f's segment.
func (f fixture) grant(h *ts.Harness, points int, headers ...ts.Headers) *ts.Resp {
	return h.Do("POST", "/perks/"+f.perk+"/grant", map[string]any{"segmentId": f.seg, "points": points}, append([]ts.Headers{h.Admin()}, headers...)...)
}

// held returns the points of f's perk each user holds (GET /awards, the
// tenant's stored awards).
func (f fixture) held(t *testing.T, h *ts.Harness) map[string]int {
	t.Helper()
	out := map[string]int{}
	list := h.Do("GET", "/awards?limit=1000", nil, h.Admin(), ts.Headers{"x-api-version", "8"}).Expect(t, 200, "").Map(t)
	for _, it := range list["items"].([]any) {
		a := it.(map[string]any)
		if a["perkId"] == f.perk {
			out[a["userId"].(string)] = int(a["points"].(map[string]any)["available"].(float64))
		}
	}
	return out
}

// checkOnce checks that every member holds exactly points (granted once).
func (f fixture) checkOnce(t *testing.T, h *ts.Harness, points int) {
	t.Helper()
	held := f.held(t, h)
	for _, u := range f.members {
		if held[u] != points {
			t.Fatalf("member %s holds %d points, want %d (granted once)", u, held[u], points)
		}
	}
}

// counts returns result.total, granted, skipped and errors of op (and
// checks imported equals granted).
func counts(t *testing.T, op map[string]any) [4]int {
	t.Helper()
	res, _ := op["result"].(map[string]any)
	if res == nil {
		return [4]int{}
	}
	n := func(k string) int { v, _ := res[k].(float64); return int(v) }
	if n("imported") != n("granted") {
		t.Errorf("result = %v: imported and granted differ", res)
	}
	return [4]int{n("total"), n("granted"), n("skipped"), n("errors")}
}

// TestGrantToSegment: a grant to a segment of 300 members answers 202
// with the operation, which ends DONE with every member granted once;
// a retry with the same Idempotency-Key, or nonce, answers the same
// operation and grants nothing more.
func TestGrantToSegment(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	f := newFixture(t, h, 300)
	key := ts.Headers{"Idempotency-Key", "grant-300"}
	op := f.grant(h, 3, key).Expect(t, 202, "").Map(t)
	if op["namespace"] != "awards" || op["name"] != "segmentGrant" || op["status"] != "PENDING" {
		t.Fatalf("answer = %v", op)
	}
	id := op["_id"].(string)
	done := h.WaitOperation(id)
	if done["status"] != "DONE" || counts(t, done) != [4]int{300, 300, 0, 0} {
		t.Fatalf("operation = %v", done)
	}
	f.checkOnce(t, h, 3)

	tests := []struct {
		name    string
		headers []ts.Headers
	}{
		{"SameIdempotencyKey", []ts.Headers{key}},
		{"SameNonce", []ts.Headers{{"x-platform-req-nonce", op["nonce"].(string)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			again := f.grant(h, 3, tc.headers...).Expect(t, 202, "").Map(t)
			if again["_id"] != id {
				t.Fatalf("retry answered operation %v, want %s", again["_id"], id)
			}
			if got := h.WaitOperation(id); counts(t, got) != [4]int{300, 300, 0, 0} {
				t.Fatalf("operation after the retry = %v", got)
			}
			f.checkOnce(t, h, 3)
		})
	}
	t.Run("SameKeyAnotherBody", func(t *testing.T) {
		f.grant(h, 4, key).Expect(t, 422, "IDEMPOTENCY_KEY_REUSED")
	})
	t.Run("NoKeyIsANewGrant", func(t *testing.T) {
		other := f.grant(h, 1).Expect(t, 202, "").Map(t)
		if other["_id"] == id {
			t.Fatal("a request without key or nonce answered the earlier operation")
		}
		h.WaitOperation(other["_id"].(string))
		f.checkOnce(t, h, 4)
	})
}

// TestGrantToSegmentInterrupted: a run stopped part way (a crash after a
// checkpoint, with members granted past it), then delivered again several
// times at once, ends with every member granted once and the counts equal
// to the grants.
func TestGrantToSegmentInterrupted(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	f := newFixture(t, h, 120)
	op := f.grant(h, 5).Expect(t, 202, "").Map(t)
	id := op["_id"].(string)
	ev := c.Next(t)
	jobs := h.Deps.Jobs
	var once sync.Once
	jobs.Crash = func(cp operation.Checkpoint) bool {
		crash := false
		once.Do(func() { crash = !cp.InputDone })
		return crash
	}
	defer func() { jobs.Crash = nil }()
	if err := jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	mid := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	cnt := counts(t, mid)
	if mid["status"] != "RUNNING" || cnt[0] == 0 || cnt[0] >= len(f.members) || cnt[1] != cnt[0] {
		t.Fatalf("after the crash = %v", mid)
	}
	// The crashed run had granted some members past its checkpoint.
	req := acceptedOf(t, h, f)
	past, held := 0, f.held(t, h)
	for _, u := range f.members {
		if held[u] == 0 {
			if _, err := h.Deps.Awards.GrantSegmentMember(context.Background(), h.Tenant.ID, id, req, u); err != nil {
				t.Fatal(err)
			}
			past++
		}
		if past == 7 {
			break
		}
	}
	h.Clock.Advance(job.DefaultLease + time.Second)
	ts.DeliverAll(t, jobs, ev, 3)
	done := h.WaitOperation(id)
	if done["status"] != "DONE" || counts(t, done) != [4]int{120, 120, 0, 0} {
		t.Fatalf("operation = %v", done)
	}
	f.checkOnce(t, h, 5)
	// Once more after the end: nothing changes.
	if err := jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	f.checkOnce(t, h, 5)
}

// acceptedOf is the request as the grant of f was accepted (the perk
// as it is now).
func acceptedOf(t *testing.T, h *ts.Harness, f fixture) award.SegmentGrantRequest {
	t.Helper()
	req, err := h.Deps.Awards.AcceptSegmentGrant(context.Background(), adminCaller(h), f.perk, award.LegacyGrantInput{SegmentID: f.seg, Points: ptr(5)})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func ptr(n int) *int { return &n }

// TestGrantToSegmentAfterChanges: what changes after the grant was
// accepted: a perk disabled meanwhile is still granted as accepted; a
// deleted user is skipped; every member is counted once.
func TestGrantToSegmentAfterChanges(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	c := h.CaptureS3("jobs")
	f := newFixture(t, h, 6)
	op := f.grant(h, 2).Expect(t, 202, "").Map(t)
	id := op["_id"].(string)
	ev := c.Next(t)
	h.Do("DELETE", "/perks/"+f.perk, nil, h.Admin()).Expect(t, 204, "")
	gone := f.members[2]
	h.Do("DELETE", "/users/"+gone, nil, h.Admin()).Expect(t, 204, "")
	if err := h.Deps.Jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	done := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	cnt := counts(t, done)
	if done["status"] != "DONE" || cnt[1] != 5 || cnt[0] != cnt[1]+cnt[2]+cnt[3] || cnt[3] != 0 {
		t.Fatalf("operation = %v, want 5 granted and the deleted user skipped", done)
	}
	h.Do("PUT", "/perks/"+f.perk, map[string]any{"enabled": true}, h.Admin()).Expect(t, 200, "")
	held := f.held(t, h)
	for _, u := range f.members {
		want := 2
		if u == gone {
			want = 0
		}
		if held[u] != want {
			t.Errorf("member %s holds %d, want %d", u, held[u], want)
		}
	}
	h.Do("DELETE", "/perks/"+f.perk, nil, h.Admin()).Expect(t, 204, "")
	f.grant(h, 2).Expect(t, 422, "PERK_DISABLED")
}

// TestGrantRefused: requests refused when they are accepted, before any
// operation exists.
func TestGrantRefused(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	f := newFixture(t, h, 1)
	other := ts.New(t)
	foreign := other.Do("POST", "/segments", map[string]any{"title": "Theirs", "type": "PERSISTENT"}, other.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	tests := []struct {
		name    string
		path    string
		body    map[string]any
		headers []ts.Headers
		status  int
		code    string
	}{
		{"ForeignSegment", "/perks/" + f.perk + "/grant", map[string]any{"segmentId": foreign}, nil, 422, "VALIDATION_FAILED"},
		{"UnknownSegment", "/perks/" + f.perk + "/grant", map[string]any{"segmentId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, nil, 422, "VALIDATION_FAILED"},
		{"UnknownPerk", "/perks/5f1c0a9b2d3e4f5a6b7c8d9e/grant", map[string]any{"segmentId": f.seg}, nil, 404, "NOT_FOUND"},
		{"BothTargets", "/perks/" + f.perk + "/grant", map[string]any{"segmentId": f.seg, "userId": f.members[0]}, nil, 422, "VALIDATION_FAILED"},
		{"MalformedNonce", "/perks/" + f.perk + "/grant", map[string]any{"segmentId": f.seg}, []ts.Headers{{"x-platform-req-nonce", "not-a-guid"}}, 422, "VALIDATION_FAILED"},
		{"NegativePoints", "/perks/" + f.perk + "/grant", map[string]any{"segmentId": f.seg, "points": -1}, nil, 422, "VALIDATION_FAILED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", tc.path, tc.body, append([]ts.Headers{h.Admin()}, tc.headers...)...).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("NonceOfAnotherRequest", func(t *testing.T) {
		n := ts.Headers{"x-platform-req-nonce", "3f2504e0-4f89-41d3-9a0c-0305e82c3301"}
		f.grant(h, 1, n).Expect(t, 202, "")
		f.grant(h, 2, n).Expect(t, 409, "CONFLICT")
	})
	t.Run("UserGrantStaysSynchronous", func(t *testing.T) {
		a := h.Do("POST", "/perks/"+f.perk+"/grant", map[string]any{"userId": f.members[0], "points": 1}, h.Admin()).Expect(t, 200, "").Map(t)
		if !strings.HasPrefix(a["awardId"].(string), f.members[0]) {
			t.Fatalf("award = %v", a)
		}
	})
}

// adminCaller is the tenant's service key as a caller.
func adminCaller(h *ts.Harness) actor.Actor {
	return actor.Actor{TenantID: h.Tenant.ID, TenantTitle: h.Tenant.Title, Service: true}
}
