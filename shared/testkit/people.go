package testkit

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
)

// seq numbers the identifiers the helpers below hand out, so that no two
// tests of one process share one.
var seq atomic.Int64

// Password is the password of the users ActiveUser registers.
const Password = "correct-horse-9"

// UniqueEmail returns an e-mail address starting with name that no other
// test of this process uses.
func UniqueEmail(name string) string {
	return fmt.Sprintf("%s.%d@example.com", name, seq.Add(1))
}

// UniqueMobile returns a mobile number no other test of this process uses.
func UniqueMobile() string { return fmt.Sprintf("+4477%08d", seq.Add(1)) }

// Nonce returns a new random GUID (version 4), as x-platform-req-nonce
// takes.
func Nonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

var codeRe = regexp.MustCompile(`\d{4,6}`)

// LastCode returns the code (4 to 6 digits) in the newest message the
// notifier sent to recipient.
func (h *Harness) LastCode(t testing.TB, recipient string) string {
	t.Helper()
	m, ok := h.Outbox.Last(recipient)
	if !ok {
		t.Fatalf("no message sent to %s", recipient)
	}
	code := codeRe.FindString(m.Text)
	if code == "" {
		t.Fatalf("no code in %q", m.Text)
	}
	return code
}

// ActiveUser registers a user with an e-mail credential and Password
// through POST /users, activates it with the code it was sent and returns
// its id, the session token of the activation and its e-mail address.
func (h *Harness) ActiveUser(t testing.TB, first, last string) (id, token, email string) {
	t.Helper()
	email = UniqueEmail(first)
	body := map[string]any{
		"firstName": first, "lastName": last, "password": Password,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": email}},
	}
	u := h.Do("POST", "/users", body, h.Anon()).Expect(t, 201, "").Map(t)
	s := h.Do("POST", "/users/activate", map[string]any{"id": email, "token": h.LastCode(t, email)}, h.Anon()).Expect(t, 200, "").Map(t)
	return u["id"].(string), s["_id"].(string), email
}

// JPEG returns a small real JPEG image (8x8 pixels) for profile photos.
var JPEG = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for x := 0; x < 8; x++ {
		img.Set(x, x, color.RGBA{G: 200, A: 255})
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// AdminUser creates an ACTIVE user as the tenant's admin (POST
// /users?autoActivate=true with the service key; no password, no session)
// and returns its id.
func (h *Harness) AdminUser(t testing.TB, first, last string) string {
	t.Helper()
	body := map[string]any{
		"firstName": first, "lastName": last,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": UniqueEmail(first)}},
	}
	return h.Do("POST", "/users?autoActivate=true", body, h.Admin()).Expect(t, 201, "").Map(t)["id"].(string)
}

// UserBody is the body of POST /users for a user with one credential of
// provider, and password when it is not empty.
func UserBody(first, last, provider, id, password string) map[string]any {
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

// CountUsersWith returns how many users the tenant's admin finds by a
// credential (GET /users?credentialId=).
func (h *Harness) CountUsersWith(t testing.TB, credential string) int {
	t.Helper()
	var out struct {
		Items []map[string]any `json:"items"`
	}
	h.Do("GET", "/users?credentialId="+credential, nil, h.Admin(), Headers{"x-api-version", "4"}).Expect(t, 200, "").JSON(t, &out)
	return len(out.Items)
}

// Parallel runs do(0) to do(n-1) at once (n requests racing) and returns
// what each returned (a status), in order.
func Parallel(n int, do func(i int) int) []int {
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = do(i)
		}()
	}
	wg.Wait()
	return statuses
}

// Tally counts statuses.
func Tally(statuses []int) map[int]int {
	m := map[int]int{}
	for _, s := range statuses {
		m[s]++
	}
	return m
}
