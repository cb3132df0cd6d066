package checkin_test

import (
	"context"
	"sync"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/user"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestDeletedUserLeavesLocation checks that deleting a user (redaction)
// removes their current check-in at once, so a location's list no longer
// shows them, and their name from their actions and feed head.
func TestDeletedUserLeavesLocation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Redaction Cafe")
	id, token := photoUser(t, h, "Gone", "Soon")
	h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}, ts.Token(token)).Expect(t, 201, "")
	if got := locationCheckins(t, h, loc); len(got) != 1 {
		t.Fatalf("location check-ins = %v, want 1", got)
	}
	h.Do("DELETE", "/users/"+id, nil, h.Admin()).Expect(t, 204, "")
	if got := locationCheckins(t, h, loc); len(got) != 0 {
		t.Errorf("location check-ins after deletion = %v, want none", got)
	}
	acts := actions(t, h, id)
	if len(acts) == 0 {
		t.Fatal("no actions recorded for the user")
	}
	for _, a := range acts {
		if a.Context.User == nil || a.Context.User.ID != id || a.Context.User.Name != "" {
			t.Errorf("action %s still names the deleted user: %+v", a.ID, a.Context.User)
		}
	}
	// The user's feed head keeps its sequence, not the copies of their
	// last actions.
	seq, events, err := h.Deps.Actions.Head(context.Background(), h.Tenant.ID, "USER#"+id)
	if err != nil || seq < 2 || len(events) != 0 {
		t.Errorf("the deleted user's feed head = %d %+v (%v), want no events", seq, events, err)
	}
}

// staleProfiles answers with the profiles read before the users were
// deleted: a check-in request that read its user just before DELETE
// /users/{userId} ran.
type staleProfiles map[string]user.Profile

func (p staleProfiles) Get(_ context.Context, _, userID string) (user.Profile, error) {
	return p[userID], nil
}

// TestCheckinOfDeletedUser checks that no check-in is written for a user
// who is deleted, even by a request that read the user before the deletion
// (the transaction checks the user's profile), so the location's list never
// names them.
func TestCheckinOfDeletedUser(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	loc := addLocation(t, h, h.Admin(), "Ghost Cafe")
	checkinOf := func(id string) *ts.Resp {
		return h.Do("POST", "/users/"+id+"/checkins", map[string]any{"locationId": loc, "type": "MANUAL", "trigger": "CODE"}, h.Admin())
	}

	t.Run("AfterDeletion", func(t *testing.T) {
		id, _ := photoUser(t, h, "Gone", "Before")
		h.Do("DELETE", "/users/"+id, nil, h.Admin()).Expect(t, 204, "")
		checkinOf(id).Expect(t, 404, "NOT_FOUND")
		if got := locationCheckins(t, h, loc); len(got) != 0 {
			t.Errorf("location check-ins = %v, want none", got)
		}
	})
	t.Run("ReadBeforeDeletion", func(t *testing.T) {
		stale := staleProfiles{}
		var users []string
		for i := 0; i < 3; i++ {
			id, _ := photoUser(t, h, "Gone", "Racing")
			p, err := h.Deps.Users.Profile(context.Background(), h.Tenant.ID, id)
			if err != nil {
				t.Fatal(err)
			}
			stale[id] = p
			users = append(users, id)
			h.Do("DELETE", "/users/"+id, nil, h.Admin()).Expect(t, 204, "")
		}
		live := h.Deps.Checkins.Users
		h.Deps.Checkins.Users = stale
		t.Cleanup(func() { h.Deps.Checkins.Users = live })
		var wg sync.WaitGroup
		for _, id := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r := checkinOf(id); r.Status != 404 {
					t.Errorf("check-in of deleted %s: status %d: %s", id, r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if got := locationCheckins(t, h, loc); len(got) != 0 {
			t.Errorf("location check-ins = %v, want none", got)
		}
	})
}
