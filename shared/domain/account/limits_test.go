package account_test

import (
	"net/url"
	"strings"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// address returns a valid address body.
func address(name string) map[string]any {
	return map[string]any{"name": name, "address": map[string]any{"line1": "1 Main St"}, "coordinates": []float64{-0.12, 51.5}}
}

func TestOversizePathIDs(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Long", "Ids")
	long := strings.Repeat("a", 1024)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
	}{
		{"UpdateAddress", "PUT", "/users/" + id + "/addresses/" + long, address("Home")},
		{"DeleteAddress", "DELETE", "/users/" + id + "/addresses/" + long, nil},
		{"DeleteCredential", "DELETE", "/users/" + id + "/credentials/" + long, nil},
		{"VerifyCredential", "POST", "/users/" + id + "/credentials/" + long + "/verify", map[string]any{"verificationCode": "1234"}},
		{"BadCharactersAddress", "DELETE", "/users/" + id + "/addresses/" + url.PathEscape("a#b"), nil},
		{"BadCharactersCredential", "DELETE", "/users/" + id + "/credentials/" + url.PathEscape("a b"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do(tc.method, tc.path, tc.body, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		})
	}
}

func TestGuestCannotAddCredentials(t *testing.T) {
	h := ts.New(t)
	s := h.Do("POST", "/guests", map[string]any{"firstName": "Gus"}, h.Anon()).Expect(t, 201, "").Map(t)
	id := s["user"].(map[string]any)["id"].(string)
	mobile := uniqueMobile()
	tests := []struct {
		name string
		auth ts.Headers
		body map[string]any
	}{
		{"GuestSession", ts.Token(s["_id"].(string)), map[string]any{"id": mobile, "provider": "MOBILE"}},
		{"AdminForGuest", h.Admin(), map[string]any{"id": mobile, "provider": "MOBILE", "skipVerification": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("POST", "/users/"+id+"/credentials", tc.body, tc.auth).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	if _, ok := h.Outbox.Last(mobile); ok {
		t.Errorf("a code was sent for a guest's credential")
	}
}

func TestCredentialLimitUnderConcurrency(t *testing.T) {
	h := ts.New(t)
	id, token, _ := activeUser(t, h, "Many", "Creds")
	statuses := ts.Parallel(20, func(int) int {
		return h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": uniqueEmail("many"), "provider": "EMAIL", "skipVerification": true}, h.Admin()).Status
	})
	// The user holds one primary credential, so nine more fit.
	if got := ts.Tally(statuses); got[201] != 9 || got[422] != 11 {
		t.Errorf("statuses = %v, want 9 x 201 and 11 x 422", got)
	}
	var l struct {
		Items []map[string]any `json:"items"`
	}
	h.Do("GET", "/credentials?limit=100", nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &l)
	if len(l.Items) != 10 {
		t.Errorf("%d credentials stored, want 10", len(l.Items))
	}
}

func TestParallelPrimaryDeletes(t *testing.T) {
	h := ts.New(t)
	for round := range 10 {
		a, b := uniqueEmail("pa"), uniqueEmail("pb")
		body := map[string]any{"firstName": "Two", "lastName": "Primaries", "password": "correct-horse-9",
			"credentials": []map[string]any{{"provider": "EMAIL", "id": a}, {"provider": "EMAIL", "id": b}}}
		u := h.Do("POST", "/users", body, h.Anon()).Expect(t, 201, "").Map(t)
		id := u["id"].(string)
		var credIDs []string
		for _, e := range []string{a, b} {
			var l struct {
				Items []map[string]any `json:"items"`
			}
			h.Do("GET", "/credentials?id="+url.QueryEscape(e), nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
			if len(l.Items) != 1 {
				t.Fatalf("credentials of %s = %v", e, l.Items)
			}
			credIDs = append(credIDs, l.Items[0]["_id"].(string))
		}
		statuses := ts.Parallel(2, func(i int) int {
			return h.Do("DELETE", "/users/"+id+"/credentials/"+credIDs[i], nil, h.Admin()).Status
		})
		if got := ts.Tally(statuses); got[204] != 1 || got[422] != 1 {
			t.Fatalf("round %d: statuses = %v, want one 204 and one 422", round, got)
		}
	}
}
