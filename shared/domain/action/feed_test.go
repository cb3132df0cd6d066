package action_test

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/testkit"
)

// feedAction is an action of type typ of the harness's tenant, about user
// uid ("" for none).
func feedAction(h *testkit.Harness, typ, uid string) action.Action {
	a := action.Action{
		Type: typ, TenantID: h.Tenant.ID, When: action.WhenAt(time.Now(), nil),
		Context: action.Context{Tenant: action.TenantRef{ID: h.Tenant.ID, Title: h.Tenant.Title}},
	}
	if uid != "" {
		a.Context.User = &action.UserRef{ID: uid, Name: "Fay Feed", PrimaryPlatform: "IOS"}
	}
	return a
}

// head reads a scope's head and checks its last sequence and its events'
// ids and sequences.
func head(t *testing.T, h *testkit.Harness, scope string, seq int64, ids ...string) {
	t.Helper()
	got, events, err := h.Deps.Actions.Head(context.Background(), h.Tenant.ID, scope)
	if err != nil {
		t.Fatal(err)
	}
	if got != seq {
		t.Errorf("head %s: seq = %d, want %d", scope, got, seq)
	}
	var have []string
	for i, e := range events {
		have = append(have, e.ID)
		if want := seq - int64(len(ids)) + 1 + int64(i); e.Sequence != want || e.Scope != scope {
			t.Errorf("head %s: event %d has sequence %d scope %s, want %d %s", scope, i, e.Sequence, e.Scope, want, scope)
		}
	}
	if !slices.Equal(have, ids) {
		t.Errorf("head %s: events %v, want %v", scope, have, ids)
	}
}

// TestFeedHeads records actions in transactions and reads the heads: two
// actions of one user in one transaction are one head update with
// consecutive sequences in the order recorded; each scope (another user,
// the tenant) has its own head; a duplicate Put does not advance the head;
// and each head event is the action as its item stores it.
func TestFeedHeads(t *testing.T) {
	t.Parallel()
	h := testkit.New(t)
	ctx := context.Background()
	rec := h.Deps.Actions
	ada, bob := "Ada"+action.NewID(), "Bob"+action.NewID()

	tx := &ddb.Tx{}
	var ids []string
	for _, a := range []action.Action{
		feedAction(h, action.CheckinCreated, ada), feedAction(h, "TENANT_UPDATED", ""),
		feedAction(h, action.Checkout, ada), feedAction(h, action.CheckinCreated, bob),
	} {
		got, err := rec.Record(tx, a)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got.ID)
	}
	if tx.Len() != 7 {
		t.Errorf("transaction items = %d, want 4 Puts and 3 heads", tx.Len())
	}
	if err := tx.Run(ctx, rec.DB); err != nil {
		t.Fatal(err)
	}
	t.Run("TwoOfOneUserInOneTransaction", func(t *testing.T) { head(t, h, "USER#"+ada, 2, ids[0], ids[2]) })
	t.Run("AnotherUser", func(t *testing.T) { head(t, h, "USER#"+bob, 1, ids[3]) })
	t.Run("Tenant", func(t *testing.T) { head(t, h, action.ScopeTenant, 1, ids[1]) })

	t.Run("TransactItems", func(t *testing.T) {
		as := []action.Action{feedAction(h, action.Checkout, ada), feedAction(h, "LOCATION_CREATED", ""), feedAction(h, action.CheckinCreated, ada)}
		for i := range as {
			as[i].ID = action.NewID()
		}
		items, err := rec.TransactItems(as...)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != 5 || items[3].Update == nil || items[4].Update == nil {
			t.Fatalf("items = %d, want 3 Puts then 2 head updates", len(items))
		}
		if err := ddb.Transact(ctx, rec.DB, items); err != nil {
			t.Fatal(err)
		}
		head(t, h, "USER#"+ada, 4, as[0].ID, as[2].ID)
		head(t, h, action.ScopeTenant, 2, as[1].ID)
	})

	t.Run("DuplicatePutDoesNotAdvance", func(t *testing.T) {
		a := feedAction(h, action.CheckinCreated, bob)
		a.ID = action.NewID()
		for range 2 {
			if err := rec.Put(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		head(t, h, "USER#"+bob, 2, a.ID)
	})

	t.Run("EventIsTheStoredAction", func(t *testing.T) {
		stored, err := rec.ByUser(ctx, h.Tenant.ID, bob, 10)
		if err != nil {
			t.Fatal(err)
		}
		_, events, err := rec.Head(ctx, h.Tenant.ID, "USER#"+bob)
		if err != nil || len(events) != 1 || len(stored) != 2 {
			t.Fatalf("head %v (%v), stored %d", events, err, len(stored))
		}
		if !reflect.DeepEqual(events[0].Action, stored[0]) {
			t.Errorf("head event = %+v, stored action = %+v", events[0].Action, stored[0])
		}
	})

	t.Run("HeadsAreListedNowhere", func(t *testing.T) {
		all, _, err := rec.List(ctx, h.Tenant.ID, action.Scope{}, action.Filter{}, nil, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 8 {
			t.Errorf("the tenant's list holds %d actions, want the 8 recorded", len(all))
		}
	})
}

// TestFeedOf: FeedOf reads head items only; any other item of the table
// is not a head.
func TestFeedOf(t *testing.T) {
	t.Parallel()
	h := testkit.New(t)
	rec := h.Deps.Actions
	a := feedAction(h, action.CheckinCreated, "u1")
	a.ID = action.NewID()
	items, err := rec.TransactItems(a)
	if err != nil {
		t.Fatal(err)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	tests := []struct {
		name string
		item map[string]types.AttributeValue
		ok   bool
	}{
		{"ActionItem", items[0].Put.Item, false},
		{"OtherItem", map[string]types.AttributeValue{"pk": s(h.Tenant.ID + "#RULEAPPLIED#x"), "sk": s("FEED")}, false},
		{"NoKeys", map[string]types.AttributeValue{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok, err := action.FeedOf(tc.item); ok != tc.ok || err != nil {
				t.Errorf("FeedOf = %v, %v; want %v", ok, err, tc.ok)
			}
		})
	}
	t.Run("HeadItem", func(t *testing.T) {
		if err := ddb.Transact(context.Background(), rec.DB, items); err != nil {
			t.Fatal(err)
		}
		out, err := rec.DB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(rec.Table), Key: items[1].Update.Key, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, attr := range []string{"gsi1pk", "gsi2pk", "gsi3pk"} {
			if _, has := out.Item[attr]; has {
				t.Errorf("the head has %s", attr)
			}
		}
		events, ok, err := action.FeedOf(out.Item)
		if !ok || err != nil || len(events) != 1 || events[0].ID != a.ID || events[0].Sequence != 1 || events[0].Scope != "USER#u1" {
			t.Errorf("FeedOf(head) = %+v, %v, %v", events, ok, err)
		}
	})
	t.Run("HeadsRefuseActionsNotRecorded", func(t *testing.T) {
		if _, err := rec.Heads(feedAction(h, action.CheckinCreated, "u1")); err == nil {
			t.Error("Heads of an action without an id: no error")
		}
	})
}

// TestTenantUpdateUsesTheTenantHead: PUT /tenant records TENANT_UPDATED
// on the tenant's head.
func TestTenantUpdateUsesTheTenantHead(t *testing.T) {
	t.Parallel()
	h := testkit.New(t)
	h.Do("PUT", "/tenant", map[string]any{"title": "Fed tenant"}, h.Admin()).Expect(t, 200, "")
	seq, events, err := h.Deps.Actions.Head(context.Background(), h.Tenant.ID, action.ScopeTenant)
	if err != nil {
		t.Fatal(err)
	}
	if seq != 1 || len(events) != 1 || events[0].Type != "TENANT_UPDATED" {
		t.Errorf("tenant head = %d %+v, want TENANT_UPDATED as 1", seq, events)
	}
}
