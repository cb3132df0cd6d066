package rule_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// grantsCounted adds up the AwardsGranted values of tenant's EMF lines.
func grantsCounted(t *testing.T, out *ts.LogBuffer, tenantID string) int {
	t.Helper()
	n := 0
	for _, m := range out.Take(t) {
		if m["_aws"] == nil || m["Tenant"] != tenantID {
			continue
		}
		if v, ok := m[metrics.AwardsGranted].(float64); ok {
			n += int(v)
		}
	}
	return n
}

// TestRuleGrantsCounted: the points a rule grants count in the business
// metric AwardsGranted, once per grant however often the action runs.
// The action is built here and never written, so that only this run, not
// the stream, applies the rule.
func TestRuleGrantsCounted(t *testing.T) {
	// Not parallel: it captures the default logger (slog.SetDefault),
	// which every new harness replaces.
	h := ts.New(t)
	uid := shopper(t, h, h.Admin(), "Mia")
	p1, p2 := newPerk(t, h, h.Admin(), nil), newPerk(t, h, h.Admin(), nil)
	newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{grant(p1, 2)}, cond("context.user._id", "EQ", uid)))
	newRule(t, h, ruleBody("ORDER_COMPLETED", []map[string]any{grant(p2, 5)}, cond("context.user._id", "EQ", uid)))

	var out ts.LogBuffer
	prev := slog.Default()
	slog.SetDefault(web.NewLoggerTo(&out)) // the logger of a context without a request's
	t.Cleanup(func() { slog.SetDefault(prev) })
	a := action.Action{ID: action.NewID(), Type: "ORDER_COMPLETED", TenantID: h.Tenant.ID, Metadata: map[string]any{},
		Context: action.Context{Tenant: action.TenantRef{ID: h.Tenant.ID}, User: &action.UserRef{ID: uid}}}
	for i := 0; i < 2; i++ { // the second run finds both rules applied
		if _, err := h.Deps.Rules.Run(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := grantsCounted(t, &out, h.Tenant.ID), 2; got != want {
		t.Fatalf("AwardsGranted = %d, want %d", got, want)
	}
	if got := points(t, h, h.Admin(), uid); got[p1] != 2 || got[p2] != 5 {
		t.Fatalf("points = %v, want %s: 2, %s: 5", got, p1, p2)
	}
}
