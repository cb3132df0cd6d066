package checkin_test

import (
	"fmt"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// BenchmarkCheckinCycle measures a check-in and its checkout through HTTP
// (the API Gateway stand-in, the Lambda adapter, DynamoDB Local), each a
// transaction with its action.
func BenchmarkCheckinCycle(b *testing.B) {
	h := ts.New(b)
	loc := benchLocation(b, h, "Bench")
	id := benchUser(b, h)
	path := "/users/" + id + "/checkins"
	body := map[string]any{"locationId": loc}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := h.Do("POST", path, body, h.Admin()); r.Status != 201 {
			b.Fatalf("check in: %d %s", r.Status, r.Body)
		}
		if r := h.Do("DELETE", path, nil, h.Admin()); r.Status != 204 {
			b.Fatalf("check out: %d %s", r.Status, r.Body)
		}
	}
}

// BenchmarkLocationList measures a page of a location with 200 live
// check-ins: the count query and the read up to the page.
func BenchmarkLocationList(b *testing.B) {
	h := ts.New(b)
	loc := benchLocation(b, h, "Busy")
	for i := 0; i < 200; i++ {
		id := benchUser(b, h)
		if r := h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc}, h.Admin()); r.Status != 201 {
			b.Fatalf("check in: %d %s", r.Status, r.Body)
		}
	}
	for _, page := range []int{1, 10} {
		b.Run(fmt.Sprintf("Page%d", page), func(b *testing.B) {
			path := fmt.Sprintf("/locations/%s/checkins?per_page=20&page=%d", loc, page)
			for i := 0; i < b.N; i++ {
				if r := h.Do("GET", path, nil, h.Admin()); r.Status != 200 {
					b.Fatalf("list: %d %s", r.Status, r.Body)
				}
			}
		})
	}
}

func benchLocation(b *testing.B, h *ts.Harness, title string) string {
	body := map[string]any{"title": title, "geo": []float64{-0.1276, 51.5072}, "services": map[string]any{"checkins": true}}
	r := h.Do("POST", "/locations", body, h.Admin())
	if r.Status != 201 {
		b.Fatalf("create location: %d %s", r.Status, r.Body)
	}
	return r.Map(b)["_id"].(string)
}

func benchUser(b *testing.B, h *ts.Harness) string {
	body := map[string]any{"firstName": "Ben", "lastName": "Mark", "credentials": []map[string]any{{"provider": "EMAIL", "id": ts.UniqueEmail("bench")}}}
	r := h.Do("POST", "/users?autoActivate=true", body, h.Admin())
	if r.Status != 201 {
		b.Fatalf("create user: %d %s", r.Status, r.Body)
	}
	id := r.Map(b)["id"].(string)
	if r := h.Do("PUT", "/users/"+id+"/avatar", ts.JPEG(), h.Admin(), ts.Headers{"Content-Type", "image/jpeg"}); r.Status != 200 {
		b.Fatalf("avatar: %d %s", r.Status, r.Body)
	}
	return id
}
