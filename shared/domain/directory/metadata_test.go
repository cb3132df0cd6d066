package directory_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestUserMetadata checks a user's metadata: an admin sets it with PUT
// /users/{userId} (replacing it whole, null or {} removing it), every
// answer shows it, a USER may read but not change it, and a bad object
// changes nothing.
func TestUserMetadata(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Meta", "Data")
	get := func(t *testing.T, headers ts.Headers) map[string]any {
		t.Helper()
		md, _ := h.Do("GET", "/users/"+id, nil, headers).Expect(t, 200, "").Map(t)["metadata"].(map[string]any)
		return md
	}
	steps := []struct {
		name string
		body string
		want map[string]any
	}{
		{"Set", `{"metadata":{"posId":"C-17","tier":"gold","drop":""}}`, map[string]any{"posId": "C-17", "tier": "gold"}},
		{"OtherFieldKeeps", `{"firstName":"Mia"}`, map[string]any{"posId": "C-17", "tier": "gold"}},
		{"ReplacesWhole", `{"metadata":{"posId":"C-18"}}`, map[string]any{"posId": "C-18"}},
		{"EmptyRemoves", `{"metadata":{}}`, nil},
		{"SetAgain", `{"metadata":{"posId":"C-19"}}`, map[string]any{"posId": "C-19"}},
		{"NullRemoves", `{"metadata":null}`, nil},
		{"Final", `{"metadata":{"posId":"C-20"}}`, map[string]any{"posId": "C-20"}},
	}
	for _, tc := range steps {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("PUT", "/users/"+id, tc.body, h.Admin()).Expect(t, 200, "")
			got := get(t, h.Admin())
			if len(got) != len(tc.want) {
				t.Fatalf("metadata = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("metadata = %v, want %v", got, tc.want)
				}
			}
		})
	}
	for _, tc := range []struct{ name, body, code string }{
		{"ErrUserSets", `{"metadata":{"posId":"mine"}}`, "VALIDATION_FAILED"},
		{"ErrUserClears", `{"metadata":null}`, "VALIDATION_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.Do("PUT", "/users/"+id, tc.body, ts.Token(token)).Expect(t, 422, tc.code)
			if msg, _ := r.Map(t)["message"].(string); !strings.HasPrefix(msg, "metadata: only an admin") {
				t.Errorf("message = %q", msg)
			}
		})
	}
	for _, tc := range []struct{ name, body string }{
		{"ErrNumberValue", `{"firstName":"Zed","metadata":{"k":1}}`},
		{"ErrKeyTooLong", `{"firstName":"Zed","metadata":{"` + strings.Repeat("k", 41) + `":"v"}}`},
		{"ErrValueTooLong", `{"firstName":"Zed","metadata":{"k":"` + strings.Repeat("v", 501) + `"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("PUT", "/users/"+id, tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("UserReadsIt", func(t *testing.T) {
		if got := get(t, ts.Token(token)); got["posId"] != "C-20" || len(got) != 1 {
			t.Errorf("the user's own view shows metadata %v", got)
		}
		if first := h.Do("GET", "/users/"+id, nil, h.Admin()).Map(t)["firstName"]; first != "Mia" {
			t.Errorf("a refused PUT changed firstName to %v", first)
		}
	})
	t.Run("UnknownFieldPointsToMetadata", func(t *testing.T) {
		r := h.Do("PUT", "/users/"+id, `{"loyaltyTier":"gold"}`, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		if msg, _ := r.Map(t)["message"].(string); !strings.Contains(msg, "metadata") {
			t.Errorf("message = %q", msg)
		}
	})
}
