package rule_test

import (
	"fmt"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/rule"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestLargestTransactions runs, through HTTP, the largest transactions the
// rules make (README, "Transactions and DynamoDB's 100-item limit"): each
// completes within DynamoDB's 100 items, which ddb.Tx would otherwise
// refuse with a 500.
func TestLargestTransactions(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := shop(t, h, h.Admin(), "Limits")

	// Eleven rules of ten grants each on one completed order: the order's
	// chain applies the budget of 100 effects, one transaction a grant,
	// and skips the last 10 with one RULES_BUDGET_EXCEEDED. The client
	// sees the completion's 200 with the points earned so far.
	t.Run("BudgetOfGrants", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Budget")
		mine := cond("context.user._id", "EQ", uid)
		var perks []string
		for i := 0; i < 11; i++ {
			p := newPerk(t, h, h.Admin(), map[string]any{"title": fmt.Sprintf("Points %d", i)})
			perks = append(perks, p)
			newRule(t, h, ruleBody("ORDER_COMPLETED", grants(p, rule.MaxEffects), mine))
		}
		completeOrder(t, h, uid, map[string]any{"locationId": loc})
		h.WaitStreams()
		total := 0
		for _, n := range points(t, h, h.Admin(), uid) {
			total += n
		}
		if total != 100 {
			t.Errorf("points granted = %d, want the budget of 100", total)
		}
		exceeded := listActions(t, h, uid, rule.ActionBudgetExceeded)
		if len(exceeded) != 1 {
			t.Fatalf("RULES_BUDGET_EXCEEDED = %d, want 1", len(exceeded))
		}
		if m := exceeded[0]["metadata"].(map[string]any); m["effectsApplied"] != 100.0 || m["effectsSkipped"] != 10.0 {
			t.Errorf("RULES_BUDGET_EXCEEDED metadata = %v, want 100 applied and 10 skipped", m)
		}
	})

	// The largest group of one rule: a grant and nine ADD_TO_SEGMENT
	// effects, each on a segment holding five CLUB perks (each join
	// records one AWARD_GRANTED per perk): one transaction of 72 items
	// (the marker, the budget, the grant's 6, 7 a join and the user's
	// feed head).
	t.Run("GrantAndNineJoins", func(t *testing.T) {
		uid := shopper(t, h, h.Admin(), "Joiner")
		effects := []map[string]any{grant(newPerk(t, h, h.Admin(), nil), 5)}
		var segs []string
		for i := 0; i < rule.MaxEffects-1; i++ {
			seg := newSegment(t, h)
			segs = append(segs, seg)
			for j := 0; j < 5; j++ {
				newPerk(t, h, h.Admin(), map[string]any{"title": fmt.Sprintf("Club %d.%d", i, j), "template": "CLUB", "segmentId": seg})
			}
			effects = append(effects, map[string]any{"type": "ADD_TO_SEGMENT", "segmentId": seg})
		}
		newRule(t, h, ruleBody("ORDER_COMPLETED", effects, cond("context.user._id", "EQ", uid)))
		completeOrder(t, h, uid, map[string]any{"locationId": loc})
		h.WaitStreams()
		for _, seg := range segs {
			found := false
			for _, m := range members(t, h, seg) {
				found = found || m == uid
			}
			if !found {
				t.Errorf("user not a member of segment %s", seg)
			}
		}
		if n := len(listActions(t, h, uid, "AWARD_GRANTED")); n != 1+5*len(segs) {
			t.Errorf("AWARD_GRANTED = %d, want %d (the grant and one per CLUB perk)", n, 1+5*len(segs))
		}
	})
}
