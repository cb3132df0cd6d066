package rule_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestRulesCache: a warm function keeps a tenant's rules and checks them
// against the tenant's rules version on every run, so a rule created,
// changed or deleted in another container applies to the very next
// request here (in the request, not later through the stream), and a
// request after no change queries no rules.
func TestRulesCache(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	if h.Deps.TenantCache == nil {
		t.Skip("the harness runs without a tenant cache")
	}
	uid, warm := shopper(t, h, h.Admin(), "Cass"), shopper(t, h, h.Admin(), "Warm")
	p := newPerk(t, h, h.Admin(), nil)
	// This container reads the tenant's rules (none) on another user's
	// order: the rule below is only for uid.
	completeOrder(t, h, warm, map[string]any{"totalPrice": 5})

	// Another container (its own cache) changes the rules.
	other := *h.Deps.Rules
	other.Cache = tenant.NewCache()
	admin := actor.Actor{TenantID: h.Tenant.ID, Service: true}
	// complete completes a new order of uid and returns the DynamoDB
	// queries the completion made.
	complete := func(t *testing.T) int {
		t.Helper()
		r, counted := h.DoCounted("PUT", "/orders/"+newOrder(t, h, uid), map[string]any{"state": "COMPLETED"}, h.Admin())
		r.Expect(t, 200, "")
		return counted.Operation("DynamoDB", "Query")
	}
	// hasPoints checks uid's points of p right after a request, then once
	// the stream delivered its actions (which must add nothing).
	hasPoints := func(t *testing.T, want int) {
		t.Helper()
		if got := points(t, h, h.Admin(), uid)[p]; got != want {
			t.Fatalf("points after the request = %d, want %d", got, want)
		}
		h.WaitStreams()
		if got := points(t, h, h.Admin(), uid)[p]; got != want {
			t.Fatalf("points after the stream = %d, want %d", got, want)
		}
	}

	var created rule.Rule
	t.Run("CreatedElsewhereAppliesInTheNextRequest", func(t *testing.T) {
		body, err := json.Marshal(ruleBody("ORDER_COMPLETED", []map[string]any{grant(p, 4)}, cond("context.user._id", "EQ", uid)))
		if err != nil {
			t.Fatal(err)
		}
		if created, err = other.Create(context.Background(), admin, body); err != nil {
			t.Fatal(err)
		}
		changed := complete(t)
		hasPoints(t, 4)
		if got := len(actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED")); got != 1 {
			t.Fatalf("AWARD_GRANTED = %d, want 1", got)
		}
		if same := complete(t); same != changed-1 {
			t.Fatalf("queries of a request after no change = %d, after the change %d: want one fewer (the rules not read again)", same, changed)
		}
		hasPoints(t, 8)
	})
	t.Run("ReadAgainAfterTheWindow", func(t *testing.T) {
		within := complete(t)
		h.Clock.Advance(tenant.CacheTTL + time.Second)
		if after := complete(t); after != within+1 {
			t.Fatalf("queries after the window = %d, within it %d: want one more (the rules read again)", after, within)
		}
		hasPoints(t, 16)
	})
	// The rule's grants on one order (metadata.orderId): the checks below
	// count those of the order the step completes, not the points, since
	// the actions stream (shared by the tests) may deliver an earlier
	// action again, which is judged by the rules as they are then.
	grantsOn := func(t *testing.T, orderID string) int {
		t.Helper()
		n := 0
		for _, a := range actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED") {
			if a.Metadata["orderId"] == orderID {
				n++
			}
		}
		return n
	}
	completeOne := func(t *testing.T) string {
		t.Helper()
		oid := newOrder(t, h, uid)
		h.Do("PUT", "/orders/"+oid, map[string]any{"state": "COMPLETED"}, h.Admin()).Expect(t, 200, "")
		return oid
	}
	t.Run("DisabledElsewhereStopsInTheNextRequest", func(t *testing.T) {
		if _, err := other.Update(context.Background(), admin, created.ID, []byte(`{"enabled":false}`)); err != nil {
			t.Fatal(err)
		}
		oid := completeOne(t)
		h.WaitStreams()
		if got := grantsOn(t, oid); got != 0 {
			t.Fatalf("grants on the order completed while the rule is disabled = %d, want 0", got)
		}
	})
	t.Run("DeletedElsewhereStopsInTheNextRequest", func(t *testing.T) {
		if _, err := other.Update(context.Background(), admin, created.ID, []byte(`{"enabled":true}`)); err != nil {
			t.Fatal(err)
		}
		oid := completeOne(t)
		if got := grantsOn(t, oid); got != 1 {
			t.Fatalf("grants on the order completed after the rule was enabled again = %d right after the request, want 1", got)
		}
		if err := other.Delete(context.Background(), admin, created.ID); err != nil {
			t.Fatal(err)
		}
		oid = completeOne(t)
		h.WaitStreams()
		if got := grantsOn(t, oid); got != 0 {
			t.Fatalf("grants on the order completed after the rule was deleted = %d, want 0", got)
		}
	})
}

// newOrder creates an open order of uid and returns its id.
func newOrder(t *testing.T, h *ts.Harness, uid string) string {
	t.Helper()
	return h.Do("POST", "/users/"+uid+"/orders", map[string]any{"totalPrice": 5}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}
