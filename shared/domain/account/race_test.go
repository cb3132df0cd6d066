package account_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// inParallel runs f(i) for i in [0, n) at once and waits for all of them.
func inParallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}

// errorOf returns the code and message of an error response.
func errorOf(r *ts.Resp) (code, message string) {
	var e struct{ Code, Message string }
	_ = json.Unmarshal(r.Body, &e)
	return e.Code, e.Message
}

// resetCode requests a password reset for email and returns the code sent.
func resetCode(t *testing.T, h *ts.Harness, email string) string {
	t.Helper()
	h.Do("POST", "/users/reset", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
	return lastCode(t, h, email)
}

func wrongReset(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}

func TestResetWrongGuesses(t *testing.T) {
	h := ts.New(t)
	t.Run("FiveWrongVoidTheCode", func(t *testing.T) {
		_, _, email := activeUser(t, h, "Five", "Wrong")
		code := resetCode(t, h, email)
		for i := 0; i < 5; i++ {
			h.Do("POST", "/users/reset", map[string]any{"username": email, "token": wrongReset(code), "password": "another-horse-9"}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
		}
		h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": "another-horse-9"}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
		h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 200, "")
	})
	t.Run("ParallelBurstCountsAtMostFive", func(t *testing.T) {
		_, _, email := activeUser(t, h, "Burst", "Wrong")
		code := resetCode(t, h, email)
		var mu sync.Mutex
		counted, voided := 0, 0
		inParallel(20, func(int) {
			r := h.Do("POST", "/users/reset", map[string]any{"username": email, "token": wrongReset(code), "password": "another-horse-9"}, h.Anon())
			c, msg := errorOf(r)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Status != 422 || c != "INVALID_TOKEN":
				t.Errorf("wrong guess: status %d code %q, want 422 INVALID_TOKEN", r.Status, c)
			case strings.Contains(msg, "too many"):
				voided++
			default:
				counted++
			}
		})
		if counted > 5 || counted+voided != 20 {
			t.Errorf("counted %d, voided %d: want at most 5 counted guesses of 20", counted, voided)
		}
		h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": "another-horse-9"}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
		h.Do("GET", "/users/login", nil, h.Basic(email, "another-horse-9", "EMAIL")).Expect(t, 401, "UNAUTHORIZED")
	})
}

func TestParallelCodeRequestsKeepTheHourlyCap(t *testing.T) {
	h := ts.New(t)
	t.Run("Reset", func(t *testing.T) {
		_, _, email := activeUser(t, h, "Cap", "Reset")
		before := len(h.Outbox.Messages(email))
		var mu sync.Mutex
		ok, refused := 0, 0
		inParallel(20, func(int) {
			r := h.Do("POST", "/users/reset", map[string]any{"id": email}, h.Anon())
			mu.Lock()
			defer mu.Unlock()
			switch r.Status {
			case 200:
				ok++
			case 422:
				refused++
			default:
				t.Errorf("reset request: status %d: %s", r.Status, r.Body)
			}
		})
		sent := len(h.Outbox.Messages(email)) - before
		if ok > 5 || ok == 0 || ok+refused != 20 || sent != ok {
			t.Errorf("%d answered 200, %d 422, %d codes sent: want at most 5 codes, one per 200", ok, refused, sent)
		}
	})
	t.Run("ActivationResend", func(t *testing.T) {
		email := uniqueEmail("capact")
		id := h.Do("POST", "/users", ts.UserBody("Cap", "Act", "EMAIL", email, "correct-horse-9"), h.Anon()).Expect(t, 201, "").Map(t)["id"].(string)
		before := len(h.Outbox.Messages(email))
		var mu sync.Mutex
		ok, refused := 0, 0
		inParallel(20, func(int) {
			r := h.Do("POST", "/users/activate", map[string]any{"id": email}, h.Anon())
			mu.Lock()
			defer mu.Unlock()
			switch r.Status {
			case 200:
				ok++
			case 422:
				refused++
			default:
				t.Errorf("resend: status %d: %s", r.Status, r.Body)
			}
		})
		sent := len(h.Outbox.Messages(email)) - before
		if ok > 5 || ok == 0 || ok+refused != 20 || sent != ok {
			t.Errorf("%d answered 200, %d 422, %d codes sent: want at most 5 codes, one per 200", ok, refused, sent)
		}
		// The code stored last still activates. (The outbox's last message
		// need not hold it: parallel sends reach the outbox in any order.)
		var u struct {
			Tokens struct {
				Activation string `json:"activation"`
			} `json:"tokens"`
		}
		h.Do("GET", "/users/"+id, nil, h.Admin()).Expect(t, 200, "").JSON(t, &u)
		h.Do("POST", "/users/activate", map[string]any{"id": email, "token": u.Tokens.Activation}, h.Anon()).Expect(t, 200, "")
	})
}

// loginsDuring runs n logins of email in parallel with change and returns
// the tokens of the logins that succeeded.
func loginsDuring(t *testing.T, h *ts.Harness, email, password string, n int, change func()) []string {
	t.Helper()
	var mu sync.Mutex
	var tokens []string
	inParallel(n+1, func(i int) {
		if i == n {
			change()
			return
		}
		r := h.Do("GET", "/users/login", nil, h.Basic(email, password, "EMAIL"))
		if r.Status != 200 {
			if r.Status != 401 {
				t.Errorf("login: status %d: %s", r.Status, r.Body)
			}
			return
		}
		var s struct {
			ID string `json:"_id"`
		}
		_ = json.Unmarshal(r.Body, &s)
		mu.Lock()
		tokens = append(tokens, s.ID)
		mu.Unlock()
	})
	return tokens
}

func TestSessionsDoNotOutliveRacingChanges(t *testing.T) {
	h := ts.New(t)
	t.Run("Demotion", func(t *testing.T) {
		email := uniqueEmail("racedadmin")
		b := ts.UserBody("Raced", "Admin", "EMAIL", email, "correct-horse-9")
		b["roles"] = []string{"ADMIN"}
		id := h.Do("POST", "/users?autoActivate=true", b, h.Admin()).Expect(t, 201, "").Map(t)["id"].(string)
		for round := 0; round < 5; round++ {
			h.Do("PUT", "/users/"+id, map[string]any{"roles": []string{"ADMIN"}}, h.Admin()).Expect(t, 200, "")
			tokens := loginsDuring(t, h, email, "correct-horse-9", 6, func() {
				h.Do("PUT", "/users/"+id, map[string]any{"roles": []string{"USER"}}, h.Admin()).Expect(t, 200, "")
			})
			for _, tok := range tokens {
				// GET /users is admin-only: a session that kept ADMIN answers 200.
				h.Do("GET", "/users", nil, ts.Token(tok)).Expect(t, 401, "UNAUTHORIZED")
			}
		}
	})
	t.Run("PasswordReset", func(t *testing.T) {
		id, _, email := activeUser(t, h, "Raced", "Reset")
		for round := 0; round < 3; round++ {
			code := resetCode(t, h, email)
			old, next := "correct-horse-9", "correct-horse-9"
			if round%2 == 0 {
				next = "another-horse-9"
			} else {
				old = "another-horse-9"
			}
			tokens := loginsDuring(t, h, email, old, 4, func() {
				h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": next}, h.Anon()).Expect(t, 200, "")
			})
			for _, tok := range tokens {
				h.Do("GET", "/users/"+id, nil, ts.Token(tok)).Expect(t, 401, "UNAUTHORIZED")
			}
		}
	})
	t.Run("DeleteSessions", func(t *testing.T) {
		// Ending a user's sessions also voids logins in flight; they are
		// refused or retried, never a server error, and later logins work.
		id, _, email := activeUser(t, h, "Raced", "Logout")
		for round := 0; round < 3; round++ {
			loginsDuring(t, h, email, "correct-horse-9", 4, func() {
				h.Do("DELETE", "/sessions/"+id, nil, h.Admin()).Expect(t, 200, "")
			})
		}
		s := h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 200, "").Map(t)
		h.Do("GET", "/users/"+id, nil, ts.Token(s["_id"].(string))).Expect(t, 200, "")
	})
	t.Run("Deletion", func(t *testing.T) {
		id, _, email := activeUser(t, h, "Raced", "Delete")
		tokens := loginsDuring(t, h, email, "correct-horse-9", 6, func() {
			h.Do("DELETE", "/users/"+id, nil, h.Admin()).Expect(t, 204, "")
		})
		for _, tok := range tokens {
			h.Do("GET", "/users/"+id, nil, ts.Token(tok)).Expect(t, 401, "UNAUTHORIZED")
		}
	})
}

// TestParallelActivationsWithTheRightCode: of 20 activations with the
// right code at once, one activates and every other answers ALREADY_ACTIVE
// (a lost race reads the user again), never INVALID_TOKEN.
func TestParallelActivationsWithTheRightCode(t *testing.T) {
	h := ts.New(t)
	for _, tc := range []struct{ name, provider, id string }{
		{"Email", "EMAIL", uniqueEmail("paract")},
		{"Mobile", "MOBILE", uniqueMobile()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uid := h.Do("POST", "/users", ts.UserBody("Par", "Act", tc.provider, tc.id, "correct-horse-9"), h.Anon()).Expect(t, 201, "").Map(t)["id"].(string)
			code := lastCode(t, h, tc.id)
			var mu sync.Mutex
			answers := map[string]int{}
			inParallel(20, func(int) {
				r := h.Do("POST", "/users/activate", map[string]any{"id": tc.id, "token": code}, h.Anon())
				c, _ := errorOf(r)
				mu.Lock()
				defer mu.Unlock()
				answers[fmt.Sprintf("%d %s", r.Status, c)]++
			})
			if want := map[string]int{"200 ": 1, "422 ALREADY_ACTIVE": 19}; !maps.Equal(answers, want) {
				t.Errorf("answers %v, want %v", answers, want)
			}
			if st := h.Do("GET", "/users/"+uid, nil, h.Admin()).Expect(t, 200, "").Map(t)["state"]; st != "ACTIVE" {
				t.Errorf("state = %v, want ACTIVE", st)
			}
		})
	}
}
