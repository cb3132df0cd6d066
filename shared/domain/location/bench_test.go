package location_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/location"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// seedLocations returns n realistic locations: about a tenth are
// "Kitchen"s, spread over Great Britain and France, with opening hours,
// an address, services, tags and a description.
func seedLocations(n int) []location.Location {
	r := rand.New(rand.NewPCG(1, 2))
	adjectives := []string{"Red", "Golden", "Old", "Little", "Royal", "Green", "Blue", "Happy", "Crown", "River"}
	nouns := []string{"Lion", "Oak", "Bridge", "Garden", "Market", "Mill", "Harbour", "Square", "Kitchen", "Bakery"}
	tags := []string{"pizza", "burgers", "vegan", "coffee", "late", "breakfast", "drive-thru", "kids", "terrace", "wifi"}
	hours := map[string]string{"monday": "08:00-22:00", "tuesday": "08:00-22:00", "wednesday": "08:00-22:00", "thursday": "08:00-22:00", "friday": "08:00-23:00", "saturday": "09:00-23:00", "sunday": "10:00-20:00"}
	out := make([]location.Location, n)
	for i := range out {
		out[i] = location.Location{
			Title:           fmt.Sprintf("%s %s %d", adjectives[r.IntN(len(adjectives))], nouns[r.IntN(len(nouns))], i),
			Description:     "A neighbourhood restaurant with seasonal food, local beer and a garden at the back. Booking recommended at weekends.",
			State:           []string{location.StateActive, location.StateActive, location.StateActive, location.StatePending, location.StateRetired}[r.IntN(5)],
			Geo:             []float64{-5 + r.Float64()*12, 43 + r.Float64()*15},
			OpeningHours:    hours,
			Services:        map[string]bool{"checkins": r.IntN(2) == 0, "pre_order": r.IntN(2) == 0, "delivery": r.IntN(3) == 0},
			Tags:            []string{tags[r.IntN(len(tags))], tags[r.IntN(len(tags))]},
			Regions:         []string{[]string{"London", "North", "Scotland", "Paris", "Lyon"}[r.IntN(5)]},
			Timezone:        "Europe/London",
			Address:         &location.Address{Address: fmt.Sprintf("%d High Street", i), Town: "Townsville", Postcode: "AB1 2CD", Country: "GB"},
			Contacts:        &location.Contacts{Email: "hello@example.com", Phone: "+44 20 7946 0958"},
			ListingImageURL: "https://img.example.com/list.jpg",
		}
	}
	return out
}

// BenchmarkListLocations10k measures GET /locations end to end (HTTP,
// API Gateway stand-in, Lambda adapter, handler, DynamoDB Local) for a
// tenant with 10,000 locations. The Warm cases reuse the summaries cached
// in the function (one version check per call); the Cold cases drop the
// cache first, so every call reads all 10,000 summaries from the table.
// The Read* cases time the two DynamoDB parts of a list alone.
func BenchmarkListLocations10k(b *testing.B) {
	h := ts.New(b)
	h.SkipContract = true // measure the API, not the test's response validation
	ctx := context.Background()
	svc := h.Deps.Locations
	seeded, err := svc.Seed(ctx, h.Tenant.ID, seedLocations(10000))
	if err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, query string, headers ts.Headers, cold bool) {
		b.Helper()
		for i := 0; i < b.N; i++ {
			if cold {
				svc.DropCache()
			}
			r := h.Do("GET", "/locations"+query, nil, headers)
			if r.Status != 200 {
				b.Fatalf("status %d: %s", r.Status, r.Body)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		query   string
		headers ts.Headers
	}{
		{"Default", "", h.Anon()},
		{"Search", "?search=kitchen", h.Anon()},
		{"Near", "?lat=51.5074&long=-0.1278", h.Anon()},
		{"AdminAllIncludes", "?include=created,updated,state,tags,regions,address,description", h.Admin()},
	} {
		b.Run("Warm/"+tc.name, func(b *testing.B) { get(b, tc.query, tc.headers, false) })
		b.Run("Cold/"+tc.name, func(b *testing.B) { get(b, tc.query, tc.headers, true) })
	}
	b.Run("ReadSummaries", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if n, err := svc.ReadSummaries(ctx, h.Tenant.ID); err != nil || n != 10000 {
				b.Fatalf("%d summaries, %v", n, err)
			}
		}
	})
	b.Run("BatchGet100", func(b *testing.B) {
		ids := make([]string, 100)
		for i := range ids {
			ids[i] = seeded[i*97].ID
		}
		for i := 0; i < b.N; i++ {
			if n, err := svc.BatchGet(ctx, h.Tenant.ID, ids); err != nil || n != 100 {
				b.Fatalf("%d locations, %v", n, err)
			}
		}
	})
}
