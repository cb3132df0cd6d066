package web_test

import (
	"encoding/json"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

type nullBody struct {
	Name    *string                    `json:"name"`
	Count   int                        `json:"count"`
	Tags    []string                   `json:"tags"`
	Inner   *inner                     `json:"inner"`
	Items   []inner                    `json:"items"`
	Free    map[string]any             `json:"free"`
	Any     any                        `json:"any"`
	Raw     json.RawMessage            `json:"raw"`
	Fields  map[string]json.RawMessage `json:"fields"`
	Flags   map[string]bool            `json:"flags"`
	Clear   *string                    `json:"clear"`
	Options *struct {
		Rule *string `json:"rule"`
	} `json:"options"`
}

// TestDecodeNulls: a null is refused, naming its path, wherever encoding/json
// would read it as "absent"; free-form values keep theirs, and the paths an
// endpoint declares Nullable accept it.
func TestDecodeNulls(t *testing.T) {
	nullable := web.Nullable("clear", "options.rule")
	tests := []struct {
		name  string
		in    string
		field string // "" when the body is accepted
	}{
		{"PointerField", `{"name":null}`, "name"},
		{"NumberField", `{"count":null}`, "count"},
		{"ArrayField", `{"tags":null}`, "tags"},
		{"ArrayItem", `{"tags":["a",null]}`, "tags[1]"},
		{"ObjectField", `{"inner":null}`, "inner"},
		{"NestedField", `{"inner":{"line1":null}}`, "inner.line1"},
		{"NestedInArray", `{"items":[{"line1":"a"},{"line1":null}]}`, "items[1].line1"},
		{"MapValue", `{"flags":{"on":null}}`, "flags.on"},
		{"MapField", `{"flags":null}`, "flags"},
		{"AfterValidFields", `{"count":1,"name":"a","tags":null}`, "tags"},
		{"DeclaredNullable", `{"clear":null}`, ""},
		{"DeclaredNullableNested", `{"options":{"rule":null}}`, ""},
		{"DeclaredPathOnly", `{"options":null}`, "options"},
		{"FreeFormValue", `{"any":null}`, ""},
		{"InsideFreeForm", `{"free":{"a":null,"b":[null,{"c":null}]}}`, ""},
		{"RawJSON", `{"raw":null}`, ""},
		{"RawJSONValues", `{"fields":{"a":null}}`, ""},
		{"NoNull", `{"name":"a","count":0,"tags":[],"inner":{"line1":""}}`, ""},
		{"NullString", `{"name":"null"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got nullBody
			err := web.DecodeBytes([]byte(tt.in), &got, nullable)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("DecodeBytes(%s) = %v, want nil", tt.in, err)
				}
				return
			}
			e, ok := apierr.As(err)
			if !ok || e.Code != apierr.ValidationFailed || e.Field != tt.field {
				t.Fatalf("DecodeBytes(%s) = %v, want VALIDATION_FAILED naming %s", tt.in, err, tt.field)
			}
			if want := tt.field + ": cannot be null"; e.Message != want {
				t.Errorf("message = %q, want %q", e.Message, want)
			}
		})
	}
}

// TestDecodeNullsWithoutOption: without Nullable, the same null is refused.
func TestDecodeNullsWithoutOption(t *testing.T) {
	var got nullBody
	err := web.DecodeBytes([]byte(`{"clear":null}`), &got)
	if e, ok := apierr.As(err); !ok || e.Field != "clear" {
		t.Fatalf("DecodeBytes = %v, want VALIDATION_FAILED naming clear", err)
	}
}
