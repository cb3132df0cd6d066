package audience_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/audience"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func newSegment(t *testing.T, h *ts.Harness, typ, horizon string) string {
	t.Helper()
	body := map[string]any{"title": "Seg " + typ, "type": typ}
	if horizon != "" {
		body["expiryHorizon"] = horizon
	}
	return h.Do("POST", "/segments", body, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

func TestSegmentCRUD(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	s := h.Do("POST", "/segments", map[string]any{"title": "Regulars", "type": "ROLLING", "expiryHorizon": "P30D", "description": "Came twice"}, h.Admin()).Expect(t, 201, "").Map(t)
	id := s["_id"].(string)
	if s["type"] != "ROLLING" || s["expiryHorizon"] != "P30D" || s["tenantId"] != h.Tenant.ID {
		t.Errorf("created = %v", s)
	}
	got := h.Do("GET", "/segments/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if got["title"] != "Regulars" {
		t.Errorf("get = %v", got)
	}
	got = h.Do("PUT", "/segments/"+id, map[string]any{"title": "Lunch regulars", "description": nil}, h.Admin()).Expect(t, 200, "").Map(t)
	if got["title"] != "Lunch regulars" || got["description"] != nil || got["expiryHorizon"] != "P30D" {
		t.Errorf("after PUT = %v", got)
	}
	got["type"] = "PERSISTENT"
	delete(got, "expiryHorizon")
	h.Do("PUT", "/segments/"+id, got, h.Admin()).Expect(t, 422, "VALIDATION_FAILED") // the stored horizon stays
	h.Do("PUT", "/segments/"+id, map[string]any{"type": "PERSISTENT", "expiryHorizon": nil}, h.Admin()).Expect(t, 200, "")
	list := h.Do("GET", "/segments", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
	if len(list) != 1 {
		t.Errorf("list = %v", list)
	}
	h.Do("DELETE", "/segments/"+id, nil, h.Admin()).Expect(t, 204, "")
	h.Do("GET", "/segments/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	h.Do("DELETE", "/segments/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
}

func TestSegmentValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	tests := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"MissingTitle", map[string]any{"type": "PERSISTENT"}, "title: is required"},
		{"MissingType", map[string]any{"title": "x"}, "type"},
		{"BadType", map[string]any{"title": "x", "type": "FOREVER"}, "type"},
		{"ScheduledWithoutHorizon", map[string]any{"title": "x", "type": "SCHEDULED"}, "expiryHorizon"},
		{"RollingBadHorizon", map[string]any{"title": "x", "type": "ROLLING", "expiryHorizon": "30 days"}, "expiryHorizon"},
		{"ZeroHorizon", map[string]any{"title": "x", "type": "ROLLING", "expiryHorizon": "P0D"}, "expiryHorizon"},
		{"EmptyDuration", map[string]any{"title": "x", "type": "ROLLING", "expiryHorizon": "PT"}, "expiryHorizon"},
		{"HugeHorizon", map[string]any{"title": "x", "type": "ROLLING", "expiryHorizon": "P100Y"}, "expiryHorizon"},
		{"PersistentWithHorizon", map[string]any{"title": "x", "type": "PERSISTENT", "expiryHorizon": "P1D"}, "expiryHorizon"},
		{"NullTitle", map[string]any{"title": nil, "type": "PERSISTENT"}, "title"},
		{"NullType", map[string]any{"title": "x", "type": nil}, "type"},
		{"UnknownField", map[string]any{"title": "x", "type": "PERSISTENT", "rules": []any{}}, "rules"},
		{"LongTitle", map[string]any{"title": strings.Repeat("x", 256), "type": "PERSISTENT"}, "title: must be 1 to"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := h.Do("POST", "/segments", tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED").Map(t)["message"].(string)
			if !strings.HasPrefix(msg, tc.field) {
				t.Errorf("message = %q, want it to name %s", msg, tc.field)
			}
		})
	}
	if n := len(h.Do("GET", "/segments", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)); n != 0 {
		t.Errorf("refused segments were stored: %d", n)
	}
}

func TestSegmentAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Ursula", "User")
	id := newSegment(t, h, "PERSISTENT", "")
	user := ts.Token(token)
	other, key := h.NewTenant(h.Tenant.Settings)
	foreign := ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}
	for _, c := range []struct {
		name, method, path string
		body               any
	}{
		{"UserCreates", "POST", "/segments", map[string]any{"title": "x", "type": "PERSISTENT"}},
		{"UserLists", "GET", "/segments", nil},
		{"UserGets", "GET", "/segments/" + id, nil},
		{"UserUpdates", "PUT", "/segments/" + id, map[string]any{"title": "y"}},
		{"UserDeletes", "DELETE", "/segments/" + id, nil},
		{"UserListsMembers", "GET", "/segments/" + id + "/members", nil},
		{"UserAddsMembers", "POST", "/segments/" + id + "/members", map[string]any{"userIds": []string{uid}}},
		{"UserRemovesMember", "DELETE", "/segments/" + id + "/members/" + uid, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			h.Do(c.method, c.path, c.body, user).Expect(t, 401, "UNAUTHORIZED")
		})
	}
	t.Run("OtherTenant", func(t *testing.T) {
		h.Do("GET", "/segments/"+id, nil, foreign).Expect(t, 404, "NOT_FOUND")
		h.Do("POST", "/segments/"+id+"/members", map[string]any{"userIds": []string{uid}}, foreign).Expect(t, 404, "NOT_FOUND")
		otherSeg := newSegmentAs(t, h, foreign)
		res := h.Do("POST", "/segments/"+otherSeg+"/members", map[string]any{"userIds": []string{uid}}, foreign).Expect(t, 200, "").Map(t)
		if u := res["unknown"].([]any); len(u) != 1 || u[0] != uid {
			t.Errorf("another tenant's user was not reported unknown: %v", res)
		}
	})
}

func newSegmentAs(t *testing.T, h *ts.Harness, admin ts.Headers) string {
	t.Helper()
	return h.Do("POST", "/segments", map[string]any{"title": "Theirs", "type": "PERSISTENT"}, admin).Expect(t, 201, "").Map(t)["_id"].(string)
}

func TestEndOf(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)
	tests := []struct {
		horizon string
		want    time.Time
	}{
		{"P30D", time.Date(2026, 4, 10, 0, 0, 0, 0, time.UTC)},
		{"PT1H", time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)},
		{"PT8H30M", time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)},
		{"P1M", time.Date(2026, 4, 11, 0, 0, 0, 0, time.UTC)},
		{"P1W", time.Date(2026, 3, 18, 0, 0, 0, 0, time.UTC)},
	}
	for _, tc := range tests {
		t.Run(tc.horizon, func(t *testing.T) {
			h, err := audience.ParseHorizon(tc.horizon)
			if err != nil {
				t.Fatal(err)
			}
			if got := audience.EndOf(at, h); !got.Equal(tc.want) {
				t.Errorf("EndOf(%s) = %s, want %s", tc.horizon, got, tc.want)
			}
		})
	}
	if got := audience.EndOf(time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC), audience.Horizon{Days: 1}); !got.Equal(time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("a horizon ending exactly at a run ends at that run, got %s", got)
	}
}
