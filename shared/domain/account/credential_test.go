package account_test

import (
	"net/url"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestSecondaryCredentials(t *testing.T) {
	h := ts.New(t)
	id, token, email := activeUser(t, h, "Cred", "Holder")
	otherID, otherToken, _ := activeUser(t, h, "Oth", "Er")
	mobile := uniqueMobile()

	t.Run("BadInput", func(t *testing.T) {
		tests := []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"MissingID", map[string]any{"provider": "MOBILE"}, 422, "VALIDATION_FAILED"},
			{"BadProvider", map[string]any{"id": mobile, "provider": "FAX"}, 422, "VALIDATION_FAILED"},
			{"MissingProvider", map[string]any{"id": mobile}, 422, "VALIDATION_FAILED"},
			{"BadMobile", map[string]any{"id": "abc", "provider": "MOBILE"}, 422, "VALIDATION_FAILED"},
			{"UnknownField", map[string]any{"id": mobile, "provider": "MOBILE", "primary": true}, 422, "VALIDATION_FAILED"},
			{"WrongType", map[string]any{"id": mobile, "provider": "MOBILE", "skipVerification": "yes"}, 422, "VALIDATION_FAILED"},
			{"SkipVerificationByUser", map[string]any{"id": mobile, "provider": "MOBILE", "skipVerification": true}, 401, "UNAUTHORIZED"},
			{"ErrCredentialExists", map[string]any{"id": email, "provider": "EMAIL"}, 422, "CREDENTIAL_EXISTS"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("POST", "/users/"+id+"/credentials", tc.body, ts.Token(token)).Expect(t, tc.status, tc.code)
			})
		}
		if n := len(h.Outbox.Messages(mobile)); n != 0 {
			t.Errorf("messages to %s = %d, want 0", mobile, n)
		}
	})
	t.Run("AnotherUser", func(t *testing.T) {
		h.Do("POST", "/users/"+otherID+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		other, key := h.NewTenant(h.Tenant.Settings)
		h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}).Expect(t, 404, "NOT_FOUND")
	})

	c := h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(token)).Expect(t, 201, "").Map(t)
	credID := c["_id"].(string)
	if c["isVerified"] != false || c["isPrimary"] != false || c["id"] != mobile {
		t.Fatalf("credential = %v", c)
	}
	code := lastCode(t, h, mobile)

	t.Run("HeldByAnotherUser", func(t *testing.T) {
		h.Do("POST", "/users/"+otherID+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(otherToken)).Expect(t, 422, "CREDENTIAL_EXISTS")
		h.Do("POST", "/users", ts.UserBody("New", "Comer", "MOBILE", mobile, ""), h.Anon()).Expect(t, 422, "CREDENTIAL_EXISTS")
	})
	t.Run("SecondaryCannotLogIn", func(t *testing.T) {
		h.Do("GET", "/users/login", nil, h.Basic(mobile, "correct-horse-9", "MOBILE")).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("Verify", func(t *testing.T) {
		path := "/users/" + id + "/credentials/" + credID + "/verify"
		h.Do("POST", path, map[string]any{}, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
		h.Do("POST", path, map[string]any{"verificationCode": wrong(code)}, ts.Token(token)).Expect(t, 422, "INVALID_TOKEN")
		h.Do("POST", path, map[string]any{"verificationCode": code}, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("POST", "/users/"+id+"/credentials/nope/verify", map[string]any{"verificationCode": code}, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		v := h.Do("POST", path, map[string]any{"verificationCode": code}, ts.Token(token)).Expect(t, 200, "").Map(t)
		if v["isVerified"] != true {
			t.Errorf("verified credential = %v", v)
		}
	})
	t.Run("AdminSkipsVerification", func(t *testing.T) {
		e := uniqueEmail("skip")
		c := h.Do("POST", "/users/"+otherID+"/credentials", map[string]any{"id": e, "provider": "EMAIL", "skipVerification": true}, h.Admin()).Expect(t, 201, "").Map(t)
		if c["isVerified"] != true || len(h.Outbox.Messages(e)) != 0 {
			t.Errorf("credential = %v, messages %d", c, len(h.Outbox.Messages(e)))
		}
	})
	t.Run("List", func(t *testing.T) {
		var l struct {
			Items []map[string]any
			Page  struct{ NextKey string }
		}
		h.Do("GET", "/credentials", nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 2 {
			t.Fatalf("user sees %d credentials, want their own 2", len(l.Items))
		}
		h.Do("GET", "/credentials?provider=mobile", nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 1 || l.Items[0]["id"] != mobile {
			t.Errorf("provider filter = %v", l.Items)
		}
		h.Do("GET", "/credentials?id="+url.QueryEscape(mobile), nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 1 || l.Items[0]["_id"] != credID {
			t.Errorf("admin search by id = %v", l.Items)
		}
		h.Do("GET", "/credentials?limit=2&sort=-created", nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 2 || l.Page.NextKey == "" {
			t.Fatalf("admin page = %v", l)
		}
		h.Do("GET", "/credentials?limit=2&sort=-created&startKey="+url.QueryEscape(l.Page.NextKey), nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) == 0 {
			t.Errorf("second page empty")
		}
		for _, q := range []string{"provider=fax", "sort=name", "limit=0", "startKey=bogus"} {
			h.Do("GET", "/credentials?"+q, nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		}
		h.Do("GET", "/credentials", nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
		other, key := h.NewTenant(h.Tenant.Settings)
		h.Do("GET", "/credentials?id="+url.QueryEscape(mobile), nil, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 0 {
			t.Errorf("another tenant finds %v", l.Items)
		}
	})
	t.Run("IncludeCredentials", func(t *testing.T) {
		u := h.Do("GET", "/users/"+id+"?include=credentials", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if creds := u["credentials"].([]any); len(creds) != 2 {
			t.Errorf("credentials = %v", creds)
		}
		if got := h.CountUsersWith(t, url.QueryEscape(mobile)); got != 1 {
			t.Errorf("GET /users?credentialId= finds %d", got)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		creds := h.Do("GET", "/users/"+id+"?include=credentials", nil, ts.Token(token)).Expect(t, 200, "").Map(t)["credentials"].([]any)
		var primary string
		for _, c := range creds {
			if c.(map[string]any)["isPrimary"] == true {
				primary = c.(map[string]any)["_id"].(string)
			}
		}
		h.Do("DELETE", "/users/"+id+"/credentials/"+primary, nil, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
		h.Do("DELETE", "/users/"+id+"/credentials/"+credID, nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+id+"/credentials/"+credID, nil, ts.Token(token)).Expect(t, 204, "")
		h.Do("DELETE", "/users/"+id+"/credentials/"+credID, nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		// The identifier is free again.
		h.Do("POST", "/users/"+otherID+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(otherToken)).Expect(t, 201, "")
	})
}
