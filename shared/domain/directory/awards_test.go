package directory_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestIncludeAwards checks GET /users/{userId}?include=awards: a summary
// of each award the user holds, with its next expiry, only the caller's
// own (or, for an admin, the tenant's) user, and refused on the lists.
func TestIncludeAwards(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	uid, token, _ := h.ActiveUser(t, "Ava", "Wards")
	other := h.AdminUser(t, "Otto", "Ther")
	newPerk := func(body map[string]any) string {
		return h.Do("POST", "/perks", body, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	}
	stamps := newPerk(map[string]any{"title": "Coffee card", "template": "STAMP_CARD"})
	expiring := newPerk(map[string]any{"title": "Points", "template": "PSEUDO_CURRENCY", "points": map[string]any{"expiry": map[string]any{"policy": "AFTER_EARN", "duration": "P12M"}}})
	for perk, pts := range map[string]int{stamps: 4, expiring: 40} {
		h.Do("POST", "/pointperks/"+perk+"/awards", map[string]any{"userId": uid, "points": pts}, h.Admin()).Expect(t, 200, "")
	}
	want := map[string]struct {
		title, template string
		points          float64
		expires         bool
	}{
		uid + "-" + stamps:   {"Coffee card", "STAMP_CARD", 4, false},
		uid + "-" + expiring: {"Points", "PSEUDO_CURRENCY", 40, true},
	}
	tests := []struct {
		name, path string
		headers    ts.Headers
	}{
		{"Admin", "/users/" + uid + "?include=awards", h.Admin()},
		{"Self", "/users/" + uid + "?include=awards", ts.Token(token)},
		{"WithOthers", "/users/" + uid + "?include=points&include=AWARDS", h.Admin()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := h.Do("GET", tc.path, nil, tc.headers).Expect(t, 200, "").Map(t)
			awards, _ := u["awards"].([]any)
			if len(awards) != len(want) {
				t.Fatalf("awards = %v, want %d", u["awards"], len(want))
			}
			for _, a := range awards {
				m := a.(map[string]any)
				w, ok := want[m["_id"].(string)]
				if !ok || m["title"] != w.title || m["template"] != w.template || m["pointsAvailable"] != w.points || !strings.HasSuffix(m["_id"].(string), "-"+m["perkId"].(string)) {
					t.Errorf("award = %v, want %+v", m, w)
				}
				next, _ := m["nextExpiry"].(map[string]any)
				if w.expires != (next != nil) || next != nil && (next["points"] != w.points || next["expiresAt"] == "") {
					t.Errorf("nextExpiry = %v (expires: %v)", m["nextExpiry"], w.expires)
				}
			}
		})
	}
	t.Run("NoAwards", func(t *testing.T) {
		u := h.Do("GET", "/users/"+other+"?include=awards", nil, h.Admin()).Expect(t, 200, "").Map(t)
		if a, ok := u["awards"].([]any); !ok || len(a) != 0 {
			t.Errorf("awards = %v, want []", u["awards"])
		}
	})
	t.Run("NotIncluded", func(t *testing.T) {
		if u := h.Do("GET", "/users/"+uid, nil, h.Admin()).Expect(t, 200, "").Map(t); u["awards"] != nil {
			t.Errorf("awards without include = %v", u["awards"])
		}
	})
	refused := []struct {
		name, method, path string
		body               any
		headers            ts.Headers
		status             int
		code               string
	}{
		{"OtherUser", "GET", "/users/" + other + "?include=awards", nil, ts.Token(token), 404, "NOT_FOUND"},
		{"OnList", "GET", "/users?include=awards", nil, h.Admin(), 422, "VALIDATION_FAILED"},
		{"OnLookup", "POST", "/users/lookup?include=awards", map[string]any{"userIds": []string{uid}}, h.Admin(), 422, "VALIDATION_FAILED"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			h.Do(tc.method, tc.path, tc.body, tc.headers, ts.Headers{"x-api-version", "8"}).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("OtherTenant", func(t *testing.T) {
		o, key := h.NewTenant(h.Tenant.Settings)
		h.Do("GET", "/users/"+uid+"?include=awards", nil, ts.Headers{"x-service-auth-token", key, "x-application-id", o.ID}).Expect(t, 404, "NOT_FOUND")
	})
}
