package award_test

import (
	"context"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/award"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestMaterialise stores virtual awards with their initial points ahead of
// their first change, and is safe to repeat: the second run stores
// nothing, and an award stored already, or one that is not virtual or has
// no initial points, is left alone.
func TestMaterialise(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		perk    map[string]any
		granted int // points granted before (0: none, the award not stored)
		// stored is what the first run stores; available and entries
		// the award's points and ledger entries after both runs.
		stored, available, entries int
	}{
		{"GlobalWithInitialPoints", map[string]any{"isGlobal": true, "points": map[string]any{"initial": 5}}, 0, 1, 5, 1},
		{"GlobalStoredAlready", map[string]any{"isGlobal": true, "points": map[string]any{"initial": 5}}, 2, 0, 7, 2},
		{"GlobalWithoutInitialPoints", map[string]any{"isGlobal": true}, 0, 0, 0, 0},
		{"NotVirtual", map[string]any{"points": map[string]any{"initial": 5}}, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uid := h.AdminUser(t, "Mat", "Erialise")
			p := newPerk(t, h, tt.perk)
			if tt.granted > 0 {
				grant(t, h, p, uid, tt.granted)
			}
			sub, err := h.Deps.Awards.Load(ctx, h.Tenant.ID, "", p, uid, "")
			if err != nil {
				t.Fatal(err)
			}
			for run, want := range []int{tt.stored, 0} {
				got, err := h.Deps.Awards.Materialise(ctx, []award.Subject{sub, sub}, h.Clock.Now())
				if err != nil {
					t.Fatalf("run %d: %v", run+1, err)
				}
				if got != want {
					t.Errorf("run %d stored %d awards, want %d", run+1, got, want)
				}
			}
			if tt.available == 0 && tt.entries == 0 {
				return
			}
			awardID := uid + "-" + p
			if got := ledgerOf(t, h, uid, awardID, h.Admin(), 50); len(got) != tt.entries {
				t.Errorf("ledger entries = %d, want %d", len(got), tt.entries)
			}
			for _, a := range pointAwards(t, h, uid, "", h.Admin()) {
				if m := a.(map[string]any); m["_id"] == awardID {
					if got := available(t, m); got != tt.available {
						t.Errorf("available = %d, want %d", got, tt.available)
					}
				}
			}
		})
	}
}
