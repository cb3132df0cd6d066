package award_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestEnrichmentsCache: a warm function keeps a tenant's INTERNAL
// enrichments for the cache's window. One created in another container
// shows on the awards once the window has passed; one created, changed or
// deleted through this container's service shows at once.
func TestEnrichmentsCache(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	if h.Deps.TenantCache == nil {
		t.Skip("the harness runs without a tenant cache")
	}
	uid := h.AdminUser(t, "Cid", "Cached")
	perkID := newPerk(t, h, nil)
	grant(t, h, perkID, uid, 1)
	title := func(t *testing.T) any {
		t.Helper()
		items := userList(t, h, "/awards?userId="+uid, h.Admin(), v8).items
		if len(items) != 1 {
			t.Fatalf("items = %v", items)
		}
		return items[0]["title"]
	}
	plain := title(t) // this container reads the enrichments: none

	other := *h.Deps.Enrichments
	other.Cache = tenant.NewCache()
	body, err := json.Marshal(map[string]any{"loyaltyRewardId": perkID, "loyaltyProvider": "INTERNAL", "title": "Elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := other.Create(context.Background(), actor.Actor{TenantID: h.Tenant.ID, Service: true}, body)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("StaleWithinTheWindow", func(t *testing.T) {
		if got := title(t); got != plain {
			t.Fatalf("title = %v, want %v until the window passes", got, plain)
		}
	})
	t.Run("SeenAfterTheWindow", func(t *testing.T) {
		h.Clock.Advance(tenant.CacheTTL + time.Second)
		if got := title(t); got != "Elsewhere" {
			t.Fatalf("title = %v, want Elsewhere", got)
		}
	})
	t.Run("ChangedHereAppliesAtOnce", func(t *testing.T) {
		h.Do("PUT", "/awardenrichments/"+elsewhere.ID, map[string]any{"title": "Here"}, h.Admin()).Expect(t, 200, "")
		if got := title(t); got != "Here" {
			t.Fatalf("title = %v, want Here", got)
		}
		h.Do("DELETE", "/awardenrichments/"+elsewhere.ID, nil, h.Admin()).Expect(t, 204, "")
		if got := title(t); got != plain {
			t.Fatalf("title = %v, want %v after the delete", got, plain)
		}
	})
}
