package web_test

import (
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/web"
)

func TestListParam(t *testing.T) {
	for _, tc := range []struct {
		name  string
		query string
		want  []string
	}{
		{"Absent", "", nil},
		{"Single", "include=tags", []string{"tags"}},
		{"CommaList", "include=tags,%20zones,,", []string{"tags", "zones"}},
		{"Repeated", "include=tags&include=zones", []string{"tags", "zones"}},
		{"Brackets", "include[]=tags", []string{"tags"}},
		{"EncodedBrackets", "include%5B%5D=tags", []string{"tags"}},
		{"BracketsRepeated", "include[]=tags&include[]=zones,links", []string{"tags", "zones", "links"}},
		{"BothForms", "include[]=zones&include=tags", []string{"tags", "zones"}},
		{"OtherNameIgnored", "includes=tags&include[0]=zones", nil},
		{"EmptyItems", "include=&include[]=", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/x?"+tc.query, nil)
			if got := web.ListParam(r, "include"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ListParam = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParamValues(t *testing.T) {
	r := httptest.NewRequest("GET", "/x?include=a,b&include[]=c&include=d", nil)
	if got, want := web.ParamValues(r, "include"), []string{"a,b", "d", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ParamValues = %q, want %q", got, want)
	}
}
