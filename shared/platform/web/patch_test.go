package web_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

func TestDecodePatch(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		want     map[string]string
		wantCode apierr.Code
		wantMsg  string
	}{
		{"Fields", `{"a":1,"b":null,"c":{"d":[1]}}`, map[string]string{"a": "1", "b": "null", "c": `{"d":[1]}`}, "", ""},
		{"Empty", `{}`, nil, apierr.ValidationFailed, "send at least one field to change"},
		{"NotAnObject", `[1]`, nil, apierr.ValidationFailed, "the body must be a JSON object"},
		{"Null", `null`, nil, apierr.ValidationFailed, "send at least one field to change"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, err := web.DecodePatch([]byte(tt.body))
			if tt.wantCode != "" {
				e, ok := apierr.As(err)
				if !ok || e.Code != tt.wantCode || e.Message != tt.wantMsg {
					t.Fatalf("DecodePatch(%s) error = %v, want %s %q", tt.body, err, tt.wantCode, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodePatch(%s): %v", tt.body, err)
			}
			got := map[string]string{}
			for k, v := range patch {
				got[k] = string(v)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodePatch(%s) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
}

type doc struct {
	ID    string   `json:"_id"`
	Title string   `json:"title"`
	Terms *string  `json:"terms,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	N     int      `json:"n"`
}

func TestMergePatch(t *testing.T) {
	terms := "old terms"
	cur := doc{ID: "1", Title: "Coffee", Terms: &terms, Tags: []string{"a", "b"}, N: 3}
	tests := []struct {
		name     string
		patch    string
		want     string
		wantCode apierr.Code
		wantMsg  string
	}{
		{"ReplacesAField", `{"title":"Tea"}`, `{"_id":"1","title":"Tea","terms":"old terms","tags":["a","b"],"n":3}`, "", ""},
		{"NullRemovesAField", `{"terms":null}`, `{"_id":"1","title":"Coffee","tags":["a","b"],"n":3}`, "", ""},
		{"ArrayReplacedWhole", `{"tags":["c"]}`, `{"_id":"1","title":"Coffee","terms":"old terms","tags":["c"],"n":3}`, "", ""},
		{"SkippedFieldUnchanged", `{"_id":"2","n":4}`, `{"_id":"1","title":"Coffee","terms":"old terms","tags":["a","b"],"n":4}`, "", ""},
		{"NullOfARequiredFieldIsItsZero", `{"n":null}`, `{"_id":"1","title":"Coffee","terms":"old terms","tags":["a","b"],"n":0}`, "", ""},
		{"WrongType", `{"n":"four"}`, "", apierr.ValidationFailed, "the body does not make a valid thing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var patch map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.patch), &patch); err != nil {
				t.Fatal(err)
			}
			var next doc
			err := web.MergePatch("thing", cur, patch, []string{"_id"}, &next)
			if tt.wantCode != "" {
				e, ok := apierr.As(err)
				if !ok || e.Code != tt.wantCode || e.Message != tt.wantMsg {
					t.Fatalf("MergePatch(%s) error = %v, want %s %q", tt.patch, err, tt.wantCode, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatalf("MergePatch(%s): %v", tt.patch, err)
			}
			b, err := json.Marshal(next)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := string(b), tt.want; got != want {
				t.Errorf("MergePatch(%s) = %s, want %s", tt.patch, got, want)
			}
		})
	}
	if got, want := *cur.Terms, "old terms"; got != want {
		t.Errorf("cur.Terms after the merges = %q, want %q (cur is not changed)", got, want)
	}
}
