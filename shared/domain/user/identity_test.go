package user_test

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
		h.Do("POST", "/users", createBody("New", "Comer", "MOBILE", mobile, ""), h.Anon()).Expect(t, 422, "CREDENTIAL_EXISTS")
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
		if got := countUsersWith(t, h, url.QueryEscape(mobile)); got != 1 {
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

func TestAddresses(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Addy", "Ress")
	otherID, otherToken, _ := activeUser(t, h, "Oth", "Er")
	home := map[string]any{
		"name":        "Home",
		"address":     map[string]any{"line1": "10 Downing Street", "city": "London", "postalCode": "SW1A 2AA", "country": "GB"},
		"coordinates": []float64{-0.1276, 51.5034},
	}
	t.Run("BadInput", func(t *testing.T) {
		with := func(k string, v any) map[string]any {
			b := map[string]any{}
			for kk, vv := range home {
				b[kk] = vv
			}
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
			return b
		}
		tests := []struct {
			name string
			body any
		}{
			{"MissingAddress", with("address", nil)},
			{"MissingCoordinates", with("coordinates", nil)},
			{"OneCoordinate", with("coordinates", []float64{1})},
			{"ThreeCoordinates", with("coordinates", []float64{1, 2, 3})},
			{"LongitudeOutOfRange", with("coordinates", []float64{181, 0})},
			{"LatitudeOutOfRange", with("coordinates", []float64{0, -91})},
			{"StringCoordinates", with("coordinates", []string{"a", "b"})},
			{"MissingLine1", with("address", map[string]any{"city": "London"})},
			{"UnknownAddressField", with("address", map[string]any{"line1": "x", "planet": "Earth"})},
			{"UnknownField", with("colour", "red")},
			{"IDNotSettable", with("_id", "mine")},
			{"Malformed", `{"address":`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("POST", "/users/"+id+"/addresses", tc.body, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
			})
		}
		var list []any
		h.Do("GET", "/users/"+id+"/addresses", nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &list)
		if len(list) != 0 {
			t.Errorf("bad input wrote addresses: %v", list)
		}
	})
	var list []map[string]any
	h.Do("POST", "/users/"+id+"/addresses", home, ts.Token(token)).Expect(t, 201, "").JSON(t, &list)
	if len(list) != 1 || list[0]["_id"] == "" || list[0]["name"] != "Home" {
		t.Fatalf("list = %v", list)
	}
	addrID := list[0]["_id"].(string)
	work := map[string]any{"name": "Work", "address": map[string]any{"line1": "1 Main St"}, "coordinates": []float64{2.35, 48.85}}
	h.Do("POST", "/users/"+id+"/addresses", work, ts.Token(token)).Expect(t, 201, "").JSON(t, &list)
	if len(list) != 2 || list[1]["name"] != "Work" {
		t.Fatalf("list = %v", list)
	}
	t.Run("Update", func(t *testing.T) {
		home["note"] = "ring twice"
		h.Do("PUT", "/users/"+id+"/addresses/"+addrID, home, ts.Token(token)).Expect(t, 200, "").JSON(t, &list)
		if list[0]["note"] != "ring twice" || list[0]["_id"] != addrID {
			t.Errorf("list = %v", list)
		}
		h.Do("PUT", "/users/"+id+"/addresses/nope", home, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("AnotherUser", func(t *testing.T) {
		h.Do("GET", "/users/"+id+"/addresses", nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/users/"+id+"/addresses/"+addrID, home, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+id+"/addresses/"+addrID, nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+otherID+"/addresses/"+addrID, nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		other, key := h.NewTenant(h.Tenant.Settings)
		h.Do("GET", "/users/"+id+"/addresses", nil, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("AdminReads", func(t *testing.T) {
		h.Do("GET", "/users/"+id+"/addresses", nil, h.Admin()).Expect(t, 200, "").JSON(t, &list)
		if len(list) != 2 {
			t.Errorf("admin sees %d", len(list))
		}
	})
	t.Run("Delete", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/addresses/"+addrID, nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &list)
		if len(list) != 1 || list[0]["name"] != "Work" {
			t.Errorf("remaining = %v", list)
		}
		h.Do("DELETE", "/users/"+id+"/addresses/"+addrID, nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
}
