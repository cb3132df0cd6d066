package account_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/account"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestSecondaryCredentialCannotTakeOver checks that a secondary credential
// can neither request nor complete a password reset, nor activate a user.
func TestSecondaryCredentialCannotTakeOver(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Ann", "Owner")
	mobile := uniqueMobile()
	h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(token)).Expect(t, 201, "")
	h.Do("POST", "/users/reset", map[string]any{"id": mobile}, h.Anon()).Expect(t, 404, "NOT_FOUND")
	h.Do("POST", "/users/reset", map[string]any{"username": mobile, "token": "123456", "password": "hijacked-pass-1"}, h.Anon()).Expect(t, 404, "NOT_FOUND")
	h.Do("POST", "/users/activate", map[string]any{"id": mobile}, h.Anon()).Expect(t, 404, "NOT_FOUND")
}

func TestDevicePerAccountEnforced(t *testing.T) {
	h := ts.New(t)
	s := h.Tenant.Settings
	s.SingleAccountPerDevice = true
	h.SetSettings(s)
	android := ts.Headers{"x-client-platform", "ANDROID"}
	tests := []struct {
		name    string
		query   string
		headers ts.Headers
	}{
		{"NoPlatformHeader", "?uniqueDeviceIdAndroid=dev-x", nil},
		{"NoDeviceID", "", android},
		{"OtherPlatformsParameter", "?uniqueDeviceIdIOS=dev-x", android},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hs := []ts.Headers{h.Anon()}
			if tc.headers != nil {
				hs = append(hs, tc.headers)
			}
			h.Do("POST", "/users"+tc.query, ts.UserBody("Dev", "Ice", "MOBILE", uniqueMobile(), ""), hs...).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	t.Run("DeletionReleasesTheDevice", func(t *testing.T) {
		u := h.Do("POST", "/users?autoActivate=true&uniqueDeviceIdAndroid=dev-9", ts.UserBody("Dev", "One", "MOBILE", uniqueMobile(), ""), h.Admin(), android).Expect(t, 201, "").Map(t)
		h.Do("POST", "/users?uniqueDeviceIdAndroid=dev-9", ts.UserBody("Dev", "Two", "MOBILE", uniqueMobile(), ""), h.Anon(), android).Expect(t, 422, "DEVICE_ALREADY_REGISTERED")
		h.Do("DELETE", "/users/"+u["id"].(string), nil, h.Admin()).Expect(t, 204, "")
		h.Do("POST", "/users?uniqueDeviceIdAndroid=dev-9", ts.UserBody("Dev", "Three", "MOBILE", uniqueMobile(), ""), h.Anon(), android).Expect(t, 201, "")
	})
}

func TestCodeRequestsAreCapped(t *testing.T) {
	h := ts.New(t)
	email := uniqueEmail("capped")
	h.Do("POST", "/users", ts.UserBody("Cap", "Ped", "EMAIL", email, ""), h.Anon()).Expect(t, 201, "")
	// The sign-up code is the hour's first of MaxCodeSends.
	for i := 1; i < account.MaxCodeSends; i++ {
		h.Do("POST", "/users/activate", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
	}
	h.Do("POST", "/users/activate", map[string]any{"id": email}, h.Anon()).Expect(t, 422, "VALIDATION_FAILED")
	h.Clock.Advance(61 * time.Minute)
	h.Do("POST", "/users/activate", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
}

func TestVoidedSecondaryCredentialGetsNewCode(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Re", "Send")
	mobile := uniqueMobile()
	c := h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(token)).Expect(t, 201, "").Map(t)
	path := "/users/" + id + "/credentials/" + c["_id"].(string) + "/verify"
	code := lastCode(t, h, mobile)
	for i := 0; i < 5; i++ {
		h.Do("POST", path, map[string]any{"verificationCode": wrong(code)}, ts.Token(token)).Expect(t, 422, "INVALID_TOKEN")
	}
	h.Do("POST", path, map[string]any{"verificationCode": code}, ts.Token(token)).Expect(t, 422, "INVALID_TOKEN")
	again := h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(token)).Expect(t, 201, "").Map(t)
	if again["_id"] != c["_id"] {
		t.Errorf("re-adding made a new credential: %v", again)
	}
	h.Do("POST", path, map[string]any{"verificationCode": lastCode(t, h, mobile)}, ts.Token(token)).Expect(t, 200, "")
}

func TestGuestSocialCredentialIsVerified(t *testing.T) {
	h, google, _ := ssoHarness(t)
	body := map[string]any{"credentials": []map[string]any{{"provider": "GOOGLE", "id": "g-victim", "token": google.TokenWith("none", nil, google.Claims(googleClient, "g-victim"))}}}
	h.Do("POST", "/guests", body, h.Anon()).Expect(t, 422, "VALIDATION_FAILED")
	good := map[string]any{"credentials": []map[string]any{{"provider": "GOOGLE", "id": "g-guest", "token": google.Token(google.Claims(googleClient, "g-guest"))}}}
	h.Do("POST", "/guests", good, h.Anon()).Expect(t, 201, "")
}

func TestVerificationCodeSendsAreCapped(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Code", "Cap")
	email := uniqueEmail("cap")
	path := "/users/" + id + "/credentials"
	body := map[string]any{"id": email, "provider": "EMAIL"}
	h.Do("POST", path, body, ts.Token(token)).Expect(t, 201, "")
	// The sign-up code was the hour's first; re-adding resends a fresh code.
	for i := 2; i < account.MaxCodeSends; i++ {
		h.Do("POST", path, body, ts.Token(token)).Expect(t, 201, "")
	}
	t.Run("ErrTooManyCodes", func(t *testing.T) {
		before := len(h.Outbox.Messages(email))
		h.Do("POST", path, body, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
		h.Do("POST", path, map[string]any{"id": uniqueMobile(), "provider": "MOBILE"}, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
		if got := len(h.Outbox.Messages(email)); got != before {
			t.Errorf("messages to %s = %d after the cap, want %d", email, got, before)
		}
	})
	t.Run("skipVerification sends nothing and is not capped", func(t *testing.T) {
		h.Do("POST", path, map[string]any{"id": uniqueEmail("cap"), "provider": "EMAIL", "skipVerification": true}, h.Admin()).Expect(t, 201, "")
	})
	t.Run("a new hour allows codes again", func(t *testing.T) {
		h.Clock.Advance(61 * time.Minute)
		h.Do("POST", path, body, ts.Token(token)).Expect(t, 201, "")
	})
}

func TestConcurrentCredentialAddsForOneUser(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Two", "Adds")
	ids := []string{uniqueEmail("cap"), uniqueMobile(), uniqueEmail("cap")}
	statuses := make([]int, len(ids))
	var wg sync.WaitGroup
	for i, cid := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			provider := "EMAIL"
			if !strings.Contains(cid, "@") {
				provider = "MOBILE"
			}
			statuses[i] = h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": cid, "provider": provider}, ts.Token(token)).Status
		}()
	}
	wg.Wait()
	for i, got := range statuses {
		if got != 201 {
			t.Errorf("add %s: status %d, want 201", ids[i], got)
		}
	}
}
