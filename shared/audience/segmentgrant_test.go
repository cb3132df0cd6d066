package audience_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/ddb"
	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// faultyGrants runs hook before the awards' transactions; a hook that
// returns an error fails that transaction instead of sending it.
type faultyGrants struct {
	ddb.API
	mu   sync.Mutex
	hook func(items []types.TransactWriteItem) error
}

func (d *faultyGrants) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	d.mu.Lock()
	hook := d.hook
	d.mu.Unlock()
	if hook != nil {
		if err := hook(in.TransactItems); err != nil {
			return nil, err
		}
	}
	return d.API.TransactWriteItems(ctx, in, opts...)
}

// grantsMember reports whether items grant the segment grant's member uid
// (its marker's sort key).
func grantsMember(items []types.TransactWriteItem, uid string) bool {
	for _, it := range items {
		if it.Put == nil {
			continue
		}
		pk, _ := it.Put.Item["pk"].(*types.AttributeValueMemberS)
		sk, _ := it.Put.Item["sk"].(*types.AttributeValueMemberS)
		if pk != nil && sk != nil && strings.Contains(pk.Value, "#SEGGRANT#") && sk.Value == uid {
			return true
		}
	}
	return false
}

// TestSegmentGrantExactlyOnce checks the legacy grant to a segment: a
// retry with the same Idempotency-Key after a failure part way grants each
// member once, and a perk disabled while the members are granted does not
// stop the grant half way.
func TestSegmentGrantExactlyOnce(t *testing.T) {
	h := ts.New(t)
	seg := newSegment(t, h, "PERSISTENT", "")
	perk := h.Do("POST", "/perks", map[string]any{"title": "Promo", "template": "AD_HOC"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	members := []string{h.AdminUser(t, "A", "One"), h.AdminUser(t, "B", "Two"), h.AdminUser(t, "C", "Three")}
	h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": members}, h.Admin()).Expect(t, 200, "")
	db := &faultyGrants{API: h.Deps.Awards.DB}
	h.Deps.Awards.DB = db
	defer func() { h.Deps.Awards.DB = db.API }()
	points := func() map[string]float64 {
		out := map[string]float64{}
		for _, u := range members {
			for _, a := range clubAwards(t, h, u, perk) {
				out[u] = a["points"].(map[string]any)["available"].(float64)
			}
		}
		return out
	}

	t.Run("RetryAfterAFailurePartWay", func(t *testing.T) {
		failed := false
		db.mu.Lock()
		db.hook = func(items []types.TransactWriteItem) error {
			if !failed && grantsMember(items, members[1]) {
				failed = true
				return errors.New("injected: DynamoDB unavailable")
			}
			return nil
		}
		db.mu.Unlock()
		key := ts.Headers{"Idempotency-Key", "segment-grant-1"}
		h.ServerErrorsExpected = true
		h.Do("POST", "/perks/"+perk+"/grant", map[string]any{"segmentId": seg, "points": 3}, h.Admin(), key).Expect(t, 500, "INTERNAL")
		h.ServerErrorsExpected = false
		res := h.Do("POST", "/perks/"+perk+"/grant", map[string]any{"segmentId": seg, "points": 3}, h.Admin(), key).Expect(t, 200, "").Map(t)
		if n := len(res["awards"].([]any)); n != 3 {
			t.Errorf("retry = %v, want the 3 members' awards", res)
		}
		for _, u := range members {
			if got := points()[u]; got != 3 {
				t.Errorf("member %s holds %v points, want 3 (granted once)", u, got)
			}
		}
	})
	t.Run("PerkDisabledMeanwhile", func(t *testing.T) {
		once := sync.Once{}
		db.mu.Lock()
		db.hook = func(items []types.TransactWriteItem) error {
			if grantsMember(items, members[0]) {
				once.Do(func() {
					h.Do("PUT", "/perks/"+perk, map[string]any{"enabled": false}, h.Admin()).Expect(t, 200, "")
				})
			}
			return nil
		}
		db.mu.Unlock()
		res := h.Do("POST", "/perks/"+perk+"/grant", map[string]any{"segmentId": seg, "points": 2}, h.Admin(), ts.Headers{"Idempotency-Key", "segment-grant-2"}).Expect(t, 200, "").Map(t)
		if n := len(res["awards"].([]any)); n != 3 {
			t.Errorf("grant = %v, want all 3 members granted (the perk as it was when the grant started)", res)
		}
		db.mu.Lock()
		db.hook = nil
		db.mu.Unlock()
		h.Do("POST", "/perks/"+perk+"/grant", map[string]any{"segmentId": seg, "points": 2}, h.Admin()).Expect(t, 422, "PERK_DISABLED")
	})
}
