package web_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/web"
)

type body struct {
	Name  string          `json:"name,omitempty"`
	Count int             `json:"count,omitempty"`
	Tags  []string        `json:"tags,omitempty"`
	Inner *inner          `json:"inner,omitempty"`
	Items []inner         `json:"items,omitempty"`
	Free  map[string]any  `json:"free,omitempty"`
	Links map[string]link `json:"links,omitempty"`
	Flags map[string]bool `json:"flags,omitempty"`
}

type link struct {
	Enabled bool     `json:"enabled,omitempty"`
	Tables  []string `json:"tables,omitempty"`
}

type inner struct {
	Line1 string `json:"line1,omitempty"`
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		code  apierr.Code
		field string
	}{
		{"Valid", `{"name":"a","count":2,"tags":["x"]}`, "", ""},
		{"Empty", ``, apierr.ValidationFailed, ""},
		{"Malformed", `{"name":`, apierr.ValidationFailed, ""},
		{"BadTokenInArray", `{"tags":[x"]}`, apierr.ValidationFailed, ""},
		{"BadTokenInObject", `{"inner":{"line1":"l],"`, apierr.ValidationFailed, ""},
		{"BadKeyInObject", `{"inner":{x:1}}`, apierr.ValidationFailed, ""},
		{"NotObject", `["a"]`, apierr.ValidationFailed, ""},
		{"UnknownField", `{"nickname":"a"}`, apierr.ValidationFailed, "nickname"},
		{"WrongType", `{"count":"two"}`, apierr.ValidationFailed, "count"},
		{"WrongNestedType", `{"tags":[1]}`, apierr.ValidationFailed, "tags[0]"},
		{"WrongTypeSecondItem", `{"tags":["a", true]}`, apierr.ValidationFailed, "tags[1]"},
		{"ArrayForString", `{"name":["a"]}`, apierr.ValidationFailed, "name"},
		{"ObjectForArray", `{"tags":{"a":"b"}}`, apierr.ValidationFailed, "tags"},
		{"WrongTypeInMapValue", `{"flags":{"on":"yes"}}`, apierr.ValidationFailed, "flags.on"},
		{"WrongTypeInMapStruct", `{"links":{"x":{"enabled":"yes"}}}`, apierr.ValidationFailed, "links.x.enabled"},
		{"WrongTypeDeepInMapStruct", `{"links":{"x":{"tables":["t", 2]}}}`, apierr.ValidationFailed, "links.x.tables[1]"},
		{"WrongTypeInArrayStruct", `{"items":[{"line1":"x"},{"line1":5}]}`, apierr.ValidationFailed, "items[1].line1"},
		{"TwoObjects", `{"name":"a"}{"name":"b"}`, apierr.ValidationFailed, ""},
		{"TrailingGarbage", `{"name":"a"} x`, apierr.ValidationFailed, ""},
		{"CaseInsensitiveMatch", `{"NAME":"a"}`, apierr.ValidationFailed, "NAME"},
		{"DuplicateKey", `{"name":"a","name":"b"}`, apierr.ValidationFailed, "name"},
		{"NestedUnknown", `{"inner":{"line1":"x","zip":"1"}}`, apierr.ValidationFailed, "inner.zip"},
		{"UnknownInArray", `{"items":[{"line1":"x"},{"extra":1}]}`, apierr.ValidationFailed, "items[1].extra"},
		{"FreeFormAllowsAnyKey", `{"free":{"Anything":{"Goes":1}}}`, "", ""},
		{"TooLarge", `{"name":"` + strings.Repeat("a", web.MaxBodyBytes) + `"}`, apierr.PayloadTooLarge, ""},
		{"FreeFormAtMaxDepth", `{"free":` + strings.Repeat(`{"a":`, web.MaxDepth-1) + `1` + strings.Repeat(`}`, web.MaxDepth-1) + `}`, "", ""},
		{"TooDeep", `{"free":` + strings.Repeat(`{"a":`, web.MaxDepth) + `1` + strings.Repeat(`}`, web.MaxDepth) + `}`, apierr.ValidationFailed, ""},
		{"VeryDeepArray", `{"name":` + strings.Repeat(`[`, 100000) + strings.Repeat(`]`, 100000) + `}`, apierr.ValidationFailed, ""},
		{"BracketsInStringsDoNotCount", `{"name":"` + strings.Repeat(`[{\"`, 100) + `"}`, "", ""},
		{"InvalidUTF8", "{\"name\":\"\xff\xfe\"}", apierr.ValidationFailed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.in))
			var b body
			err := web.Decode(r, &b)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			e, ok := apierr.As(err)
			if !ok || e.Code != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
			if tc.field != "" && e.Field != tc.field {
				t.Errorf("field = %q, want %q", e.Field, tc.field)
			}
		})
	}
}

func TestErrorHidesInternalDetails(t *testing.T) {
	w := httptest.NewRecorder()
	web.Error(w, httptest.NewRequest("GET", "/", nil), errString("dynamodb: table UsersTable secret detail"))
	if w.Code != 500 || strings.Contains(w.Body.String(), "secret") || !strings.Contains(w.Body.String(), `"internal error"`) {
		t.Errorf("500 body = %d %s", w.Code, w.Body.String())
	}
}

type errString string

func (e errString) Error() string { return string(e) }
