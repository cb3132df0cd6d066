package location_test

import (
	"encoding/json"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestValuesDynamoDBCannotHold: a free JSON value DynamoDB could not store
// is VALIDATION_FAILED naming its path, on create and on update, never a
// 500; values at DynamoDB's limits are stored and read back.
func TestValuesDynamoDBCannotHold(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id := create(t, h, minimal("Values"))["_id"].(string)
	body := func(extended string) string {
		b, _ := json.Marshal(minimal("Values"))
		return strings.TrimSuffix(string(b), "}") + `,"extended":` + extended + `}`
	}
	nested := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, tc := range []struct {
		name, extended, field string
	}{
		{"NumberTooLarge", `{"n":1e126}`, "extended.n"},
		{"Float64Max", `{"n":1e308}`, "extended.n"},
		{"RoundsOutOfRange", `{"n":9.9999999999999999e125}`, "extended.n"},
		{"NumberTooSmall", `{"n":1e-131}`, "extended.n"},
		{"TooManyDigits", `{"n":1234567890123456789012345678901234567891}`, "extended.n"},
		{"InList", `{"a":[1,{"b":-1e200}]}`, "extended.a[1].b"},
		{"EmptyKey", `{"a":{"":"x"}}`, "extended.a"},
		{"NestedTooDeep", nested(40), "extended"},
	} {
		for _, method := range []string{"POST", "PUT"} {
			t.Run(tc.name+method, func(t *testing.T) {
				path := "/locations"
				if method == "PUT" {
					path += "/" + id
				}
				var e struct{ Code, Message string }
				h.Do(method, path, body(tc.extended), h.Admin()).Expect(t, 422, "VALIDATION_FAILED").JSON(t, &e)
				if !strings.HasPrefix(e.Message, tc.field) {
					t.Errorf("message = %q, want it to name %s", e.Message, tc.field)
				}
			})
		}
	}
	t.Run("AtTheLimits", func(t *testing.T) {
		got := h.Do("POST", "/locations", body(`{"big":9.999999999999998e125,"small":-1e-130,"digits":1.2345678901234567,"nested":`+nested(30)+`}`), h.Admin()).Expect(t, 201, "").Map(t)
		ext, _ := json.Marshal(got["extended"])
		if want := `{"big":9.999999999999998e+125,"digits":1.2345678901234567,"nested":` + nested(30) + `,"small":-1e-130}`; string(ext) != want {
			t.Errorf("extended = %s, want %s", ext, want)
		}
		read := h.Do("GET", "/locations/"+got["_id"].(string), nil, h.Admin()).Expect(t, 200, "").Map(t)
		if back, _ := json.Marshal(read["extended"]); string(back) != string(ext) {
			t.Errorf("read back %s, want %s", back, ext)
		}
	})
}
