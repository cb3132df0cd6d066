package pos_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestFeedOfConcurrentCredits sends 20 credits of one user at once through
// HTTP: every one commits (a 409 is sent again, as a client would), the
// user's feed head counts them without a gap
// (its sign-up's two actions, then the 20), and the head's records on the
// Actions table's stream, replayed in order, hold each of the user's
// actions once with the sequences 1 .. 22. Each BALANCE_CREDITED carries
// the balance it left, and the order of the sequences is the order of the
// balances. Serial: it watches the rules function's stream.
func TestFeedOfConcurrentCredits(t *testing.T) {
	h := ts.New(t)
	var mu sync.Mutex
	seen := map[string]bool{}
	var heads []action.Sequenced // of every head of the tenant, in order
	h.WatchStream("rules", func(r events.DynamoDBEventRecord) {
		if tid := r.Change.NewImage["tenantId"]; tid.DataType() != events.DataTypeString || tid.String() != h.Tenant.ID {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[r.Change.SequenceNumber] {
			return
		}
		seen[r.Change.SequenceNumber] = true
		evs, ok, err := action.FeedOf(ddb.StreamItem(r.Change.NewImage))
		if err != nil {
			t.Errorf("head record %s: %v", r.Change.SequenceNumber, err)
		}
		if ok {
			heads = append(heads, evs...)
		}
	})
	uid := h.AdminUser(t, "Fiona", "Feed")
	scope := "USER#" + uid
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// 20 at once may exhaust a credit's attempts: its 409 CONFLICT
			// wrote nothing (no sequence spent), and the client retries.
			for try := 0; ; try++ {
				r := h.Do("POST", "/users/"+uid+"/credits", `{"type":"BALANCE","amount":1}`, h.Admin())
				if r.Status == 200 {
					return
				}
				if r.Status != 409 || try == 10 {
					t.Errorf("credit %d: %d %s", i, r.Status, r.Body)
					return
				}
			}
		})
	}
	wg.Wait()
	seq, last, err := h.Deps.Actions.Head(context.Background(), h.Tenant.ID, scope)
	if err != nil {
		t.Fatal(err)
	}
	if seq != n+2 {
		t.Errorf("head seq = %d, want %d (sign-up 2 + %d credits)", seq, n+2, n)
	}
	if len(last) != 1 || last[0].Type != "BALANCE_CREDITED" || last[0].Metadata["balanceAfter"] != "20.00" {
		t.Errorf("the head's last events = %+v, want the credit that left 20.00", last)
	}
	h.WaitStreams()
	mu.Lock()
	defer mu.Unlock()
	var replay []action.Sequenced
	for _, e := range heads {
		if e.Scope == scope {
			replay = append(replay, e)
		}
	}
	if len(replay) != n+2 {
		t.Fatalf("the head's stream records hold %d events, want %d", len(replay), n+2)
	}
	ids := map[string]bool{}
	for i, e := range replay {
		if e.Sequence != int64(i+1) || e.Scope != scope || ids[e.ID] {
			t.Errorf("event %d: sequence %d, scope %s, id %s (seen before: %v)", i, e.Sequence, e.Scope, e.ID, ids[e.ID])
		}
		ids[e.ID] = true
	}
	if got := []string{replay[0].Type, replay[1].Type}; !slices.Equal(got, []string{"USER_CREATED", "USER_ACTIVATED"}) {
		t.Errorf("first events = %v, want the sign-up's, in order", got)
	}
	for i, e := range replay[2:] {
		if want := fmt.Sprintf("%d.00", i+1); e.Type != "BALANCE_CREDITED" || e.Metadata["balanceAfter"] != want || e.Metadata["currency"] != "GBP" {
			t.Errorf("event %d: %s balanceAfter %v %v, want BALANCE_CREDITED %s GBP", e.Sequence, e.Type, e.Metadata["balanceAfter"], e.Metadata["currency"], want)
		}
	}
	for _, a := range actionsOf(t, h, uid, "BALANCE_CREDITED") {
		if !ids[a.ID] {
			t.Errorf("action %s is in no head record", a.ID)
		}
	}
}
