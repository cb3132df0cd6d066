package account_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestActivate(t *testing.T) {
	h := ts.New(t)
	mobile := uniqueMobile()
	u := h.Do("POST", "/users", ts.UserBody("Ada", "Tester", "MOBILE", mobile, "correct-horse-9"), h.Anon()).Expect(t, 201, "").Map(t)
	first := lastCode(t, h, mobile)

	t.Run("BadInput", func(t *testing.T) {
		for name, body := range map[string]any{
			"MissingID":    map[string]any{"token": "1234"},
			"UnknownField": map[string]any{"id": mobile, "code": "1234"},
			"WrongType":    map[string]any{"id": mobile, "token": 1234},
			"Malformed":    `{"id":`,
		} {
			t.Run(name, func(t *testing.T) {
				h.Do("POST", "/users/activate", body, h.Anon()).Expect(t, 422, "VALIDATION_FAILED")
			})
		}
	})
	t.Run("UnknownCredential", func(t *testing.T) {
		h.Do("POST", "/users/activate", map[string]any{"id": uniqueMobile(), "token": "1234"}, h.Anon()).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("ResendWithoutToken", func(t *testing.T) {
		r := h.Do("POST", "/users/activate", map[string]any{"id": mobile}, h.Anon()).Expect(t, 200, "").Map(t)
		if r["state"] != "PENDING" {
			t.Errorf("state = %v, want PENDING", r["state"])
		}
		if n := len(h.Outbox.Messages(mobile)); n != 2 {
			t.Errorf("messages = %d, want 2 (the code was resent)", n)
		}
	})
	code := lastCode(t, h, mobile)
	t.Run("OldCodeNoLongerValid", func(t *testing.T) {
		if first == code {
			t.Skip("the new code happens to equal the old one")
		}
		h.Do("POST", "/users/activate", map[string]any{"id": mobile, "token": first}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
	})
	t.Run("ErrInvalidToken", func(t *testing.T) {
		h.Do("POST", "/users/activate", map[string]any{"id": mobile, "token": wrong(code)}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
	})
	t.Run("PendingCannotLogIn", func(t *testing.T) {
		h.Do("GET", "/users/login", nil, h.Basic(mobile, "correct-horse-9", "")).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("ValidCode", func(t *testing.T) {
		s := h.Do("POST", "/users/activate", map[string]any{"id": mobile, "token": code}, h.Anon()).Expect(t, 200, "").Map(t)
		user, _ := s["user"].(map[string]any)
		if user["id"] != u["id"] || user["state"] != "ACTIVE" {
			t.Fatalf("session user = %v, want the activated user", user)
		}
		creds, _ := user["credentials"].([]any)
		if len(creds) != 1 || creds[0].(map[string]any)["isVerified"] != true {
			t.Errorf("credentials = %v, want one verified", creds)
		}
		got := h.Do("GET", "/users/"+u["id"].(string)+"?include=credentials", nil, ts.Token(s["_id"].(string))).Expect(t, 200, "").Map(t)
		// The session's user is the user as stored.
		for _, k := range []string{"updatedAt", "state"} {
			if got[k] != user[k] {
				t.Errorf("%s: session user %v, stored %v", k, user[k], got[k])
			}
		}
		if stored, _ := got["credentials"].([]any); len(stored) != 1 || stored[0].(map[string]any)["updatedAt"] != creds[0].(map[string]any)["updatedAt"] {
			t.Errorf("credentials: session user %v, stored %v", creds, stored)
		}
	})
	t.Run("ErrAlreadyActive", func(t *testing.T) {
		h.Do("POST", "/users/activate", map[string]any{"id": mobile, "token": code}, h.Anon()).Expect(t, 422, "ALREADY_ACTIVE")
	})
}

func wrong(code string) string {
	if code == "0000" {
		return "1111"
	}
	return "0000"
}

func TestActivateFiveWrongCodesVoidTheCode(t *testing.T) {
	h := ts.New(t)
	email := uniqueEmail("void")
	h.Do("POST", "/users", ts.UserBody("Vo", "Id", "EMAIL", email, ""), h.Anon()).Expect(t, 201, "")
	code := lastCode(t, h, email)
	for i := 0; i < 5; i++ {
		h.Do("POST", "/users/activate", map[string]any{"id": email, "token": wrong(code)}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
	}
	h.Do("POST", "/users/activate", map[string]any{"id": email, "token": code}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
	h.Do("POST", "/users/activate", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
	fresh := lastCode(t, h, email)
	h.Do("POST", "/users/activate", map[string]any{"id": email, "token": fresh}, h.Anon()).Expect(t, 200, "")
}

func TestLoginAndLogout(t *testing.T) {
	h := ts.New(t)
	id, _, email := activeUser(t, h, "Lou", "Gin")
	tests := []struct {
		name    string
		headers ts.Headers
		status  int
		code    string
	}{
		{"WrongPassword", h.Basic(email, "wrong-password", "EMAIL"), 401, "UNAUTHORIZED"},
		{"UnknownUser", h.Basic(uniqueEmail("nobody"), "correct-horse-9", "EMAIL"), 401, "UNAUTHORIZED"},
		{"WrongProvider", h.Basic(email, "correct-horse-9", "MOBILE"), 401, "UNAUTHORIZED"},
		{"BadProvider", h.Basic(email, "correct-horse-9", "PIGEON"), 422, "VALIDATION_FAILED"},
		{"NoBasic", h.Anon(), 401, "UNAUTHORIZED"},
		{"MalformedBasic", ts.Headers{"x-application-id", h.Tenant.ID, "Authorization", "Basic !!!"}, 401, "UNAUTHORIZED"},
		{"NoTenant", ts.Headers{"Authorization", h.Basic(email, "correct-horse-9", "")[3]}, 401, "UNAUTHORIZED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("GET", "/users/login", nil, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	s := h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 200, "").Map(t)
	token := s["_id"].(string)
	if s["userId"] != id || s["permanent"] != false || s["tenantTitle"] != h.Tenant.Title {
		t.Errorf("session = %v", s)
	}
	t.Run("EmailWithoutAuthProvider", func(t *testing.T) {
		// MOBILE is the default, but an e-mail address selects EMAIL.
		h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "")).Expect(t, 200, "")
	})
	t.Run("BearerWorksToo", func(t *testing.T) {
		h.Do("GET", "/users/"+id, nil, ts.Headers{"Authorization", "Bearer " + token}).Expect(t, 200, "")
	})
	t.Run("TokenOfAnotherTenantHeader", func(t *testing.T) {
		other, _ := h.NewTenant(h.Tenant.Settings)
		h.Do("GET", "/users/"+id, nil, ts.Token(token), ts.Headers{"x-application-id", other.ID}).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("LogoutOtherUser", func(t *testing.T) {
		otherID, _, _ := activeUser(t, h, "Oth", "Er")
		h.Do("GET", "/users/logout?userId="+otherID, nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("LogoutNeedsUserID", func(t *testing.T) {
		h.Do("GET", "/users/logout", nil, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("Logout", func(t *testing.T) {
		h.Do("GET", "/users/logout?userId="+id, nil, ts.Token(token)).Expect(t, 200, "")
		h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("SessionExpires", func(t *testing.T) {
		s := h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 200, "").Map(t)
		tok := s["_id"].(string)
		h.Do("GET", "/users/"+id, nil, ts.Token(tok)).Expect(t, 200, "")
		h.Clock.Advance(31 * 24 * time.Hour)
		h.Do("GET", "/users/"+id, nil, ts.Token(tok)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("GarbageTokens", func(t *testing.T) {
		for _, tok := range []string{"nope", h.Tenant.ID + ".forged", "other-tenant.abc", ""} {
			h.Do("GET", "/users/"+id, nil, ts.Headers{"Authorization", "Token " + tok, "x-application-id", h.Tenant.ID}).Expect(t, 401, "UNAUTHORIZED")
		}
		h.Do("GET", "/users/"+id, nil, ts.Headers{"x-service-auth-token", "not-a-key"}).Expect(t, 401, "UNAUTHORIZED")
	})
}

func TestPasswordReset(t *testing.T) {
	h := ts.New(t)
	id, token, email := activeUser(t, h, "Res", "Et")
	t.Run("PendingUser", func(t *testing.T) {
		mobile := uniqueMobile()
		h.Do("POST", "/users", ts.UserBody("Pen", "Ding", "MOBILE", mobile, ""), h.Anon()).Expect(t, 201, "")
		h.Do("POST", "/users/reset", map[string]any{"id": mobile}, h.Anon()).Expect(t, 422, "USER_PENDING")
	})
	t.Run("UnknownUser", func(t *testing.T) {
		h.Do("POST", "/users/reset", map[string]any{"id": uniqueEmail("ghost")}, h.Anon()).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("BadInput", func(t *testing.T) {
		tests := []struct {
			name  string
			body  any
			field string // the message names it first
		}{
			{"Empty", map[string]any{}, "id"},
			{"EmptyID", map[string]any{"id": " "}, "id"},
			{"Mixed", map[string]any{"id": email, "username": email}, ""},
			{"MissingUsername", map[string]any{"token": "123456", "password": "another-horse-9"}, "username"},
			{"MissingToken", map[string]any{"username": email, "password": "another-horse-9"}, "token"},
			{"MissingPass", map[string]any{"username": email, "token": "123456"}, "password"},
			{"UnknownField", map[string]any{"id": email, "extra": 1}, "extra"},
			{"ShortPassword", map[string]any{"username": email, "token": "123456", "password": "x"}, "password"},
			{"WrongTypeToken", map[string]any{"username": email, "token": 123456, "password": "another-horse-9"}, "token"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				got := h.Do("POST", "/users/reset", tc.body, h.Anon()).Expect(t, 422, "").Map(t)
				if msg, _ := got["message"].(string); !strings.HasPrefix(msg, tc.field) {
					t.Errorf("message = %q, want it to start with %q", msg, tc.field)
				}
			})
		}
	})
	h.Do("POST", "/users/reset", map[string]any{"id": email}, h.Anon()).Expect(t, 200, "")
	code := lastCode(t, h, email)
	if len(code) != 6 {
		t.Fatalf("reset code %q is not 6 digits", code)
	}
	t.Run("AdminSeesResetToken", func(t *testing.T) {
		u := h.Do("GET", "/users/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if u["tokens"].(map[string]any)["reset"] != code {
			t.Errorf("tokens = %v, want reset %s", u["tokens"], code)
		}
		self := h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if _, ok := self["tokens"]; ok {
			t.Errorf("the user sees their own tokens")
		}
	})
	t.Run("ErrInvalidToken", func(t *testing.T) {
		h.Do("POST", "/users/reset", map[string]any{"username": email, "token": "000000" + "1", "password": "another-horse-9"}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
	})
	h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": "another-horse-9"}, h.Anon()).Expect(t, 200, "")
	t.Run("OldPasswordFails", func(t *testing.T) {
		h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("NewPasswordWorks", func(t *testing.T) {
		h.Do("GET", "/users/login", nil, h.Basic(email, "another-horse-9", "EMAIL")).Expect(t, 200, "")
	})
	t.Run("OldSessionsEnded", func(t *testing.T) {
		h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("CodeUsedOnce", func(t *testing.T) {
		h.Do("POST", "/users/reset", map[string]any{"username": email, "token": code, "password": "third-horse-99"}, h.Anon()).Expect(t, 422, "INVALID_TOKEN")
	})
}

func TestGuests(t *testing.T) {
	h := ts.New(t)
	s := h.Do("POST", "/guests", map[string]any{"firstName": "Gus"}, h.Anon(), ts.Headers{"x-client-platform", "ANDROID"}).Expect(t, 201, "").Map(t)
	token := s["_id"].(string)
	user := s["user"].(map[string]any)
	id := user["id"].(string)
	if user["isGuest"] != true || s["isGuest"] != true {
		t.Fatalf("guest session = %v", s)
	}
	t.Run("EmptyBodyAllowed", func(t *testing.T) {
		h.Do("POST", "/guests", nil, h.Anon()).Expect(t, 201, "")
	})
	t.Run("BadInput", func(t *testing.T) {
		h.Do("POST", "/guests", map[string]any{"nickname": "x"}, h.Anon()).Expect(t, 422, "VALIDATION_FAILED")
		h.Do("POST", "/guests", map[string]any{"firstName": "x"}).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("TokenWorks", func(t *testing.T) {
		h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 200, "")
	})
	t.Run("ListedAsGuest", func(t *testing.T) {
		var out struct{ Items []map[string]any }
		h.Do("GET", "/users?role=GUEST", nil, h.Admin(), ts.Headers{"x-api-version", "4"}).Expect(t, 200, "").JSON(t, &out)
		found := false
		for _, u := range out.Items {
			found = found || u["id"] == id
		}
		if !found {
			t.Errorf("guest %s not in role=GUEST list", id)
		}
	})
	t.Run("ExpiresAfterOneHour", func(t *testing.T) {
		g := h.Do("POST", "/guests", map[string]any{"firstName": "Brief"}, h.Anon()).Expect(t, 201, "").Map(t)
		gid := g["user"].(map[string]any)["id"].(string)
		h.Clock.Advance(61 * time.Minute)
		defer h.Clock.Advance(-61 * time.Minute)
		h.Do("GET", "/users/"+gid, nil, ts.Token(g["_id"].(string))).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/users/"+gid, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("ConvertToFullUser", func(t *testing.T) {
		email := uniqueEmail("convert")
		u := h.Do("POST", "/users", ts.UserBody("Gus", "Full", "EMAIL", email, "correct-horse-9"), ts.Token(token)).Expect(t, 201, "").Map(t)
		if u["id"] != id {
			t.Fatalf("converted user id = %v, want the guest's %s", u["id"], id)
		}
		if u["isGuest"] != false || u["state"] != "PENDING" || u["primaryPlatform"] != "ANDROID" {
			t.Errorf("converted user = %v (the guest's platform must be kept)", u)
		}
		code := lastCode(t, h, email)
		h.Do("POST", "/users/activate", map[string]any{"id": email, "token": code}, h.Anon()).Expect(t, 200, "")
		h.Clock.Advance(2 * time.Hour)
		defer h.Clock.Advance(-2 * time.Hour)
		got := h.Do("GET", "/users/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got["isGuest"] != false {
			t.Errorf("converted user expired or still a guest: %v", got)
		}
	})
}

func TestGuestConvertsOnce(t *testing.T) {
	h := ts.New(t)
	g := h.Do("POST", "/guests", nil, h.Anon()).Expect(t, 201, "").Map(t)
	token := g["_id"].(string)
	statuses := make([]int, 6)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = h.Do("POST", "/users", ts.UserBody("Once", "Only", "EMAIL", uniqueEmail("once"), "correct-horse-9"), ts.Token(token)).Status
		}()
	}
	wg.Wait()
	created := 0
	for _, got := range statuses {
		if got == 201 {
			created++
		}
	}
	if created != 1 {
		t.Errorf("statuses = %v: one guest token made %d users, want 1", statuses, created)
	}
}

func TestAdminSessions(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Sam", "Sess")
	s := h.Do("POST", "/sessions", nil, h.Admin()).Expect(t, 201, "").Map(t)
	admin := s["_id"].(string)
	if roles := s["roles"].([]any); len(roles) != 1 || roles[0] != "ADMIN" {
		t.Errorf("roles = %v", roles)
	}
	t.Run("AdminSessionIsAdmin", func(t *testing.T) {
		h.Do("GET", "/users", nil, ts.Token(admin)).Expect(t, 200, "")
	})
	t.Run("KeySessionCannotMintSessions", func(t *testing.T) {
		h.Do("POST", "/sessions", nil, ts.Token(admin)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("AdminUserSessionCanMintSessions", func(t *testing.T) {
		email := uniqueEmail("boss")
		b := ts.UserBody("Big", "Boss", "EMAIL", email, "correct-horse-9")
		b["roles"] = []string{"ADMIN"}
		h.Do("POST", "/users?autoActivate=true", b, h.Admin()).Expect(t, 201, "")
		s := h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 200, "").Map(t)
		h.Do("POST", "/sessions", nil, ts.Token(s["_id"].(string))).Expect(t, 201, "")
	})
	t.Run("BodyRejected", func(t *testing.T) {
		h.Do("POST", "/sessions", map[string]any{"foo": 1}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("UserCannot", func(t *testing.T) {
		h.Do("POST", "/sessions", nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/users", nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("AnonymousCannot", func(t *testing.T) {
		h.Do("POST", "/sessions", nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("DeleteOtherUsersSessions", func(t *testing.T) {
		otherID, otherToken, _ := activeUser(t, h, "Oth", "Er")
		h.Do("DELETE", "/sessions/"+otherID, nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		h.Do("GET", "/users/"+otherID, nil, ts.Token(otherToken)).Expect(t, 200, "")
	})
	t.Run("DeleteSessions", func(t *testing.T) {
		h.Do("DELETE", "/sessions/"+id, nil, ts.Token(admin)).Expect(t, 200, "")
		h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("DeleteUnknownUser", func(t *testing.T) {
		h.Do("DELETE", "/sessions/nobody", nil, ts.Token(admin)).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("AdminSessionExpires", func(t *testing.T) {
		h.Clock.Advance(13 * time.Hour)
		defer h.Clock.Advance(-13 * time.Hour)
		h.Do("GET", "/users", nil, ts.Token(admin)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("RotatingTheKeyEndsItsSessions", func(t *testing.T) {
		s := h.Do("POST", "/sessions", nil, h.Admin()).Expect(t, 201, "").Map(t)
		tok := s["_id"].(string)
		h.Do("GET", "/users", nil, ts.Token(tok)).Expect(t, 200, "")
		key, err := h.Deps.Tenants.RotateKey(context.Background(), h.Tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		h.ServiceKey = key
		h.Do("GET", "/users", nil, ts.Token(tok)).Expect(t, 401, "UNAUTHORIZED")
		h.Do("GET", "/users", nil, h.Admin()).Expect(t, 200, "")
	})
	t.Run("DemotedAdminLosesSessions", func(t *testing.T) {
		email := uniqueEmail("demoted")
		b := ts.UserBody("De", "Moted", "EMAIL", email, "correct-horse-9")
		b["roles"] = []string{"ADMIN"}
		u := h.Do("POST", "/users?autoActivate=true", b, h.Admin()).Expect(t, 201, "").Map(t)
		s := h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 200, "").Map(t)
		tok := s["_id"].(string)
		h.Do("GET", "/users", nil, ts.Token(tok)).Expect(t, 200, "")
		h.Do("PUT", "/users/"+u["id"].(string), map[string]any{"roles": []string{"USER"}}, h.Admin()).Expect(t, 200, "")
		h.Do("GET", "/users", nil, ts.Token(tok)).Expect(t, 401, "UNAUTHORIZED")
	})
}
