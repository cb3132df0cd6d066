package tenant_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/sso/ssotest"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// adminUserToken signs in a user holding the ADMIN role and returns the
// session's token.
func adminUserToken(t *testing.T, h *ts.Harness) (id, token string) {
	t.Helper()
	email := ts.UniqueEmail("boss")
	b := ts.UserBody("Big", "Boss", "EMAIL", email, ts.Password)
	b["roles"] = []string{"ADMIN"}
	id = h.Do("POST", "/users?autoActivate=true", b, h.Admin()).Expect(t, 201, "").Map(t)["id"].(string)
	token = h.Do("GET", "/users/login", nil, h.Basic(email, ts.Password, "EMAIL")).Expect(t, 200, "").Map(t)["_id"].(string)
	return id, token
}

// tenantUpdates returns the TENANT_UPDATED actions of h's tenant, newest
// first.
func tenantUpdates(t *testing.T, h *ts.Harness) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, a := range h.Do("GET", "/actions?type=TENANT_UPDATED&limit=100", nil, h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 200, "").Map(t)["actions"].([]any) {
		out = append(out, a.(map[string]any))
	}
	return out
}

// fieldsOf returns the metadata.fields of a TENANT_UPDATED action.
func fieldsOf(a map[string]any) []string {
	var out []string
	for _, f := range a["metadata"].(map[string]any)["fields"].([]any) {
		out = append(out, f.(string))
	}
	return out
}

// TestTenantAccess: GET and PUT /tenant serve the tenant's service key, an
// admin user's session and an admin session made from the key, each on
// its own tenant; a user's session, a guest, anonymous callers and a key
// sent with another tenant's x-application-id are 401.
func TestTenantAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	other, otherKey := h.NewTenant(tenant.Settings{InitialPoints: 3})
	_, adminToken := adminUserToken(t, h)
	keySession := h.Do("POST", "/sessions", nil, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	_, userToken, _ := h.ActiveUser(t, "Una", "User")
	guest := h.Do("POST", "/guests", map[string]any{"firstName": "Gus"}, h.Anon()).Expect(t, 201, "").Map(t)["_id"].(string)

	allowed := []struct {
		name    string
		headers ts.Headers
		want    string
	}{
		{"ServiceKey", h.Admin(), h.Tenant.ID},
		{"AdminUserSession", ts.Token(adminToken), h.Tenant.ID},
		{"AdminSessionOfKey", ts.Token(keySession), h.Tenant.ID},
		{"OtherTenantKey", ts.Headers{"x-service-auth-token", otherKey}, other.ID},
	}
	for _, tc := range allowed {
		t.Run(tc.name, func(t *testing.T) {
			got := h.Do("GET", "/tenant", nil, tc.headers).Expect(t, 200, "").Map(t)
			if got["id"] != tc.want {
				t.Errorf("id = %v, want %s", got["id"], tc.want)
			}
			h.Do("PUT", "/tenant", map[string]any{"id": tc.want}, tc.headers).Expect(t, 200, "")
		})
	}
	refused := []struct {
		name    string
		headers ts.Headers
	}{
		{"NoCredentials", nil},
		{"Anonymous", h.Anon()},
		{"UserSession", ts.Token(userToken)},
		{"Guest", ts.Token(guest)},
		{"GarbageKey", ts.Headers{"x-service-auth-token", "not-a-key", "x-application-id", h.Tenant.ID}},
		{"KeyWithOtherTenant", ts.Headers{"x-service-auth-token", h.ServiceKey, "x-application-id", other.ID}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("GET", "/tenant", nil, tc.headers).Expect(t, 401, "UNAUTHORIZED")
			h.Do("PUT", "/tenant", map[string]any{"title": "Taken over"}, tc.headers).Expect(t, 401, "UNAUTHORIZED")
		})
	}
	for _, id := range []string{h.Tenant.ID, other.ID} {
		got, err := h.Deps.Tenants.Store.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Title == "Taken over" {
			t.Errorf("tenant %s was renamed by a refused caller", id)
		}
	}
	if n := len(tenantUpdates(t, h)); n != 0 {
		t.Errorf("%d TENANT_UPDATED actions, want none (every PUT changed nothing or was refused)", n)
	}
}

// TestTenantUpdate changes every setting over HTTP, reads them back, and
// removes the optional ones with null: the POS secret is never answered,
// each change records one TENANT_UPDATED naming its fields (never a
// value), and a PUT that changes nothing answers 200 and records nothing.
func TestTenantUpdate(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	const secret = "pos-secret-0123456789abcdef"
	body := map[string]any{
		"title": "  Renamed Bar  ",
		"settings": map[string]any{
			"initialPoints": 25, "singleAccountPerDevice": true, "sessionHours": 48,
			"posEndpoint": "https://pos.example.com/hooks", "posSecret": secret,
			"ssoClientIds":    map[string]any{"google": []string{"g-client.apps.googleusercontent.com"}, "apple": []string{"com.example.app"}},
			"smsCountryCodes": []string{"+44", " +1"}, "rulesBudget": 50, "currency": "EUR",
			"timezone": "Europe/Paris", "pointsExpiringDays": 10,
		},
	}
	resp := h.Do("PUT", "/tenant", body, h.Admin()).Expect(t, 200, "")
	got := h.Do("GET", "/tenant", nil, h.Admin()).Expect(t, 200, "")
	for _, r := range []*ts.Resp{resp, got} {
		if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), `"posSecret"`) {
			t.Fatalf("the POS secret is answered: %s", r.Body)
		}
	}
	m := got.Map(t)
	s := m["settings"].(map[string]any)
	if m["title"] != "Renamed Bar" || m["id"] != h.Tenant.ID {
		t.Errorf("tenant = %v", m)
	}
	want := map[string]any{
		"initialPoints": 25.0, "singleAccountPerDevice": true, "sessionHours": 48.0, "posEndpoint": "https://pos.example.com/hooks",
		"posSecretSet": true, "rulesBudget": 50.0, "currency": "EUR", "timezone": "Europe/Paris", "pointsExpiringDays": 10.0,
	}
	for k, v := range want {
		if s[k] != v {
			t.Errorf("settings.%s = %v, want %v", k, s[k], v)
		}
	}
	if fmt.Sprint(s["smsCountryCodes"]) != "[+44 +1]" || fmt.Sprint(s["ssoClientIds"]) != "map[apple:[com.example.app] google:[g-client.apps.googleusercontent.com]]" {
		t.Errorf("settings = %v", s)
	}
	stored, err := h.Deps.Tenants.Store.Get(t.Context(), h.Tenant.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Settings.POSSecret != secret {
		t.Errorf("stored posSecret = %q", stored.Settings.POSSecret)
	}

	acts := tenantUpdates(t, h)
	if len(acts) != 1 {
		t.Fatalf("%d TENANT_UPDATED actions, want 1", len(acts))
	}
	wantFields := []string{"settings.currency", "settings.initialPoints", "settings.pointsExpiringDays", "settings.posEndpoint", "settings.posSecret",
		"settings.rulesBudget", "settings.sessionHours", "settings.singleAccountPerDevice", "settings.smsCountryCodes", "settings.ssoClientIds",
		"settings.timezone", "title"}
	if got := fieldsOf(acts[0]); !slices.Equal(got, wantFields) {
		t.Errorf("fields = %v, want %v", got, wantFields)
	}
	if meta := acts[0]["metadata"].(map[string]any); meta["by"] != "SERVICE_KEY" {
		t.Errorf("metadata = %v", meta)
	}
	if ctx := acts[0]["context"].(map[string]any)["tenant"].(map[string]any); ctx["_id"] != h.Tenant.ID || ctx["title"] != "Renamed Bar" {
		t.Errorf("context.tenant = %v", ctx)
	}

	t.Run("SameValuesRecordNothing", func(t *testing.T) {
		h.Do("PUT", "/tenant", body, h.Admin()).Expect(t, 200, "")
		// GET's own answer sent back: read-only fields unchanged.
		h.Do("PUT", "/tenant", got.Body, h.Admin()).Expect(t, 200, "")
		if n := len(tenantUpdates(t, h)); n != 1 {
			t.Errorf("%d TENANT_UPDATED actions, want still 1", n)
		}
	})
	t.Run("SSOMergedPerProvider", func(t *testing.T) {
		h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"ssoClientIds": map[string]any{"google": []string{"g2", "g3"}}}}, h.Admin()).Expect(t, 200, "")
		ids := h.Do("GET", "/tenant", nil, h.Admin()).Expect(t, 200, "").Map(t)["settings"].(map[string]any)["ssoClientIds"]
		if fmt.Sprint(ids) != "map[apple:[com.example.app] google:[g2 g3]]" {
			t.Errorf("ssoClientIds = %v", ids)
		}
		h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"ssoClientIds": map[string]any{"apple": nil}}}, h.Admin()).Expect(t, 200, "")
		ids = h.Do("GET", "/tenant", nil, h.Admin()).Expect(t, 200, "").Map(t)["settings"].(map[string]any)["ssoClientIds"]
		if fmt.Sprint(ids) != "map[google:[g2 g3]]" {
			t.Errorf("ssoClientIds after apple: null = %v", ids)
		}
	})
	t.Run("AdminUserRecorded", func(t *testing.T) {
		// One account per device needs x-client-platform to sign up.
		h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"singleAccountPerDevice": false}}, h.Admin()).Expect(t, 200, "")
		uid, token := adminUserToken(t, h)
		h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"initialPoints": 26}}, ts.Token(token)).Expect(t, 200, "")
		a := tenantUpdates(t, h)[0]
		if meta := a["metadata"].(map[string]any); meta["by"] != "ADMIN" || meta["userId"] != uid || fmt.Sprint(meta["fields"]) != "[settings.initialPoints]" {
			t.Errorf("metadata = %v", meta)
		}
	})
	t.Run("NullUnsets", func(t *testing.T) {
		before := len(tenantUpdates(t, h))
		nulls := map[string]any{}
		for _, k := range []string{"sessionHours", "posEndpoint", "posSecret", "ssoClientIds", "smsCountryCodes", "rulesBudget", "currency", "timezone", "pointsExpiringDays"} {
			nulls[k] = nil
		}
		s := h.Do("PUT", "/tenant", map[string]any{"settings": nulls}, h.Admin()).Expect(t, 200, "").Map(t)["settings"].(map[string]any)
		want := map[string]any{"initialPoints": 26.0, "singleAccountPerDevice": false, "posSecretSet": false}
		if fmt.Sprint(s) != fmt.Sprint(want) {
			t.Errorf("settings = %v, want %v", s, want)
		}
		acts := tenantUpdates(t, h)
		if len(acts) != before+1 || len(fieldsOf(acts[0])) != len(nulls) {
			t.Errorf("after the nulls: %d actions, the last naming %v", len(acts), fieldsOf(acts[0]))
		}
		stored, err := h.Deps.Tenants.Store.Get(t.Context(), h.Tenant.ID)
		if err != nil {
			t.Fatal(err)
		}
		if stored.Settings.POSSecret != "" || stored.Settings.RulesBudgetOrDefault() != tenant.DefaultRulesBudget || stored.Settings.TimezoneOrDefault() != tenant.DefaultTimezone {
			t.Errorf("stored settings = %+v", stored.Settings)
		}
	})
}

// TestTenantUpdateRejected: every malformed or out-of-range field is 422
// VALIDATION_FAILED naming it, and changes nothing.
func TestTenantUpdateRejected(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"posSecret": "a-secret-of-16-chars", "ssoClientIds": map[string]any{"google": []string{"g"}}}}, h.Admin()).Expect(t, 200, "")
	before := h.Do("GET", "/tenant", nil, h.Admin()).Expect(t, 200, "").Body
	set := func(name string, v any) map[string]any { return map[string]any{"settings": map[string]any{name: v}} }
	tests := []struct {
		name  string
		body  any
		field string // the message's prefix ("" when it names none)
	}{
		{"Empty", map[string]any{}, "send at least one field"},
		{"NotAnObject", "[]", "the body must be a JSON object"},
		{"EmptySettings", map[string]any{"settings": map[string]any{}}, "settings:"},
		{"SettingsNull", map[string]any{"settings": nil}, "settings:"},
		{"UnknownField", map[string]any{"serviceKey": "sk_new"}, "serviceKey:"},
		{"UnknownSetting", set("smsPerDay", 5), "settings.smsPerDay:"},
		{"ChangeID", map[string]any{"id": "another-tenant"}, "id:"},
		{"ChangeUpdatedAt", map[string]any{"updatedAt": "2020-01-01T00:00:00.000Z"}, "updatedAt:"},
		{"ChangeSecretSet", set("posSecretSet", false), "settings.posSecretSet:"},
		{"TitleEmpty", map[string]any{"title": "  "}, "title: is required"},
		{"TitleNull", map[string]any{"title": nil}, "title:"},
		{"TitleTooLong", map[string]any{"title": strings.Repeat("x", 201)}, "title: must be 1 to 200"},
		{"TitleLongInBytesOnly", map[string]any{"title": strings.Repeat("é", 200), "settings": map[string]any{"initialPoints": -1}}, "settings.initialPoints:"},
		{"InitialPointsNegative", set("initialPoints", -1), "settings.initialPoints:"},
		{"SMSPerHourNegative", set("smsPerHour", -1), "settings.smsPerHour:"},
		{"EmailsPerHourTooMany", set("emailsPerHour", 1_000_001), "settings.emailsPerHour:"},
		{"EmailsPerHourFraction", set("emailsPerHour", 2.5), "settings.emailsPerHour:"},
		{"InitialPointsTooMany", set("initialPoints", 1_000_000_001), "settings.initialPoints:"},
		{"InitialPointsFraction", set("initialPoints", 1.5), "settings.initialPoints:"},
		{"InitialPointsNull", set("initialPoints", nil), "settings.initialPoints:"},
		{"SingleAccountString", set("singleAccountPerDevice", "yes"), "settings.singleAccountPerDevice:"},
		{"SessionHoursZero", set("sessionHours", 0), "settings.sessionHours:"},
		{"SessionHoursTooMany", set("sessionHours", 8761), "settings.sessionHours:"},
		{"RulesBudgetZero", set("rulesBudget", 0), "settings.rulesBudget:"},
		{"RulesBudgetTooMany", set("rulesBudget", 1001), "settings.rulesBudget:"},
		{"ExpiringDaysZero", set("pointsExpiringDays", 0), "settings.pointsExpiringDays:"},
		{"ExpiringDaysTooMany", set("pointsExpiringDays", 366), "settings.pointsExpiringDays:"},
		{"TimezoneUnknown", set("timezone", "Mars/Olympus_Mons"), "settings.timezone:"},
		{"TimezoneLocal", set("timezone", "Local"), "settings.timezone:"},
		{"CurrencyUnknown", set("currency", "XYZ"), "settings.currency:"},
		{"CurrencyLowerCase", set("currency", "gbp"), "settings.currency:"},
		{"SMSCodeNoPlus", set("smsCountryCodes", []string{"44"}), "settings.smsCountryCodes:"},
		{"SMSCodeNull", set("smsCountryCodes", []any{nil}), "settings.smsCountryCodes[0]:"},
		{"SSOUnknownProvider", set("ssoClientIds", map[string]any{"facebook": []string{"x"}}), "settings.ssoClientIds.facebook:"},
		{"SSOEmptyID", set("ssoClientIds", map[string]any{"google": []string{""}}), "settings.ssoClientIds.google:"},
		{"SSOSpace", set("ssoClientIds", map[string]any{"google": []string{"a b"}}), "settings.ssoClientIds.google:"},
		{"SSOTwice", set("ssoClientIds", map[string]any{"apple": []string{"a", "a"}}), "settings.ssoClientIds.apple:"},
		{"SSOTooMany", set("ssoClientIds", map[string]any{"apple": slices.Repeat([]string{"a"}, 21)}), "settings.ssoClientIds.apple:"},
		{"SSONotAList", set("ssoClientIds", map[string]any{"google": "g"}), "settings.ssoClientIds.google:"},
		{"EndpointHTTP", set("posEndpoint", "http://pos.example.com/hooks"), "settings.posEndpoint:"},
		{"EndpointScheme", set("posEndpoint", "ftp://pos.example.com/hooks"), "settings.posEndpoint:"},
		{"EndpointUserInfo", set("posEndpoint", "https://user:pw@pos.example.com/hooks"), "settings.posEndpoint:"},
		{"EndpointNotAURL", set("posEndpoint", "::not a url"), "settings.posEndpoint:"},
		{"EndpointTooLong", set("posEndpoint", "https://pos.example.com/"+strings.Repeat("a", 2048)), "settings.posEndpoint:"},
		{"SecretShort", set("posSecret", "short"), "settings.posSecret:"},
		{"SecretNotASCII", set("posSecret", "sécret-sécret-sécret"), "settings.posSecret:"},
		// The valid part of a body is not applied when another part is
		// refused.
		{"ValidAndInvalid", map[string]any{"title": "Half", "settings": map[string]any{"initialPoints": 5, "rulesBudget": 0}}, "settings.rulesBudget:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e struct{ Code, Message string }
			h.Do("PUT", "/tenant", tc.body, h.Admin()).Expect(t, 422, "VALIDATION_FAILED").JSON(t, &e)
			if !strings.HasPrefix(e.Message, tc.field) {
				t.Errorf("message = %q, want it to start with %q", e.Message, tc.field)
			}
		})
	}
	if after := h.Do("GET", "/tenant", nil, h.Admin()).Expect(t, 200, "").Body; string(after) != string(before) {
		t.Errorf("the refused bodies changed the tenant:\nbefore %s\nafter  %s", before, after)
	}
	if n := len(tenantUpdates(t, h)); n != 1 {
		t.Errorf("%d TENANT_UPDATED actions, want 1", n)
	}
	t.Run("LoopbackHTTPEndpoint", func(t *testing.T) {
		for _, e := range []string{"http://localhost:8080/hooks", "http://127.0.0.1:9/hooks", "http://[::1]/hooks"} {
			h.Do("PUT", "/tenant", set("posEndpoint", e), h.Admin()).Expect(t, 200, "")
		}
	})
}

// TestTenantConcurrentUpdates: five PUTs of different settings sent at
// once all land (each is merged again over the others that came first),
// two of them different providers of ssoClientIds.
func TestTenantConcurrentUpdates(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	bodies := []map[string]any{
		{"settings": map[string]any{"initialPoints": 7}},
		{"settings": map[string]any{"sessionHours": 12}},
		{"settings": map[string]any{"ssoClientIds": map[string]any{"google": []string{"g"}}}},
		{"settings": map[string]any{"ssoClientIds": map[string]any{"apple": []string{"a"}}}},
		{"title": "Raced"},
	}
	var wg sync.WaitGroup
	statuses := make([]int, len(bodies))
	for i, b := range bodies {
		wg.Go(func() { statuses[i] = h.Do("PUT", "/tenant", b, h.Admin()).Status })
	}
	wg.Wait()
	for i, st := range statuses {
		if st != 200 {
			t.Errorf("PUT %v = %d", bodies[i], st)
		}
	}
	m := h.Do("GET", "/tenant", nil, h.Admin()).Expect(t, 200, "").Map(t)
	s := m["settings"].(map[string]any)
	if m["title"] != "Raced" || s["initialPoints"] != 7.0 || s["sessionHours"] != 12.0 || fmt.Sprint(s["ssoClientIds"]) != "map[apple:[a] google:[g]]" {
		t.Errorf("after the concurrent PUTs: %v", m)
	}
	if n := len(tenantUpdates(t, h)); n != len(bodies) {
		t.Errorf("%d TENANT_UPDATED actions, want %d", n, len(bodies))
	}
}

// TestTenantSettingsTakeEffect: what a PUT sets is what the other routes
// use at once: a new user's initial points, and the SSO client ids a
// sign-in's token must be issued to.
func TestTenantSettingsTakeEffect(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"initialPoints": 40}}, h.Admin()).Expect(t, 200, "")
	uid := h.AdminUser(t, "Ian", "Initial")
	if got := h.Do("GET", "/users/"+uid+"?include=points", nil, h.Admin()).Expect(t, 200, "").Map(t)["points"]; got != 40.0 {
		t.Errorf("a new user's points = %v, want 40", got)
	}

	google := ssotest.NewIssuer(t)
	h.Deps.Accounts.SSO = sso.NewVerifier(sso.Config{Issuers: map[string]string{"google": google.URL()}}, h.Clock)
	signIn := func() *ts.Resp {
		tok := google.Token(google.Claims("web-client.apps.googleusercontent.com", "g-"+ts.Nonce()))
		return h.Do("POST", "/users/google/sso", map[string]any{"idToken": tok, "firstName": "Gina", "lastName": "Google"}, h.Anon())
	}
	signIn().Expect(t, 422, "VALIDATION_FAILED")
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"ssoClientIds": map[string]any{"google": []string{"web-client.apps.googleusercontent.com"}}}}, h.Admin()).Expect(t, 200, "")
	signIn().Expect(t, 201, "")
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"ssoClientIds": nil}}, h.Admin()).Expect(t, 200, "")
	signIn().Expect(t, 422, "VALIDATION_FAILED")

	// The tenant's own e-mail cap: 1 an hour lets one sign-up's code
	// through, 0 none; removing it leaves the operator's cap.
	signUp := func(n int) *ts.Resp {
		return h.Do("POST", "/users", ts.UserBody("Capped", "User", "EMAIL", fmt.Sprintf("capped-%d-%s@example.com", n, ts.Nonce()), "correct-horse-9"), h.Anon(), ts.From(fmt.Sprintf("198.51.100.%d", n)))
	}
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"emailsPerHour": 1}}, h.Admin()).Expect(t, 200, "")
	signUp(1).Expect(t, 201, "")
	signUp(2).Expect(t, 429, "MESSAGE_LIMIT_REACHED")
	h.Do("PUT", "/tenant", map[string]any{"settings": map[string]any{"emailsPerHour": nil}}, h.Admin()).Expect(t, 200, "")
	signUp(3).Expect(t, 201, "")
}
