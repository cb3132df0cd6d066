package account_test

import (
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/account"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestResetCodeExpires: a reset code works until ResetLifetime has passed,
// and not after, whether or not the store has deleted it yet.
func TestResetCodeExpires(t *testing.T) {
	h := ts.New(t)
	_, _, email := activeUser(t, h, "Rita", "Reset")
	tests := []struct {
		name   string
		wait   time.Duration
		status int
		code   string
	}{
		{"Expired", account.ResetLifetime + time.Second, 422, "INVALID_TOKEN"},
		{"JustInTime", account.ResetLifetime - time.Minute, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/users/reset", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
			code := lastCode(t, h, email)
			h.Clock.Advance(tc.wait)
			h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": "another-horse-9"}, h.Anon()).Expect(t, tc.status, tc.code)
		})
	}
}

// TestExpiredGuestIsNotListed: once GuestLifetime has passed, a guest is in
// no list or lookup, although its items are still stored (TTL deletes
// lazily).
