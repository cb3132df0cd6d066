package awardcsv_test

import (
	"fmt"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestImportLiability imports rows of two perks (many rows of each perk
// per transaction) over awards granted before, and checks that the
// points liability report equals the sum of the awards: each batch adds
// its rows' changes to one shard per perk, once per transaction. A dry
// run changes nothing.
func TestImportLiability(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	a := newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY", "points": map[string]any{"expiry": map[string]any{"policy": "AFTER_EARN", "duration": "P6M"}}})
	b := newPerk(t, h, map[string]any{"title": "Other", "template": "PSEUDO_CURRENCY"})
	us := users(t, h, 40)
	for _, u := range us[:5] {
		h.Do("POST", "/pointperks/"+a+"/awards", map[string]any{"userId": u, "points": 7}, h.Admin()).Expect(t, 200, "")
	}
	rows := [][]string{{"user_id", "perk_" + a, "perk_" + b}}
	for i, u := range us {
		rows = append(rows, []string{u, fmt.Sprint(1 + i), fmt.Sprint(100 + i)})
	}
	check := func(t *testing.T) {
		t.Helper()
		want := map[string]int{}
		for _, u := range us {
			for p, n := range awards(t, h, u) {
				want[p] += n
			}
		}
		rep := h.Do("GET", "/reports/points-liability", nil, h.Admin()).Expect(t, 200, "").Map(t)
		for _, p := range rep["perks"].([]any) {
			pm := p.(map[string]any)
			id := pm["perkId"].(string)
			if got := int(pm["outstanding"].(float64)); got != want[id] {
				t.Errorf("perk %s: outstanding %d, want %d (the awards' sum)", id, got, want[id])
			}
			expiring := 0
			for _, e := range pm["expiring"].([]any) {
				expiring += int(e.(map[string]any)["points"].(float64))
			}
			if id == a && expiring != want[id] {
				t.Errorf("perk %s: expiring %d within 12 months, want all %d (P6M)", id, expiring, want[id])
			}
			if id == b && expiring != 0 {
				t.Errorf("perk %s never expires, yet %d points expire", id, expiring)
			}
		}
	}
	tests := []struct {
		name  string
		query string
	}{
		{"DryRun", "dryRun=true"},
		{"Import", "dryRun=false"},
		{"ImportAgain", "dryRun=false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op := importFile(h, tc.query, csvOf(rows...))
			if c := counts(op); c[3] != 0 {
				t.Fatalf("counts %v: %v", c, results(h, op))
			}
			check(t)
		})
	}
}
