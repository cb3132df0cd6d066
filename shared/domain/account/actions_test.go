package account_test

import (
	"context"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// userActions returns the types and metadata of the actions about uid,
// oldest first.
func userActions(t *testing.T, h *ts.Harness, uid string) []action.Action {
	t.Helper()
	all, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, uid, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]action.Action, 0, len(all))
	for i := len(all) - 1; i >= 0; i-- { // ByUser is newest first
		out = append(out, all[i])
	}
	return out
}

// TestUserActions checks that registering and activating a user record
// USER_CREATED and USER_ACTIVATED with how it happened, and that a refused
// registration records nothing.
func TestUserActions(t *testing.T) {
	h := ts.New(t)
	t.Run("SelfSignUpThenCode", func(t *testing.T) {
		email := ts.UniqueEmail("Sol")
		uid := h.Do("POST", "/users", map[string]any{"firstName": "Sol", "lastName": "Self", "password": ts.Password,
			"credentials": []map[string]any{{"provider": "EMAIL", "id": email}}}, h.Anon()).Expect(t, 201, "").Map(t)["id"].(string)
		h.Do("POST", "/users/activate", map[string]any{"id": email, "token": h.LastCode(t, email)}, h.Anon()).Expect(t, 200, "")
		check(t, userActions(t, h, uid), []want{{"USER_CREATED", "createdBy", "SELF"}, {"USER_ACTIVATED", "method", "CODE"}})
	})
	t.Run("AdminAutoActivate", func(t *testing.T) {
		uid := h.AdminUser(t, "Ada", "Admin")
		check(t, userActions(t, h, uid), []want{{"USER_CREATED", "state", "ACTIVE"}, {"USER_ACTIVATED", "method", "AUTO"}})
	})
	t.Run("PendingAdminCreate", func(t *testing.T) {
		uid := h.Do("POST", "/users", map[string]any{"firstName": "Pen", "lastName": "Ding",
			"credentials": []map[string]any{{"provider": "EMAIL", "id": ts.UniqueEmail("Pen")}}}, h.Admin()).Expect(t, 201, "").Map(t)["id"].(string)
		check(t, userActions(t, h, uid), []want{{"USER_CREATED", "createdBy", "ADMIN"}})
	})
	t.Run("WrongCodeRecordsNothing", func(t *testing.T) {
		email := ts.UniqueEmail("Wes")
		uid := h.Do("POST", "/users", map[string]any{"firstName": "Wes", "lastName": "Wrong", "password": ts.Password,
			"credentials": []map[string]any{{"provider": "EMAIL", "id": email}}}, h.Anon()).Expect(t, 201, "").Map(t)["id"].(string)
		code := h.LastCode(t, email)
		bad := "0000"
		if code == bad {
			bad = "1111"
		}
		h.Do("POST", "/users/activate", map[string]any{"id": email, "token": bad}, h.Anon()).Expect(t, 422, "")
		check(t, userActions(t, h, uid), []want{{"USER_CREATED", "state", "PENDING"}})
	})
	t.Run("DuplicateCredentialRecordsNothing", func(t *testing.T) {
		email := ts.UniqueEmail("Dup")
		body := map[string]any{"firstName": "Dup", "lastName": "Licate", "credentials": []map[string]any{{"provider": "EMAIL", "id": email}}}
		h.Do("POST", "/users", body, h.Admin()).Expect(t, 201, "")
		before := len(actionsOfTenant(t, h, "USER_CREATED"))
		h.Do("POST", "/users", body, h.Admin()).Expect(t, 422, "CREDENTIAL_EXISTS")
		if got := len(actionsOfTenant(t, h, "USER_CREATED")); got != before {
			t.Errorf("USER_CREATED actions = %d after a refused registration, want %d", got, before)
		}
	})
}

// want is an expected action: its type and one metadata value.
type want struct {
	typ, key string
	value    any
}

func check(t *testing.T, got []action.Action, want []want) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("actions = %d (%+v), want %d", len(got), got, len(want))
	}
	for i, w := range want {
		if got[i].Type != w.typ || got[i].Metadata[w.key] != w.value {
			t.Errorf("action %d = %s %v, want %s with %s %v", i, got[i].Type, got[i].Metadata, w.typ, w.key, w.value)
		}
		if got[i].Context.User == nil || got[i].Context.Tenant.ID != got[i].TenantID {
			t.Errorf("action %d context = %+v", i, got[i].Context)
		}
	}
}

func actionsOfTenant(t *testing.T, h *ts.Harness, typ string) []any {
	t.Helper()
	var out []any
	for _, a := range h.Do("GET", "/actions?type="+typ+"&limit=1000", nil, h.Admin(), ts.Headers{"x-api-version", "9"}).Expect(t, 200, "").Map(t)["actions"].([]any) {
		out = append(out, a)
	}
	return out
}
