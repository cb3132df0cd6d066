package account_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/account"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestLoginThrottle: MaxLoginAttempts failed password logins of one
// identifier lock it for LoginLock (429 TOO_MANY_ATTEMPTS with
// Retry-After, even for the right password); a right password before that
// clears the count; unknown identifiers lock the same way.
func TestLoginThrottle(t *testing.T) {
	h := ts.New(t)
	login := func(email, password string) *ts.Resp {
		return h.Do("GET", "/users/login", nil, h.Basic(email, password, "EMAIL"))
	}
	fail := func(t *testing.T, email string, n int) {
		t.Helper()
		for range n {
			login(email, "wrong-password-1").Expect(t, 401, "UNAUTHORIZED")
		}
	}
	locked := func(t *testing.T, r *ts.Resp) {
		t.Helper()
		r.Expect(t, 429, "TOO_MANY_ATTEMPTS")
		secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || secs < 1 || secs > int(account.LoginLock/time.Second) {
			t.Fatalf("Retry-After = %q", r.Header.Get("Retry-After"))
		}
	}

	t.Run("RightPasswordBeforeTheLimitClearsTheCount", func(t *testing.T) {
		_, _, email := h.ActiveUser(t, "Tess", "Throttle")
		fail(t, email, account.MaxLoginAttempts-1)
		login(email, ts.Password).Expect(t, 200, "")
		// The count starts again: another MaxLoginAttempts-1 failures
		// still leave the right password working.
		fail(t, email, account.MaxLoginAttempts-1)
		login(email, ts.Password).Expect(t, 200, "")
	})

	t.Run("ErrTooManyLogins", func(t *testing.T) {
		_, _, email := h.ActiveUser(t, "Lock", "Out")
		fail(t, email, account.MaxLoginAttempts)
		locked(t, login(email, ts.Password))
		locked(t, login(email, "wrong-password-1"))
		h.Clock.Advance(account.LoginLock - time.Minute)
		locked(t, login(email, ts.Password))
		h.Clock.Advance(time.Minute + time.Second)
		login(email, ts.Password).Expect(t, 200, "")
	})

	t.Run("ResetEndsTheLock", func(t *testing.T) {
		_, _, email := h.ActiveUser(t, "Re", "Set")
		fail(t, email, account.MaxLoginAttempts)
		locked(t, login(email, ts.Password))
		h.Do("POST", "/users/reset", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
		body := map[string]any{"username": email, "token": h.LastCode(t, email), "password": "new-horse-42"}
		h.Do("POST", "/users/reset", body, h.Anon()).Expect(t, 200, "")
		login(email, "new-horse-42").Expect(t, 200, "")
	})

	t.Run("UnknownIdentifierLocksAlike", func(t *testing.T) {
		_, _, known := h.ActiveUser(t, "Kno", "Wn")
		unknown := ts.UniqueEmail("nobody")
		for i := range account.MaxLoginAttempts + 1 {
			k, u := login(known, "wrong-password-1"), login(unknown, "wrong-password-1")
			if k.Status != u.Status || string(k.Body) != string(u.Body) {
				t.Fatalf("attempt %d: known %d %s, unknown %d %s", i+1, k.Status, k.Body, u.Status, u.Body)
			}
		}
		locked(t, login(unknown, "wrong-password-1"))
	})

	t.Run("OtherIdentifiersAndTenantsUnaffected", func(t *testing.T) {
		_, _, victim := h.ActiveUser(t, "Vic", "Tim")
		_, _, other := h.ActiveUser(t, "Oth", "Er")
		fail(t, victim, account.MaxLoginAttempts)
		locked(t, login(victim, ts.Password))
		login(other, ts.Password).Expect(t, 200, "")
		t2, _ := h.NewTenant(tenant.Settings{})
		h.Do("GET", "/users/login", nil, ts.Headers{"x-application-id", t2.ID, "Authorization", h.Basic(victim, "wrong-password-1", "")[3], "AuthProvider", "EMAIL"}).
			Expect(t, 401, "UNAUTHORIZED")
	})

	t.Run("WindowEnds", func(t *testing.T) {
		_, _, email := h.ActiveUser(t, "Slow", "Guesser")
		fail(t, email, account.MaxLoginAttempts-1)
		h.Clock.Advance(account.LoginWindow + time.Second)
		// The old failures no longer count.
		fail(t, email, account.MaxLoginAttempts-1)
		login(email, ts.Password).Expect(t, 200, "")
	})

	t.Run("ConcurrentAttemptsNeverPassTheLimit", func(t *testing.T) {
		_, _, email := h.ActiveUser(t, "Para", "Llel")
		const n = 3 * account.MaxLoginAttempts
		got := ts.Tally(ts.Parallel(n, func(int) int { return login(email, "wrong-password-1").Status }))
		if got[401] != account.MaxLoginAttempts || got[429] != n-account.MaxLoginAttempts {
			t.Fatalf("statuses = %v, want %d x 401 and the rest 429", got, account.MaxLoginAttempts)
		}
		locked(t, login(email, ts.Password))
	})

	t.Run("ConcurrentRightPasswordsDoNotLock", func(t *testing.T) {
		_, _, email := h.ActiveUser(t, "Re", "Try")
		const n = 2 * account.MaxLoginAttempts
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if s := login(email, ts.Password).Status; s != 200 && s != 429 {
					t.Errorf("status = %d, want 200 or 429", s)
				}
			}()
		}
		wg.Wait()
		login(email, ts.Password).Expect(t, 200, "")
	})
}
