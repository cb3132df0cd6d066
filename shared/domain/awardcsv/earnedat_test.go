package awardcsv_test

import (
	"strings"
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestImportEarnedAt checks the optional earned_at column: a row's lot is
// dated by it (a lot past its expiry is granted and expires at once), and
// a bad date fails the row only.
func TestImportEarnedAt(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY", "points": map[string]any{"expiry": map[string]any{"policy": "AFTER_EARN", "duration": "P12M"}}})
	fresh, old, bad := h.AdminUser(t, "Fre", "Sh"), h.AdminUser(t, "O", "Ld"), h.AdminUser(t, "B", "Ad")
	now := h.Clock.Now()
	op := importFile(h, "dryRun=false", csvOf(
		[]string{"user_id", "perk_id", "points", "earned_at"},
		[]string{fresh, perk, "10", now.AddDate(0, -6, 0).Format(time.RFC3339)},
		[]string{old, perk, "10", now.AddDate(0, -13, 0).Format(time.RFC3339)},
		[]string{bad, perk, "10", "yesterday"},
	))
	if got, want := counts(op), [4]int{3, 2, 0, 1}; got != want {
		t.Fatalf("counts (total, imported, skipped, errors) = %v, want %v", got, want)
	}
	tests := []struct {
		name  string
		user  string
		types string
		avail int
	}{
		{"SixMonthsAgo", fresh, "EARN", 10},
		{"ThirteenMonthsAgo", old, "EARN EXPIRY", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			award := tc.user + "-" + perk
			page := h.Do("GET", "/users/"+tc.user+"/pointawards/"+award+"/ledger", nil, h.Admin()).Expect(t, 200, "").Map(t)
			var types []string
			items := page["items"].([]any)
			for i := len(items) - 1; i >= 0; i-- {
				types = append(types, items[i].(map[string]any)["type"].(string))
			}
			if got := strings.Join(types, " "); got != tc.types {
				t.Errorf("entries = %s, want %s", got, tc.types)
			}
			if bal := int(items[0].(map[string]any)["balanceAfter"].(float64)); bal != tc.avail {
				t.Errorf("balance %d, want %d", bal, tc.avail)
			}
		})
	}
	t.Run("BadDate", func(t *testing.T) {
		recs := results(h, op)
		errs := column(t, recs, "error")
		if !strings.Contains(errs[2], "earned_at") {
			t.Errorf("row 3's error = %q, want it to name earned_at", errs[2])
		}
	})
}
