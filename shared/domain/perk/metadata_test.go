package perk_test

import (
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestPerkMetadata checks a perk's metadata: stored and answered as sent
// ("" keys dropped), replaced whole by a PUT that sends it (null or {}
// removes it), shown on the perk's awards, and a bad object refused with nothing
// changed.
func TestPerkMetadata(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	body := stampCard()
	body["metadata"] = map[string]any{"sku": "TEA-12", "shelf": "B", "drop": ""}
	p := h.Do("POST", "/perks", body, h.Admin()).Expect(t, 201, "").Map(t)
	id := p["_id"].(string)
	check := func(t *testing.T, got map[string]any, want map[string]any) {
		t.Helper()
		md, _ := got["metadata"].(map[string]any)
		if len(md) != len(want) {
			t.Fatalf("metadata = %v, want %v", got["metadata"], want)
		}
		for k, v := range want {
			if md[k] != v {
				t.Errorf("metadata = %v, want %v", md, want)
			}
		}
	}
	check(t, p, map[string]any{"sku": "TEA-12", "shelf": "B"})
	steps := []struct {
		name  string
		patch map[string]any
		want  map[string]any
	}{
		{"OtherFieldKeeps", map[string]any{"title": "Tea card"}, map[string]any{"sku": "TEA-12", "shelf": "B"}},
		{"ReplacesWhole", map[string]any{"metadata": map[string]any{"shelf": "C", "aisle": "4", "sku": ""}}, map[string]any{"shelf": "C", "aisle": "4"}},
		{"EmptyRemoves", map[string]any{"metadata": map[string]any{}}, nil},
		{"SetAgain", map[string]any{"metadata": map[string]any{"sku": "TEA-12"}}, map[string]any{"sku": "TEA-12"}},
	}
	for _, tc := range steps {
		t.Run(tc.name, func(t *testing.T) {
			check(t, h.Do("PUT", "/perks/"+id, tc.patch, h.Admin()).Expect(t, 200, "").Map(t), tc.want)
			check(t, h.Do("GET", "/perks/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t), tc.want)
		})
	}
	for _, tc := range []struct {
		name string
		body map[string]any
	}{
		{"ErrNumberValue", map[string]any{"title": "X", "metadata": map[string]any{"k": 1}}},
		{"ErrKeyTooLong", map[string]any{"title": "X", "metadata": map[string]any{strings.Repeat("k", 41): "v"}}},
		{"ErrNullKey", map[string]any{"title": "X", "metadata": map[string]any{"k": nil}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("PUT", "/perks/"+id, tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			got := h.Do("GET", "/perks/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
			if got["title"] != "Tea card" {
				t.Errorf("a refused PUT changed the title to %v", got["title"])
			}
		})
	}
	t.Run("NullRemovesAll", func(t *testing.T) {
		got := h.Do("PUT", "/perks/"+id, map[string]any{"metadata": nil}, h.Admin()).Expect(t, 200, "").Map(t)
		if _, ok := got["metadata"]; ok {
			t.Errorf("metadata after null = %v", got["metadata"])
		}
		h.Do("PUT", "/perks/"+id, map[string]any{"metadata": map[string]any{"sku": "TEA-13"}}, h.Admin()).Expect(t, 200, "")
	})
	t.Run("AwardShowsIt", func(t *testing.T) {
		uid := h.AdminUser(t, "Award", "Holder")
		a := h.Do("POST", "/perks/"+id+"/grant", map[string]any{"userId": uid}, h.Admin()).Expect(t, 200, "").Map(t)
		check(t, a, map[string]any{"sku": "TEA-13"})
	})
}
