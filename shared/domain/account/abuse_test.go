package account_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/account"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// toNextHour moves the harness clock to the start of the next hour, so
// that the windows the allowance (a minute) and the caps (an hour) count in
// start with the test, and returns the time.
func toNextHour(h *ts.Harness) time.Time {
	now := h.Clock.Now()
	h.Clock.Advance(now.Truncate(time.Hour).Add(time.Hour).Sub(now))
	return h.Clock.Now()
}

// windowsSince returns how many windows of length w the time from start to
// now touched: a fixed-window allowance may grant its maximum in each.
func windowsSince(h *ts.Harness, start time.Time, w time.Duration) int {
	return int(h.Clock.Now().Truncate(w).Sub(start.Truncate(w))/w) + 1
}

// burst sends n requests, at most 8 at once, and returns their responses.
func burst(n int, do func(i int) *ts.Resp) []*ts.Resp {
	out := make([]*ts.Resp, n)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = do(i)
		}()
	}
	wg.Wait()
	return out
}

// checkRefusals fails unless every response is want or a 429 with code and
// a Retry-After of 1 to max seconds, and returns how many were want.
func checkRefusals(t *testing.T, rs []*ts.Resp, want int, code string, maxWait time.Duration) (ok, refused int) {
	t.Helper()
	for _, r := range rs {
		switch r.Status {
		case want:
			ok++
		case 429:
			refused++
			r.Expect(t, 429, code)
			secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
			if err != nil || secs < 1 || time.Duration(secs)*time.Second > maxWait {
				t.Errorf("Retry-After = %q, want 1 to %d seconds", r.Header.Get("Retry-After"), int(maxWait.Seconds()))
			}
		default:
			t.Errorf("status %d: %s", r.Status, r.Body)
		}
	}
	return ok, refused
}

// TestAnonymousAllowance sends 300 anonymous sign-ups and 300 guest
// creations from one address each: at most the allowance per minute
// window passes, the rest is 429 TOO_MANY_REQUESTS with Retry-After and
// sends nothing, while other addresses and admins go on.
func TestAnonymousAllowance(t *testing.T) {
	h := ts.New(t)
	const n = 300
	allow := account.DefaultAnonymousPerMinute

	t.Run("SignUps", func(t *testing.T) {
		start := toNextHour(h)
		emails := make([]string, n)
		rs := burst(n, func(i int) *ts.Resp {
			emails[i] = uniqueEmail("flood")
			return h.Do("POST", "/users", ts.UserBody("Flood", "Er", "EMAIL", emails[i], "correct-horse-9"), h.Anon())
		})
		created, refused := checkRefusals(t, rs, 201, "TOO_MANY_REQUESTS", account.AnonymousWindow)
		windows := windowsSince(h, start, account.AnonymousWindow)
		if created == 0 || created > allow*windows || refused != n-created {
			t.Errorf("%d created, %d refused in %d window(s): want 1 to %d created per window", created, refused, windows, allow)
		}
		sent := 0
		for i, r := range rs {
			got := len(h.Outbox.Messages(emails[i]))
			sent += got
			if r.Status == 429 && got != 0 {
				t.Errorf("a refused sign-up sent %d message(s)", got)
			}
		}
		if sent != created {
			t.Errorf("%d messages sent for %d sign-ups", sent, created)
		}
		for i, r := range rs {
			if r.Status == 429 {
				if c := h.CountUsersWith(t, emails[i]); c != 0 {
					t.Errorf("a refused sign-up created %d user(s)", c)
				}
				break
			}
		}
		// Another address is not affected; this one stays refused until
		// its minute ends.
		email := uniqueEmail("neighbour")
		h.Do("POST", "/users", ts.UserBody("Next", "Door", "EMAIL", email, "correct-horse-9"), h.Anon(), ts.From(ts.NewPeer())).Expect(t, 201, "")
		if len(h.Outbox.Messages(email)) != 1 {
			t.Errorf("the other address's sign-up sent no code")
		}
		again := h.Do("POST", "/users", ts.UserBody("Flood", "Er", "EMAIL", uniqueEmail("flood"), "correct-horse-9"), h.Anon())
		if windowsSince(h, start, account.AnonymousWindow) == 1 {
			again.Expect(t, 429, "TOO_MANY_REQUESTS")
		}
	})

	t.Run("Guests", func(t *testing.T) {
		start := toNextHour(h)
		peer := ts.From(ts.NewPeer())
		rs := burst(n, func(int) *ts.Resp {
			return h.Do("POST", "/guests", map[string]any{"firstName": "Gus"}, h.Anon(), peer)
		})
		created, refused := checkRefusals(t, rs, 201, "TOO_MANY_REQUESTS", account.AnonymousWindow)
		windows := windowsSince(h, start, account.AnonymousWindow)
		if created == 0 || created > allow*windows || refused != n-created {
			t.Errorf("%d guests, %d refused in %d window(s): want 1 to %d guests per window", created, refused, windows, allow)
		}
	})

	t.Run("CodeRequests", func(t *testing.T) {
		// Resends and reset requests of one address count together.
		toNextHour(h)
		_, _, email := activeUser(t, h, "Code", "Flood")
		peer := ts.From(ts.NewPeer())
		before := len(h.Outbox.Messages(email))
		rs := burst(2*allow, func(i int) *ts.Resp {
			if i%2 == 0 {
				return h.Do("POST", "/users/reset", map[string]any{"id": email}, h.Anon(), peer)
			}
			return h.Do("POST", "/users/activate", map[string]any{"id": email}, h.Anon(), peer)
		})
		// Past the per-user hourly code limit the answers are 422; past
		// the address's allowance 429.
		refused := 0
		for _, r := range rs {
			if r.Status == 429 {
				refused++
				r.Expect(t, 429, "TOO_MANY_REQUESTS")
			}
		}
		if refused == 0 {
			t.Errorf("%d code requests from one address: none refused", len(rs))
		}
		if sent := len(h.Outbox.Messages(email)) - before; sent > account.MaxCodeSends {
			t.Errorf("%d codes sent, want at most %d", sent, account.MaxCodeSends)
		}
	})

	t.Run("AdminNotCounted", func(t *testing.T) {
		toNextHour(h)
		peer := ts.From(ts.NewPeer())
		for range allow {
			h.Do("POST", "/guests", nil, h.Anon(), peer).Expect(t, 201, "")
		}
		h.Do("POST", "/guests", nil, h.Anon(), peer).Expect(t, 429, "TOO_MANY_REQUESTS")
		for i := range 5 {
			body := ts.UserBody("Admin", "Made", "EMAIL", uniqueEmail("admin"+strconv.Itoa(i)), "")
			h.Do("POST", "/users", body, h.Admin(), peer).Expect(t, 201, "")
			h.Do("POST", "/guests", nil, h.Admin(), peer).Expect(t, 201, "")
		}
	})
}

// TestTenantMessageCap lowers the tenant's hourly SMS cap: past it a
// sign-up, a resend or a reset request by SMS is 429
// MESSAGE_LIMIT_REACHED with Retry-After, creates and sends nothing, and
// e-mails (their own cap) still go.
func TestTenantMessageCap(t *testing.T) {
	h := ts.New(t)
	h.Deps.Accounts.Caps.SMSPerHour = 3
	toNextHour(h)
	var mobiles []string
	for i := range 3 {
		m := uniqueMobile()
		mobiles = append(mobiles, m)
		h.Do("POST", "/users", ts.UserBody("Sms", "User"+strconv.Itoa(i), "MOBILE", m, "correct-horse-9"), h.Anon()).Expect(t, 201, "")
		if len(h.Outbox.Messages(m)) != 1 {
			t.Fatalf("sign-up %d under the cap sent no SMS", i)
		}
	}
	over := uniqueMobile()
	tests := []struct {
		name string
		do   func() *ts.Resp
		to   string
	}{
		{"SignUp", func() *ts.Resp {
			return h.Do("POST", "/users", ts.UserBody("Sms", "Over", "MOBILE", over, "correct-horse-9"), h.Anon())
		}, over},
		{"Resend", func() *ts.Resp {
			return h.Do("POST", "/users/activate", map[string]any{"id": mobiles[0]}, h.Anon())
		}, mobiles[0]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(h.Outbox.Messages(tc.to))
			r := tc.do()
			checkRefusals(t, []*ts.Resp{r}, 0, "MESSAGE_LIMIT_REACHED", notify.CapWindow)
			if r.Status != 429 {
				t.Fatalf("status %d, want 429", r.Status)
			}
			if got := len(h.Outbox.Messages(tc.to)) - before; got != 0 {
				t.Errorf("%d SMS sent past the cap", got)
			}
		})
	}
	t.Run("NothingCreated", func(t *testing.T) {
		over := uniqueMobile()
		h.Do("POST", "/users", ts.UserBody("Sms", "Over", "MOBILE", over, "correct-horse-9"), h.Anon()).Expect(t, 429, "MESSAGE_LIMIT_REACHED")
		if c := h.CountUsersWith(t, strings.Replace(over, "+", "%2B", 1)); c != 0 {
			t.Errorf("a sign-up refused by the cap created %d user(s)", c)
		}
	})
	t.Run("AdminMobileSignUpSendsNothing", func(t *testing.T) {
		// An admin's MOBILE sign-up sends no code, so the cap does not
		// stop it.
		m := uniqueMobile()
		h.Do("POST", "/users", ts.UserBody("Sms", "Admin", "MOBILE", m, ""), h.Admin()).Expect(t, 201, "")
		if n := len(h.Outbox.Messages(m)); n != 0 {
			t.Errorf("%d SMS sent", n)
		}
	})
	t.Run("EmailsGoOn", func(t *testing.T) {
		email := uniqueEmail("capped")
		h.Do("POST", "/users", ts.UserBody("Mail", "User", "EMAIL", email, "correct-horse-9"), h.Anon()).Expect(t, 201, "")
		if len(h.Outbox.Messages(email)) != 1 {
			t.Errorf("an e-mail under its own cap was not sent")
		}
	})
	t.Run("NextHour", func(t *testing.T) {
		toNextHour(h)
		m := uniqueMobile()
		h.Do("POST", "/users", ts.UserBody("Sms", "Later", "MOBILE", m, "correct-horse-9"), h.Anon()).Expect(t, 201, "")
		if len(h.Outbox.Messages(m)) != 1 {
			t.Errorf("no SMS in the next hour")
		}
	})
}

// TestSMSCountries checks settings.smsCountryCodes: a MOBILE number of
// another country is 422 SMS_COUNTRY_NOT_ALLOWED wherever it would get a
// code, before anything is written or sent.
func TestSMSCountries(t *testing.T) {
	h := ts.New(t)
	h.SetSettings(tenant.Settings{SMSCountryCodes: []string{"+44", "+1"}})
	french := "+33612345" + strconv.Itoa(100+int(time.Now().UnixNano()%900))
	adminMade := func(mobile string) string {
		return h.Do("POST", "/users?autoActivate=true", ts.UserBody("Fr", "Admin", "MOBILE", mobile, "correct-horse-9"), h.Admin()).Expect(t, 201, "").Map(t)["id"].(string)
	}
	id, token, _ := activeUser(t, h, "Has", "Creds")
	tests := []struct {
		name string
		do   func() *ts.Resp
	}{
		{"SignUp", func() *ts.Resp {
			return h.Do("POST", "/users", ts.UserBody("Fr", "User", "MOBILE", french, "correct-horse-9"), h.Anon())
		}},
		{"SecondCredentialOfSignUp", func() *ts.Resp {
			b := ts.UserBody("Fr", "User", "EMAIL", uniqueEmail("fr"), "correct-horse-9")
			b["credentials"] = append(b["credentials"].([]map[string]any), map[string]any{"provider": "MOBILE", "id": french})
			return h.Do("POST", "/users", b, h.Anon())
		}},
		{"AddCredential", func() *ts.Resp {
			return h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": french, "provider": "MOBILE"}, ts.Token(token))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.do().Expect(t, 422, "SMS_COUNTRY_NOT_ALLOWED")
			if n := len(h.Outbox.Messages(french)); n != 0 {
				t.Errorf("%d messages sent to a refused country", n)
			}
			if c := h.CountUsersWith(t, strings.Replace(french, "+", "%2B", 1)); c != 0 {
				t.Errorf("%d users hold the refused number", c)
			}
		})
	}
	t.Run("ResetOfAdminMadeUser", func(t *testing.T) {
		// An admin may register any number (no code goes to it then); a
		// reset code cannot go there.
		other := "+33699" + strconv.Itoa(100000+int(time.Now().UnixNano()%900000))
		adminMade(other)
		h.Do("POST", "/users/reset", map[string]any{"id": other}, h.Anon()).Expect(t, 422, "SMS_COUNTRY_NOT_ALLOWED")
		if n := len(h.Outbox.Messages(other)); n != 0 {
			t.Errorf("%d messages sent to a refused country", n)
		}
	})
	t.Run("AllowedCountries", func(t *testing.T) {
		for _, m := range []string{uniqueMobile(), "+1202555" + strconv.Itoa(1000+int(time.Now().UnixNano()%9000))} {
			h.Do("POST", "/users", ts.UserBody("Ok", "User", "MOBILE", m, "correct-horse-9"), h.Anon()).Expect(t, 201, "")
			if len(h.Outbox.Messages(m)) != 1 {
				t.Errorf("no SMS to allowed number %s", m)
			}
		}
	})
	t.Run("NoSettingAllowsAll", func(t *testing.T) {
		h.SetSettings(tenant.Settings{})
		m := "+33677" + strconv.Itoa(100000+int(time.Now().UnixNano()%900000))
		h.Do("POST", "/users", ts.UserBody("Any", "Where", "MOBILE", m, "correct-horse-9"), h.Anon()).Expect(t, 201, "")
	})
}

// TestCommonPasswords refuses passwords of the common password list on
// sign-up and reset (a password changes only by a reset) with 422
// PASSWORD_TOO_COMMON, whose message does not repeat the password.
func TestCommonPasswords(t *testing.T) {
	h := ts.New(t)
	_, _, email := activeUser(t, h, "Pass", "Word")
	h.Do("POST", "/users/reset", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
	code := lastCode(t, h, email)
	for _, pw := range []string{"password", "12345678", "PassWord1", "QWERTYUIOP"} {
		t.Run(pw, func(t *testing.T) {
			check := func(r *ts.Resp) {
				t.Helper()
				r.Expect(t, 422, "PASSWORD_TOO_COMMON")
				if msg := r.Map(t)["message"].(string); pw != "password" && strings.Contains(msg, pw) {
					t.Errorf("the message %q repeats the password", msg)
				}
			}
			other := uniqueEmail("common")
			check(h.Do("POST", "/users", ts.UserBody("Com", "Mon", "EMAIL", other, pw), h.Anon()))
			if len(h.Outbox.Messages(other)) != 0 {
				t.Errorf("a refused sign-up sent a code")
			}
			check(h.Do("POST", "/users", ts.UserBody("Com", "Mon", "EMAIL", uniqueEmail("common"), pw), h.Admin()))
			check(h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": pw}, h.Anon()))
		})
	}
	t.Run("ChangeOnlyByReset", func(t *testing.T) {
		id, token, _ := activeUser(t, h, "Pass", "Change")
		h.Do("PUT", "/users/"+id, map[string]any{"password": "12345678"}, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("ResetCodeStillValid", func(t *testing.T) {
		// The refusals cost the reset code none of its attempts.
		h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": "a-less-common-1"}, h.Anon()).Expect(t, 200, "")
		h.Do("GET", "/users/login", nil, h.Basic(email, "a-less-common-1", "")).Expect(t, 200, "")
	})
}

// TestAllowanceOfOtherCalls lowers the allowance to 3 a minute and checks
// the other counted calls: SSO sign-ups (not SSO logins) and adding a
// credential that gets a code (not an admin's skipVerification).
func TestAllowanceOfOtherCalls(t *testing.T) {
	h, google, _ := ssoHarness(t)
	h.Deps.Accounts.AnonymousPerMinute = 3
	t.Run("SSOSignUp", func(t *testing.T) {
		start := toNextHour(h)
		peer := ts.From(ts.NewPeer())
		signUp := func() (*ts.Resp, string) {
			sub := fmt.Sprintf("g-%d", seq.Add(1))
			body := map[string]any{"idToken": google.Token(google.Claims(googleClient, sub)), "firstName": "Sso", "lastName": "Flood"}
			return h.Do("POST", "/users/google/sso", body, h.Anon(), peer), sub
		}
		var first string
		for i := range 3 {
			r, sub := signUp()
			r.Expect(t, 201, "")
			if i == 0 {
				first = sub
			}
		}
		r, sub := signUp()
		if windowsSince(h, start, account.AnonymousWindow) > 1 {
			t.Skip("the minute ended during the test")
		}
		checkRefusals(t, []*ts.Resp{r}, 0, "TOO_MANY_REQUESTS", account.AnonymousWindow)
		if r.Status != 429 {
			t.Fatalf("fourth SSO sign-up: status %d, want 429", r.Status)
		}
		if n := h.CountUsersWith(t, sub); n != 0 {
			t.Errorf("a refused SSO sign-up created a user")
		}
		// A login of an existing user is not counted.
		body := map[string]any{"idToken": google.Token(google.Claims(googleClient, first))}
		h.Do("POST", "/users/google/sso", body, h.Anon(), peer).Expect(t, 200, "")
	})
	t.Run("AddCredential", func(t *testing.T) {
		id, token, _ := activeUser(t, h, "Add", "Creds")
		start := toNextHour(h)
		peer := ts.From(ts.NewPeer())
		for range 3 {
			h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": uniqueEmail("second"), "provider": "EMAIL"}, ts.Token(token), peer).Expect(t, 201, "")
		}
		extra := uniqueEmail("second")
		r := h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": extra, "provider": "EMAIL"}, ts.Token(token), peer)
		if windowsSince(h, start, account.AnonymousWindow) > 1 {
			t.Skip("the minute ended during the test")
		}
		r.Expect(t, 429, "TOO_MANY_REQUESTS")
		if n := len(h.Outbox.Messages(extra)); n != 0 {
			t.Errorf("a refused credential got %d code(s)", n)
		}
		h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": extra, "provider": "EMAIL", "skipVerification": true}, h.Admin(), peer).Expect(t, 201, "")
	})
}
