package web_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
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
		{"FreeNumberTooLarge", `{"free":{"n":1e126}}`, apierr.ValidationFailed, "free.n"},
		{"FreeNumberRoundsOutOfRange", `{"free":{"n":9.9999999999999999999999999999999999999E+125}}`, apierr.ValidationFailed, "free.n"},
		{"TooDeepNamesThePath", `{"items":[{"line1":"x"}],"free":{"a":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}}`, apierr.ValidationFailed, "free.a" + strings.Repeat("[0]", 29)},
		{"FreeNumberTooSmall", `{"free":{"n":-1e-131}}`, apierr.ValidationFailed, "free.n"},
		{"FreeNumberTooManyDigits", `{"free":{"n":1.23456789012345678901234567890123456789}}`, apierr.ValidationFailed, "free.n"},
		{"FreeNumberInArray", `{"free":{"a":[1,{"b":[2,1e308]}]}}`, apierr.ValidationFailed, "free.a[1].b[1]"},
		{"FreeNumbersAtLimits", `{"free":{"a":9.999999999999998E+125,"b":-1E-130,"c":0e999,"d":0.000}}`, "", ""},
		{"FreeEmptyKey", `{"free":{"a":{"":1}}}`, apierr.ValidationFailed, "free.a"},
		{"MapEmptyKey", `{"flags":{"":true}}`, apierr.ValidationFailed, "flags"},
		{"TypedNumberOutOfRange", `{"count":1e400}`, apierr.ValidationFailed, "count"},
		{"TypedNumberTooSmall", `{"items":[{"line1":"x"}],"count":1e-200}`, apierr.ValidationFailed, "count"},
		{"FreeTooLargeForAnItem", `{"free":{"a":[` + strings.Repeat(`1,`, 150000) + `1]}}`, apierr.ValidationFailed, "free.a"},
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

func TestTooDeepNamesThePath(t *testing.T) {
	tests := []struct{ name, in, field string }{
		{"Object", `{"free":{"s":"x","n":1,"a":` + strings.Repeat(`{"b":`, 40) + `1` + strings.Repeat(`}`, 40) + `}}`, "free.a" + strings.Repeat(".b", 29)},
		{"ArrayAfterScalars", `{"name":"x","tags":["a","b",` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `]}`, "tags[2]" + strings.Repeat("[0]", 29)},
		{"ObjectsInArray", `{"items":[{"line1":"x"},{"k":` + strings.Repeat(`{"b":`, 40) + `1` + strings.Repeat(`}`, 40) + `}]}`, "items[1].k" + strings.Repeat(".b", 28)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b body
			err := web.DecodeBytes([]byte(tc.in), &b)
			e, ok := apierr.As(err)
			if !ok || e.Field != tc.field {
				t.Errorf("err = %v, want field %s", err, tc.field)
			}
		})
	}
}

// TestErrorUnstorable: DynamoDB refusing a value it cannot hold is the
// client's VALIDATION_FAILED, alone or in a transaction; its other
// validation errors stay internal.
func TestErrorUnstorable(t *testing.T) {
	reason := func(code, msg string) types.CancellationReason {
		return types.CancellationReason{Code: aws.String(code), Message: aws.String(msg)}
	}
	tests := []struct {
		name   string
		err    error
		status int
	}{
		{"ItemTooLarge", fmt.Errorf("put location: %w", &smithy.GenericAPIError{Code: "ValidationException", Message: "Item size has exceeded the maximum allowed size"}), 422},
		{"NumberOverflow", &smithy.GenericAPIError{Code: "ValidationException", Message: "Number overflow. Attempting to store a number with magnitude larger than supported range"}, 422},
		{"InTransaction", fmt.Errorf("commit: %w", &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{
			reason("None", ""), reason("ValidationException", "Item size to update has exceeded the maximum allowed size")}}), 422},
		{"OtherValidation", &smithy.GenericAPIError{Code: "ValidationException", Message: "One or more parameter values were invalid: secret detail"}, 500},
		{"ConditionInTransaction", &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{reason("ConditionalCheckFailed", "")}}, 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			web.Error(w, httptest.NewRequest("POST", "/", nil), tc.err)
			if w.Code != tc.status || strings.Contains(w.Body.String(), "secret") || strings.Contains(w.Body.String(), "Item size") {
				t.Errorf("%d %s, want %d", w.Code, w.Body.String(), tc.status)
			}
		})
	}
}
