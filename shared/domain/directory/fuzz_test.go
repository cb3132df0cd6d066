package directory

import (
	"net/http"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// FuzzListQuery: the query string of GET /users gives a query within the
// documented limits (a name search of 3 to MaxNameSearch characters,
// fixed-width createdAfter/updatedAfter bounds, limit 1 to 1000) or a 4xx;
// never a panic.
func FuzzListQuery(f *testing.F) {
	for _, s := range []string{"", "name=Vic", "name=ab", "name=%20%20abc%20", "role=guest&sort=-created", "sort=name",
		"createdAfter=2024-05-01", "updatedAfter=2024-05-01T12:00:00%2B02:00", "createdAfter=0000-01-01T00:00:00%2B01:00",
		"updatedAfter=9999-12-31T23:59:59-05:00", "include=points,checkin&include[]=credentials", "include=nope",
		"limit=1000&startKey=x", "limit=1001", "credentialId=a+b@example.com", "name=Vic&sort=created",
		"name=%3DHYPERLINK(%22x%22)", "limit=1e308", "name=%40SUM(1%2B1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseQuery(raw); err != nil {
			return // refused before any handler (web.strictQuery)
		}
		r := &http.Request{URL: &url.URL{Path: "/users", RawQuery: raw}, Header: http.Header{}}
		q, err := listQuery(r)
		if err != nil {
			e, ok := apierr.As(err)
			if !ok || e.Code.Status() < 400 || e.Code.Status() > 499 {
				t.Fatalf("listQuery(%q) = %v, want a 4xx", raw, err)
			}
			return
		}
		if n := utf8.RuneCountInString(q.Name); q.Name != "" && (n < 3 || n > MaxNameSearch) {
			t.Fatalf("listQuery(%q): name search %q", raw, q.Name)
		}
		for _, v := range []string{q.CreatedAfter, q.UpdatedAfter} {
			if v != "" && len(v) != len(clock.Format) {
				t.Fatalf("listQuery(%q): bound %q is not fixed-width", raw, v)
			}
		}
		if q.Limit < 1 || q.Limit > web.MaxLimit {
			t.Fatalf("listQuery(%q): limit %d", raw, q.Limit)
		}
		_ = q.scope()
	})
}
