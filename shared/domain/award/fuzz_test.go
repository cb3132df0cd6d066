package award

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// FuzzListParams: the query parameters of the award lists (filters, fields,
// the x-api-version header) give well-formed values or a 422; never a
// panic.
func FuzzListParams(f *testing.F) {
	for _, s := range []string{"", "includeDisabled=true&includeUnvisualisedAwards=false", "includeDisabled=1", "includeDisabled=yes",
		"locationId=abc-1", "locationId=a%23b", "fields=points,title", "fields=password", "fields[]=perkId"} {
		f.Add(s, "")
		f.Add(s, "8")
	}
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, raw, version string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return // refused before any handler (web.strictQuery)
		}
		r := &http.Request{URL: &url.URL{Path: "/awards", RawQuery: raw}, Header: http.Header{}}
		r.Header.Set(web.HeaderAPIVersion, version)
		flt, err := filterOf(r)
		if err == nil && flt.LocationID != "" && !web.ValidID(flt.LocationID) {
			t.Fatalf("filterOf(%q): location %q", raw, flt.LocationID)
		}
		fields, fErr := parseFields(r)
		for _, f := range fields {
			if !slices.Contains(Fields, f) {
				t.Fatalf("parseFields(%q): field %q", raw, f)
			}
		}
		_, vErr := web.APIVersion(r)
		for _, err := range []error{err, fErr, vErr} {
			if err == nil {
				continue
			}
			if e, ok := apierr.As(err); !ok || e.Code != apierr.ValidationFailed {
				t.Fatalf("%q: %v, want VALIDATION_FAILED", raw, err)
			}
		}
		_ = scopeOf(r)
	})
}
