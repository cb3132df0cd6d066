package directory_test

import (
	"encoding/json"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestUserFreeJSONValues: a user's extended and contacts follow the free
// JSON rule of every request body: a value DynamoDB cannot hold is
// VALIDATION_FAILED naming its path; one it can hold is stored as sent.
func TestUserFreeJSONValues(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Free", "Json")
	for _, tc := range []struct{ name, body, field string }{
		{"NumberTooLarge", `{"extended":{"n":1e126}}`, "extended.n"},
		{"NumberTooSmall", `{"contacts":{"a":[0,1e-131]}}`, "contacts.a[1]"},
		{"EmptyKey", `{"extended":{"":1}}`, "extended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e struct{ Code, Message string }
			h.Do("PUT", "/users/"+id, tc.body, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED").JSON(t, &e)
			if !strings.HasPrefix(e.Message, tc.field+": ") {
				t.Errorf("message = %q, want it to name %s", e.Message, tc.field)
			}
		})
	}
	t.Run("LargestNumber", func(t *testing.T) {
		h.Do("PUT", "/users/"+id, `{"extended":{"n":9.999999999999998e125,"m":-1e-130}}`, ts.Token(token)).Expect(t, 200, "")
		u := h.Do("GET", "/users/"+id+"?include=extended", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if got, _ := json.Marshal(u["extended"]); string(got) != `{"m":-1e-130,"n":9.999999999999998e+125}` {
			t.Errorf("extended = %s", got)
		}
	})
}
