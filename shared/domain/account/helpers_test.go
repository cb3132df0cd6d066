package account_test

import (
	"sync/atomic"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// seq numbers other unique test values (provider subjects, device ids).
var seq atomic.Int64

// uniqueMobile returns a mobile number no other test uses.
func uniqueMobile() string { return ts.UniqueMobile() }

// uniqueEmail returns an e-mail address no other test uses.
func uniqueEmail(name string) string { return ts.UniqueEmail(name) }

// lastCode returns the code in the newest message sent to recipient.
func lastCode(t *testing.T, h *ts.Harness, to string) string {
	t.Helper()
	return h.LastCode(t, to)
}

// activeUser creates and activates a user with a password and returns its
// id, a session token and its e-mail address.
func activeUser(t *testing.T, h *ts.Harness, first, last string) (id, token, email string) {
	t.Helper()
	return h.ActiveUser(t, first, last)
}
