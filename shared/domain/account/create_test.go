package account_test

import (
	"net/url"
	"strings"
	"sync"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestCreateUserRejectsBadInput(t *testing.T) {
	h := ts.New(t)
	mobile := uniqueMobile()
	good := func() map[string]any { return ts.UserBody("Ada", "Tester", "MOBILE", mobile, "") }
	with := func(k string, v any) map[string]any { b := good(); b[k] = v; return b }
	without := func(k string) map[string]any { b := good(); delete(b, k); return b }
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"MalformedJSON", `{"firstName": "Ada",`, 422, "VALIDATION_FAILED"},
		{"DeeplyNested", `{"firstName":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, 422, "VALIDATION_FAILED"},
		// Valid but for its UTF-8: the gateway passes the raw bytes (base64).
		{"InvalidUTF8", "{\"firstName\":\"\xff\xfe\",\"lastName\":\"X\",\"credentials\":[{\"provider\":\"EMAIL\",\"id\":\"utf8@example.com\"}]}", 422, "VALIDATION_FAILED"},
		{"NotAnObject", `[1,2]`, 422, "VALIDATION_FAILED"},
		{"EmptyBody", ``, 422, "VALIDATION_FAILED"},
		{"WrongType", with("firstName", 42), 422, "VALIDATION_FAILED"},
		{"UnknownField", with("favouriteColour", "blue"), 422, "VALIDATION_FAILED"},
		{"MissingFirstName", without("firstName"), 422, "VALIDATION_FAILED"},
		{"MissingLastName", without("lastName"), 422, "VALIDATION_FAILED"},
		{"MissingCredentials", without("credentials"), 422, "VALIDATION_FAILED"},
		{"EmptyCredentials", with("credentials", []any{}), 422, "VALIDATION_FAILED"},
		{"BadMobile", with("credentials", []any{map[string]any{"provider": "MOBILE", "id": "call me"}}), 422, "VALIDATION_FAILED"},
		{"BadEmail", with("credentials", []any{map[string]any{"provider": "EMAIL", "id": "not-an-email"}}), 422, "VALIDATION_FAILED"},
		{"UnknownProvider", with("credentials", []any{map[string]any{"provider": "PIGEON", "id": mobile}}), 422, "VALIDATION_FAILED"},
		{"SocialProviderNotYet", with("credentials", []any{map[string]any{"provider": "GOOGLE", "id": "123", "token": "x"}}), 422, "VALIDATION_FAILED"},
		{"ShortPassword", with("password", "short"), 422, "VALIDATION_FAILED"},
		{"BadGender", with("gender", "OTHER"), 422, "VALIDATION_FAILED"},
		{"BadBirthdate", with("birthdate", "31/12/1990"), 422, "VALIDATION_FAILED"},
		{"RolesByAnonymous", with("roles", []string{"ADMIN"}), 401, "UNAUTHORIZED"},
		{"OversizeBody", `{"firstName":"` + strings.Repeat("a", 1<<20) + `"}`, 413, "PAYLOAD_TOO_LARGE"},
		{"BadTokenInArray", `{"firstName":"a","credentials":[x"]}`, 422, "VALIDATION_FAILED"},
		{"BadKeyInObject", `{"firstName":"a","credentials":[{provider:"EMAIL"}]}`, 422, "VALIDATION_FAILED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/users", tc.body, h.Anon()).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("NothingWritten", func(t *testing.T) {
		if got := h.CountUsersWith(t, url.QueryEscape(mobile)); got != 0 {
			t.Fatalf("users with %s = %d, want 0", mobile, got)
		}
		if n := len(h.Outbox.Messages(mobile)); n != 0 {
			t.Fatalf("messages sent = %d, want 0", n)
		}
	})
	t.Run("NoTenant", func(t *testing.T) {
		h.Do("POST", "/users", good()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("UnknownTenant", func(t *testing.T) {
		h.Do("POST", "/users", good(), ts.Headers{"x-application-id", "no-such-tenant"}).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("AutoActivateByAnonymous", func(t *testing.T) {
		h.Do("POST", "/users?autoActivate=true", good(), h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("BadPlatformHeader", func(t *testing.T) {
		h.Do("POST", "/users", good(), h.Anon(), ts.Headers{"x-client-platform", "PALM"}).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func TestCreateUserMobileSendsActivationSMS(t *testing.T) {
	h := ts.New(t)
	mobile := uniqueMobile()
	u := h.Do("POST", "/users", ts.UserBody("Ada", "Tester", "MOBILE", mobile, ""), h.Anon(), ts.Headers{"x-client-platform", "IOS"}).Expect(t, 201, "").Map(t)
	if got, want := u["state"], "PENDING"; got != want {
		t.Errorf("state = %v, want %v", got, want)
	}
	if got, want := u["fullName"], "Ada Tester"; got != want {
		t.Errorf("fullName = %v, want %v", got, want)
	}
	if got, want := u["primaryPlatform"], "IOS"; got != want {
		t.Errorf("primaryPlatform = %v, want %v", got, want)
	}
	if _, ok := u["tokens"]; ok {
		t.Errorf("an anonymous caller sees tokens: %v", u["tokens"])
	}
	msgs := h.Outbox.Messages(mobile)
	if len(msgs) != 1 || msgs[0].Channel != "SMS" {
		t.Fatalf("messages = %+v, want one SMS", msgs)
	}
	code := lastCode(t, h, mobile)
	if len(code) != 4 {
		t.Errorf("code %q is not 4 digits", code)
	}
	admin := h.Do("GET", "/users/"+u["id"].(string), nil, h.Admin()).Expect(t, 200, "").Map(t)
	tokens, _ := admin["tokens"].(map[string]any)
	if got := tokens["activation"]; got != code {
		t.Errorf("admin sees tokens.activation = %v, want %v", got, code)
	}
}

func TestCreateUserByAdmin(t *testing.T) {
	h := ts.New(t)
	t.Run("MobileCodeNotSent", func(t *testing.T) {
		mobile := uniqueMobile()
		u := h.Do("POST", "/users", ts.UserBody("Bo", "Admin", "MOBILE", mobile, ""), h.Admin()).Expect(t, 201, "").Map(t)
		if u["state"] != "PENDING" {
			t.Errorf("state = %v, want PENDING", u["state"])
		}
		if n := len(h.Outbox.Messages(mobile)); n != 0 {
			t.Errorf("messages = %d, want none when an admin creates the user", n)
		}
		tokens, _ := u["tokens"].(map[string]any)
		if tokens["activation"] == nil {
			t.Errorf("admin response lacks tokens.activation: %v", u)
		}
	})
	t.Run("AutoActivate", func(t *testing.T) {
		email := uniqueEmail("auto")
		u := h.Do("POST", "/users?autoActivate=true", ts.UserBody("Cy", "Auto", "EMAIL", email, "correct-horse-9"), h.Admin()).Expect(t, 201, "").Map(t)
		if u["state"] != "ACTIVE" {
			t.Errorf("state = %v, want ACTIVE", u["state"])
		}
		h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 200, "")
	})
	t.Run("CreateAdmin", func(t *testing.T) {
		b := ts.UserBody("Di", "Boss", "EMAIL", uniqueEmail("boss"), "correct-horse-9")
		b["roles"] = []string{"ADMIN"}
		u := h.Do("POST", "/users?autoActivate=true", b, h.Admin()).Expect(t, 201, "").Map(t)
		if roles := u["roles"].([]any); len(roles) != 1 || roles[0] != "ADMIN" {
			t.Errorf("roles = %v, want [ADMIN]", roles)
		}
	})
	t.Run("EmailCodeSent", func(t *testing.T) {
		email := uniqueEmail("mailed")
		h.Do("POST", "/users", ts.UserBody("Ed", "Mail", "EMAIL", email, ""), h.Admin()).Expect(t, 201, "")
		m, ok := h.Outbox.Last(email)
		if !ok || m.Channel != "EMAIL" {
			t.Errorf("e-mail message = %+v, %v; want one e-mail", m, ok)
		}
	})
}

func TestCreateUserCredentialExists(t *testing.T) {
	h := ts.New(t)
	mobile := uniqueMobile()
	h.Do("POST", "/users", ts.UserBody("Ada", "One", "MOBILE", mobile, ""), h.Anon()).Expect(t, 201, "")
	t.Run("ErrCredentialExists", func(t *testing.T) {
		h.Do("POST", "/users", ts.UserBody("Ada", "Two", "MOBILE", mobile, ""), h.Anon()).Expect(t, 422, "CREDENTIAL_EXISTS")
	})
	t.Run("NormalizedNumber", func(t *testing.T) {
		spaced := mobile[:4] + " " + mobile[4:8] + "-" + mobile[8:]
		h.Do("POST", "/users", ts.UserBody("Ada", "Three", "MOBILE", spaced, ""), h.Anon()).Expect(t, 422, "CREDENTIAL_EXISTS")
	})
	t.Run("EmailCaseInsensitive", func(t *testing.T) {
		email := uniqueEmail("case")
		h.Do("POST", "/users", ts.UserBody("Ca", "Se", "EMAIL", email, ""), h.Anon()).Expect(t, 201, "")
		h.Do("POST", "/users", ts.UserBody("Ca", "Se", "EMAIL", strings.ToUpper(email), ""), h.Anon()).Expect(t, 422, "CREDENTIAL_EXISTS")
	})
	t.Run("OtherTenantMayUseIt", func(t *testing.T) {
		other, _ := h.NewTenant(h.Tenant.Settings)
		h.Do("POST", "/users", ts.UserBody("Ada", "Else", "MOBILE", mobile, ""), ts.Headers{"x-application-id", other.ID}).Expect(t, 201, "")
	})
	t.Run("ConcurrentCreatesOneWins", func(t *testing.T) {
		n := uniqueMobile()
		const racers = 6
		statuses := make([]int, racers)
		var wg sync.WaitGroup
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				statuses[i] = h.Do("POST", "/users", ts.UserBody("Race", "R", "MOBILE", n, ""), h.Anon()).Status
			}(i)
		}
		wg.Wait()
		won := 0
		for _, s := range statuses {
			switch s {
			case 201:
				won++
			case 422:
			default:
				t.Errorf("status %d, want 201 or 422", s)
			}
		}
		if won != 1 {
			t.Fatalf("%d creates won, want exactly 1 (statuses %v)", won, statuses)
		}
		if got := h.CountUsersWith(t, url.QueryEscape(n)); got != 1 {
			t.Fatalf("users with the number = %d, want 1", got)
		}
	})
}

func TestCreateUserSettings(t *testing.T) {
	h := ts.New(t)
	t.Run("InitialPoints", func(t *testing.T) {
		s := h.Tenant.Settings
		s.InitialPoints = 50
		h.SetSettings(s)
		u := h.Do("POST", "/users?autoActivate=true", ts.UserBody("Po", "Ints", "MOBILE", uniqueMobile(), ""), h.Admin()).Expect(t, 201, "").Map(t)
		got := h.Do("GET", "/users/"+u["id"].(string)+"?include=points", nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got["points"] != float64(50) {
			t.Errorf("points = %v, want 50", got["points"])
		}
	})
	t.Run("SingleAccountPerDevice", func(t *testing.T) {
		s := h.Tenant.Settings
		s.SingleAccountPerDevice = true
		h.SetSettings(s)
		hdr := ts.Headers{"x-client-platform", "ANDROID"}
		h.Do("POST", "/users?uniqueDeviceIdAndroid=dev-1", ts.UserBody("Dev", "One", "MOBILE", uniqueMobile(), ""), h.Anon(), hdr).Expect(t, 201, "")
		h.Do("POST", "/users?uniqueDeviceIdAndroid=dev-1", ts.UserBody("Dev", "Two", "MOBILE", uniqueMobile(), ""), h.Anon(), hdr).Expect(t, 422, "DEVICE_ALREADY_REGISTERED")
		h.Do("POST", "/users?uniqueDeviceIdAndroid=dev-2", ts.UserBody("Dev", "Three", "MOBILE", uniqueMobile(), ""), h.Anon(), hdr).Expect(t, 201, "")
	})
}
