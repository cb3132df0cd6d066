package user_test

import (
	"fmt"
	"regexp"
	"sync/atomic"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testsupport"
)

var seq atomic.Int64

// uniqueMobile returns a mobile number no other test uses.
func uniqueMobile() string { return fmt.Sprintf("+4477%08d", seq.Add(1)) }

// uniqueEmail returns an e-mail address no other test uses.
func uniqueEmail(name string) string { return fmt.Sprintf("%s.%d@example.com", name, seq.Add(1)) }

func createBody(first, last, provider, id, password string) map[string]any {
	b := map[string]any{
		"firstName":   first,
		"lastName":    last,
		"credentials": []map[string]any{{"provider": provider, "id": id}},
	}
	if password != "" {
		b["password"] = password
	}
	return b
}

var codeRe = regexp.MustCompile(`\d{4,6}`)

// lastCode returns the code in the newest message sent to recipient.
func lastCode(t *testing.T, h *ts.Harness, to string) string {
	t.Helper()
	m, ok := h.Outbox.Last(to)
	if !ok {
		t.Fatalf("no message sent to %s", to)
	}
	code := codeRe.FindString(m.Text)
	if code == "" {
		t.Fatalf("no code in %q", m.Text)
	}
	return code
}

// activeUser creates and activates a user with a password and returns its
// id and a session token.
func activeUser(t *testing.T, h *ts.Harness, first, last string) (id, token, email string) {
	t.Helper()
	email = uniqueEmail(first)
	u := h.Do("POST", "/users", createBody(first, last, "EMAIL", email, "correct-horse-9"), h.Anon()).Expect(t, 201, "").Map(t)
	code := lastCode(t, h, email)
	s := h.Do("POST", "/users/activate", map[string]any{"id": email, "token": code}, h.Anon()).Expect(t, 200, "").Map(t)
	return u["id"].(string), s["_id"].(string), email
}

// countUsersWith returns how many users an admin finds by credential.
func countUsersWith(t *testing.T, h *ts.Harness, credential string) int {
	t.Helper()
	var out struct {
		Items []map[string]any `json:"items"`
	}
	h.Do("GET", "/users?credentialId="+credential, nil, h.Admin(), ts.Headers{"x-api-version", "4"}).Expect(t, 200, "").JSON(t, &out)
	return len(out.Items)
}
