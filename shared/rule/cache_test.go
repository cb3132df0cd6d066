package rule_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/tenant"
	ts "github.com/loyalty-platform/platform/shared/testsupport"
	"github.com/loyalty-platform/platform/shared/web"
)

// TestRulesCache: a warm function keeps a tenant's rules for the cache's
// window. A rule created in another container is not seen by this one's
// requests until the window passes, but the stream handler (which reads
// the rules afresh) applies it to the action meanwhile, once; a rule
// changed through this container's engine applies at once.
func TestRulesCache(t *testing.T) {
	h := ts.New(t)
	if h.Deps.TenantCache == nil {
		t.Skip("the harness runs without a tenant cache")
	}
	uid, warm := shopper(t, h, h.Admin(), "Cass"), shopper(t, h, h.Admin(), "Warm")
	p := newPerk(t, h, h.Admin(), nil)
	// This container reads the tenant's rules (none) on another user's
	// order: the rule below is only for uid, so a late stream delivery of
	// this order cannot earn anything.
	completeOrder(t, h, warm, map[string]any{"totalPrice": 5})
	// hasPoints waits for uid's points of p to reach want (the stream
	// delivers asynchronously), then checks they stay there.
	hasPoints := func(t *testing.T, want int) {
		t.Helper()
		got := 0
		for deadline := time.Now().Add(ts.StreamWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			h.WaitStreams()
			if got = points(t, h, h.Admin(), uid)[p]; got >= want {
				break
			}
		}
		h.WaitStreams()
		if got = points(t, h, h.Admin(), uid)[p]; got != want {
			t.Fatalf("points = %d, want %d", got, want)
		}
	}

	// Another container (its own cache) creates a rule on completed orders.
	other := *h.Deps.Rules
	other.Cache = tenant.NewCache()
	body, err := json.Marshal(ruleBody("ORDER_COMPLETED", []map[string]any{grant(p, 4)}, cond("context.user._id", "EQ", uid)))
	if err != nil {
		t.Fatal(err)
	}
	admin := web.Caller{TenantID: h.Tenant.ID, Service: true}
	created, err := other.Create(context.Background(), admin, body)
	if err != nil {
		t.Fatal(err)
	}

	// complete completes a new order of uid and returns the DynamoDB
	// queries the completion made.
	complete := func(t *testing.T) int {
		t.Helper()
		r, counted := h.DoCounted("PUT", "/orders/"+newOrder(t, h, uid), map[string]any{"state": "COMPLETED"}, h.Admin())
		r.Expect(t, 200, "")
		return counted.Operation("DynamoDB", "Query")
	}
	var within int
	t.Run("StaleInRequestAppliedByStream", func(t *testing.T) {
		within = complete(t)
		hasPoints(t, 4) // the stream applies the new rule, once
		if got := len(actionsOf(t, h, h.Tenant.ID, uid, "AWARD_GRANTED")); got != 1 {
			t.Fatalf("AWARD_GRANTED = %d, want 1", got)
		}
	})
	t.Run("ReadAgainAfterTheWindow", func(t *testing.T) {
		h.Clock.Advance(tenant.CacheTTL + time.Second)
		if after := complete(t); after != within+1 {
			t.Fatalf("queries after the window = %d, within it %d: want one more (the rules read again)", after, within)
		}
		hasPoints(t, 8)
		if again := complete(t); again != within {
			t.Fatalf("queries of the next request = %d, want %d (the rules cached again)", again, within)
		}
		hasPoints(t, 12)
	})
	t.Run("ChangedHereAppliesAtOnce", func(t *testing.T) {
		h.Do("PUT", "/rules/"+created.ID, map[string]any{"enabled": false}, h.Admin()).Expect(t, 200, "")
		complete(t)
		hasPoints(t, 12) // the disabled rule did not run

	})
}

// newOrder creates an open order of uid and returns its id.
func newOrder(t *testing.T, h *ts.Harness, uid string) string {
	t.Helper()
	return h.Do("POST", "/users/"+uid+"/orders", map[string]any{"totalPrice": 5}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}
