package access_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/web"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestPagingLimits: every paged list of the template (a GET answering a
// page block) pages 100 items by default, takes limit 1 to 1000 and
// answers 422 to 0 and to 1001, whatever the route.
func TestPagingLimits(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	f := newFixture(t, h)
	paged := 0
	for _, fn := range h.Template.Functions {
		for _, r := range fn.Routes {
			if r.Method != "GET" {
				continue
			}
			path := f.path(t, r.Path)
			q := query(r.Method, r.Path)
			join := "?"
			if q != "" {
				join = "&"
			}
			resp := h.Do("GET", path+q, nil, h.Admin())
			if resp.Status != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				continue
			}
			var list map[string]any
			if json.Unmarshal(resp.Body, &list) != nil {
				continue // an array answer: no paging
			}
			page, ok := list["page"].(map[string]any)
			if !ok {
				continue
			}
			paged++
			t.Run(r.Key(), func(t *testing.T) {
				if page["limit"] != float64(web.DefaultLimit) {
					t.Errorf("default page limit = %v, want %d", page["limit"], web.DefaultLimit)
				}
				got := h.Do("GET", path+q+join+"limit=1000", nil, h.Admin()).Expect(t, 200, "").Map(t)["page"].(map[string]any)
				if got["limit"] != float64(web.MaxLimit) {
					t.Errorf("limit=1000: page limit = %v", got["limit"])
				}
				for _, bad := range []string{"0", "1001", "-1", "x"} {
					h.Do("GET", path+q+join+"limit="+bad, nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
				}
			})
		}
	}
	if paged < 10 {
		t.Fatalf("only %d paged lists found", paged)
	}
	t.Logf("%d paged lists", paged)
}

// bodyLimits lists the routes whose body is not JSON, with their own size
// limits (tested with their routes).
var bodyLimits = map[string]string{
	"PUT /users/{userId}/avatar": "a JPEG image of at most 4 MiB",
	"POST /locations/imports":    "a multipart CSV file of at most 4 MiB",
	"POST /awards/imports":       "a multipart CSV file of at most 4 MiB",
}

// TestBodyLimit: every POST and PUT route with a JSON body (or none)
// answers 413 PAYLOAD_TOO_LARGE to a body over 1 MiB (web.MaxBodyBytes),
// before it acts.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	f := newFixture(t, h)
	big := `{"title":"` + strings.Repeat("x", web.MaxBodyBytes) + `"}`
	for _, fn := range h.Template.Functions {
		for _, r := range fn.Routes {
			if r.Method != "POST" && r.Method != "PUT" || bodyLimits[r.Key()] != "" {
				continue
			}
			t.Run(r.Key(), func(t *testing.T) {
				h.Do(r.Method, f.path(t, r.Path)+query(r.Method, r.Path), big, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).
					Expect(t, 413, "PAYLOAD_TOO_LARGE")
			})
		}
	}
}
