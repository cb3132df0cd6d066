package directory_test

import (
	"strconv"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestUpdateFreeFormAndNulls(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Free", "Form")
	deep := map[string]any{}
	cur := deep
	for i := 0; i < 12; i++ {
		next := map[string]any{}
		cur["n"] = next
		cur = next
	}
	rejected := []struct {
		name string
		body any
	}{
		{"EmptyKey", map[string]any{"extended": map[string]any{"": 1}}},
		{"EmptyContactsKey", map[string]any{"contacts": map[string]any{"": "x"}}},
		{"HugeNumber", `{"extended":{"n":1e308}}`},
		{"TinyNumber", `{"extended":{"n":1.5e-200}}`},
		{"TooDeep", map[string]any{"extended": deep}},
		{"TooLarge", map[string]any{"extended": map[string]any{"s": strings.Repeat("x", 20000)}}},
		{"TipWithoutAmount", map[string]any{"defaultTip": map[string]any{"scheme": "PERCENTAGE"}}},
		{"NullFirstName", `{"firstName":null}`},
	}
	for _, tc := range rejected {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("PUT", "/users/"+id, tc.body, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("PushTokens", func(t *testing.T) {
		h.Do("PUT", "/users/"+id, map[string]any{"apnDeviceToken": ""}, ts.Token(token)).Expect(t, 200, "")
		u := h.Do("PUT", "/users/"+id, map[string]any{"apnDeviceToken": "abc", "gcmDeviceToken": "def"}, ts.Token(token)).Expect(t, 200, "").Map(t)
		if u["isRegisteredForPushNotifications"] != true {
			t.Errorf("not registered: %v", u)
		}
		u = h.Do("PUT", "/users/"+id, map[string]any{"apnDeviceToken": "", "gcmDeviceToken": ""}, ts.Token(token)).Expect(t, 200, "").Map(t)
		if u["isRegisteredForPushNotifications"] != false {
			t.Errorf("still registered: %v", u)
		}
	})
	t.Run("NullClears", func(t *testing.T) {
		h.Do("PUT", "/users/"+id, map[string]any{"defaultTip": map[string]any{"scheme": "ABSOLUTE", "amount": 2}, "extended": map[string]any{"k": "v"}}, ts.Token(token)).Expect(t, 200, "")
		u := h.Do("PUT", "/users/"+id, `{"defaultTip":null,"extended":null}`, ts.Token(token)).Expect(t, 200, "").Map(t)
		if _, ok := u["defaultTip"]; ok {
			t.Errorf("defaultTip not cleared: %v", u["defaultTip"])
		}
		got := h.Do("GET", "/users/"+id+"?include=extended", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if len(got["extended"].(map[string]any)) != 0 {
			t.Errorf("extended not cleared: %v", got["extended"])
		}
	})
	t.Run("RolesRepeatedOrTooMany", func(t *testing.T) {
		for _, roles := range [][]string{{"USER", "USER"}, {"USER", "ADMIN", "USER"}} {
			h.Do("PUT", "/users/"+id, map[string]any{"roles": roles}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			h.Do("POST", "/users", map[string]any{"id": "roles" + strconv.Itoa(len(roles)) + "@example.com", "password": "Correct-Horse-9", "roles": roles}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		}
		u := h.Do("GET", "/users/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if roles := u["roles"].([]any); len(roles) != 1 {
			t.Errorf("roles = %v, want unchanged [USER]", roles)
		}
	})
	t.Run("LongPathID", func(t *testing.T) {
		h.Do("GET", "/users/"+strings.Repeat("a", 3000), nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/sessions/"+strings.Repeat("a", 3000), nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
}

func TestFullNameOnUpdate(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Ada", "Lovelace")
	tests := []struct {
		name string
		body map[string]any
		want string
	}{
		{"DerivedFollowsFirstName", map[string]any{"firstName": "Augusta"}, "Augusta Lovelace"},
		{"ChosenFullName", map[string]any{"fullName": "Countess of Lovelace"}, "Countess of Lovelace"},
		{"ChosenSurvivesLastName", map[string]any{"lastName": "King"}, "Countess of Lovelace"},
		{"EmptyFullNameDerivesAgain", map[string]any{"fullName": ""}, "Augusta King"},
		{"DerivedFollowsBoth", map[string]any{"firstName": "Ada", "lastName": "Byron"}, "Ada Byron"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := h.Do("PUT", "/users/"+id, tc.body, ts.Token(token)).Expect(t, 200, "").Map(t)["fullName"]
			if got != tc.want {
				t.Errorf("fullName = %v, want %q", got, tc.want)
			}
		})
	}
}
