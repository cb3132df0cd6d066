package checkin_test

import (
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

// TestDeletedUserLeavesLocation checks that deleting a user (redaction)
// removes their current check-in at once, so a location's list no longer
// shows them.
func TestDeletedUserLeavesLocation(t *testing.T) {
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
}
