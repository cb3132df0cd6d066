package perk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// location creates a location with the headers of a tenant's admin.
func location(t *testing.T, h *ts.Harness, title string, admin ts.Headers) string {
	t.Helper()
	return h.Do("POST", "/locations", map[string]any{"title": title, "geo": []float64{-0.13, 51.51}}, admin).Expect(t, 201, "").Map(t)["_id"].(string)
}

// TestPerkLocations: every id of a perk's locationIds is a location of the
// tenant (POST and PUT), read in one batch; another tenant's location or
// an unknown id is 422 VALIDATION_FAILED naming locationIds[i], and
// changes nothing.
func TestPerkLocations(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	own := location(t, h, "Own One", h.Admin())
	own2 := location(t, h, "Own Two", h.Admin())
	other, otherKey := h.NewTenant(tenant.Settings{})
	foreign := location(t, h, "Foreign", ts.Headers{"x-service-auth-token", otherKey, "x-application-id", other.ID})
	const unknown = "5f1c0a9b2d3e4f5a6b7c8d9e"

	for _, tc := range []struct {
		name  string
		ids   []string
		field string // "" when accepted
	}{
		{"Own", []string{own, own2}, ""},
		{"Empty", []string{}, ""},
		{"OtherTenants", []string{own, foreign}, "locationIds[1]"},
		{"Unknown", []string{unknown}, "locationIds[0]"},
		{"UnknownAfterOwn", []string{own, own2, unknown}, "locationIds[2]"},
		{"Malformed", []string{own, "a b"}, "locationIds[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := with(stampCard(), "locationIds", tc.ids)
			if tc.field == "" {
				p := h.Do("POST", "/perks", body, h.Admin()).Expect(t, 201, "").Map(t)
				if got := fmt.Sprint(p["locationIds"]); got != fmt.Sprint(tc.ids) {
					t.Errorf("locationIds = %s, want %v", got, tc.ids)
				}
				return
			}
			before := len(h.Do("GET", "/perks", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any))
			r := h.Do("POST", "/perks", body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field+": ") {
				t.Errorf("message = %q, want it to name %s", msg, tc.field)
			}
			if after := len(h.Do("GET", "/perks", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)); after != before {
				t.Errorf("a refused perk was stored: %d perks, were %d", after, before)
			}
		})
	}

	t.Run("Update", func(t *testing.T) {
		id := h.Do("POST", "/perks", with(stampCard(), "locationIds", []string{own}), h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
		for _, tc := range []struct {
			name  string
			ids   []string
			field string
		}{
			{"OtherTenants", []string{foreign}, "locationIds[0]"},
			{"Unknown", []string{own2, unknown}, "locationIds[1]"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := h.Do("PUT", "/perks/"+id, map[string]any{"locationIds": tc.ids}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
				if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, tc.field+": ") {
					t.Errorf("message = %q, want it to name %s", msg, tc.field)
				}
				if got := fmt.Sprint(h.Do("GET", "/perks/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)["locationIds"]); got != fmt.Sprint([]string{own}) {
					t.Errorf("after a refused PUT locationIds = %s, want [%s]", got, own)
				}
			})
		}
		t.Run("Own", func(t *testing.T) {
			got := h.Do("PUT", "/perks/"+id, map[string]any{"locationIds": []string{own2, own}}, h.Admin()).Expect(t, 200, "").Map(t)
			if fmt.Sprint(got["locationIds"]) != fmt.Sprint([]string{own2, own}) {
				t.Errorf("locationIds = %v", got["locationIds"])
			}
		})
		t.Run("OtherFieldsDoNotReadLocations", func(t *testing.T) {
			_, calls := h.DoCounted("PUT", "/perks/"+id, map[string]any{"title": "Renamed"}, h.Admin())
			if n := calls.Operation(callcount.DynamoDB, "BatchGetItem"); n != 0 {
				t.Errorf("a PUT without locationIds made %d BatchGetItem calls, want 0", n)
			}
		})
	})

	t.Run("OneBatchRead", func(t *testing.T) {
		// The check is one batch read of the distinct ids (100 a
		// request), never a GetItem per id.
		ids := make([]string, 0, perk.MaxLocations)
		for len(ids) < perk.MaxLocations {
			ids = append(ids, own, own2)
		}
		r, calls := h.DoCounted("POST", "/perks", with(stampCard(), "locationIds", ids), h.Admin())
		r.Expect(t, 201, "")
		if n := calls.Operation(callcount.DynamoDB, "GetItem"); n > 1 {
			t.Errorf("%d GetItem calls (one is the tenant's at most)", n)
		}
		if n := calls.Operation(callcount.DynamoDB, "BatchGetItem"); n != 1 {
			t.Errorf("%d BatchGetItem calls for %d ids (2 distinct), want 1", n, len(ids))
		}
		tooMany := make([]string, perk.MaxLocations+1)
		for i := range tooMany {
			tooMany[i] = own
		}
		r = h.Do("POST", "/perks", with(stampCard(), "locationIds", tooMany), h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		if msg := r.Map(t)["message"].(string); !strings.HasPrefix(msg, "locationIds: ") {
			t.Errorf("message = %q, want it to name locationIds", msg)
		}
	})
}
