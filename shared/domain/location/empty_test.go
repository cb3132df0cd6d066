package location_test

import (
	"encoding/json"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestEmptyValuesKept checks that empty lists and objects a client sends
// are stored and returned as sent (not dropped as absent) by create, get
// and update, while absent fields stay absent.
func TestEmptyValuesKept(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	empties := map[string]any{
		"tags": []any{}, "facilities": []any{}, "regions": []any{}, "buttons": []any{}, "beacons": []any{},
		"services": map[string]any{}, "openingHours": map[string]any{}, "zones": map[string]any{},
		"links": map[string]any{}, "extended": map[string]any{},
	}
	body := minimal("Empty Values")
	for k, v := range empties {
		body[k] = v
	}
	check := func(t *testing.T, got map[string]any, want map[string]any) {
		t.Helper()
		for k, v := range want {
			g, ok := got[k]
			if !ok {
				t.Errorf("%s is absent, want %v", k, v)
				continue
			}
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(v)
			if string(gb) != string(wb) {
				t.Errorf("%s = %s, want %s", k, gb, wb)
			}
		}
	}
	created := h.Do("POST", "/locations", body, h.Admin()).Expect(t, 201, "").Map(t)
	id := created["_id"].(string)

	t.Run("Create", func(t *testing.T) { check(t, created, empties) })
	t.Run("Get", func(t *testing.T) {
		check(t, h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t), empties)
	})
	t.Run("AbsentStaysAbsent", func(t *testing.T) {
		plain := create(t, h, minimal("Plain"))
		for k := range empties {
			if _, ok := plain[k]; ok {
				t.Errorf("%s present on a location created without it: %v", k, plain[k])
			}
		}
	})
	t.Run("UpdateToEmpty", func(t *testing.T) {
		lid := create(t, h, map[string]any{"title": "Full Tags", "geo": []float64{0, 0}, "tags": []string{"a"}, "services": map[string]any{"checkins": true}})["_id"].(string)
		want := map[string]any{"tags": []any{}, "services": map[string]any{}}
		check(t, h.Do("PUT", "/locations/"+lid, want, h.Admin()).Expect(t, 200, "").Map(t), want)
		check(t, h.Do("GET", "/locations/"+lid, nil, h.Admin()).Expect(t, 200, "").Map(t), want)
	})
	t.Run("NullClears", func(t *testing.T) {
		got := h.Do("PUT", "/locations/"+id, map[string]any{"tags": nil}, h.Admin()).Expect(t, 200, "").Map(t)
		if _, ok := got["tags"]; ok {
			t.Errorf("tags after null = %v, want absent", got["tags"])
		}
	})
	t.Run("ListWithInclude", func(t *testing.T) {
		var l struct {
			Items []map[string]any `json:"items"`
		}
		h.Do("GET", "/locations?title=Empty%20Values&include=tags,zones", nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 1 {
			t.Fatalf("items = %v", l.Items)
		}
		check(t, l.Items[0], map[string]any{"facilities": []any{}, "services": map[string]any{}, "zones": map[string]any{}}) // tags: cleared by NullClears
	})
}
