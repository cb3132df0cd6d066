package location_test

import (
	"math"
	"net/http"
	"net/url"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// FuzzParseListQuery: the query string of GET /locations gives a query
// within its ranges (a centre on the globe, limit 1 to 1000) or a 4xx;
// never a panic.
func FuzzParseListQuery(f *testing.F) {
	for _, s := range []string{"", "state=active,RETIRED", "state=GONE", "lat=51.5&long=-0.1", "lat=91&long=0", "lat=NaN&long=0",
		"lat=1", "search=pizza&search=soho", "tags=a,b&tags[]=c", "services=checkins", "services=teleport",
		"include=zones", "favourites=yes", "title=%E2%80%AE", "limit=0", "lat=1e308&long=-Inf",
		"lat=1e126&long=1e-131", "search=%3DHYPERLINK(%22x%22)", "title=%40SUM(1%2B1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return // refused before any handler (web.strictQuery)
		}
		r := &http.Request{URL: &url.URL{Path: "/locations", RawQuery: raw}, Header: http.Header{}}
		q, err := location.ParseListQuery(r)
		if err != nil {
			e, ok := apierr.As(err)
			if !ok || e.Code.Status() < 400 || e.Code.Status() > 499 {
				t.Fatalf("ParseListQuery(%q) = %v, want a 4xx", raw, err)
			}
			return
		}
		if q.HasCentre && (math.IsNaN(q.Lat) || math.IsNaN(q.Long) || math.Abs(q.Lat) > 90 || math.Abs(q.Long) > 180) {
			t.Fatalf("ParseListQuery(%q): centre %v,%v", raw, q.Lat, q.Long)
		}
		if q.Limit < 1 || q.Limit > web.MaxLimit {
			t.Fatalf("ParseListQuery(%q): limit %d", raw, q.Limit)
		}
	})
}
