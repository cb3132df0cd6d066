package checkin_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// activeUser registers and activates a user (no profile photo yet) and
// returns its id and a session token.
func activeUser(t *testing.T, h *ts.Harness, first, last string) (id, token string) {
	t.Helper()
	id, token, _ = h.ActiveUser(t, first, last)
	return id, token
}

// adminUser creates an ACTIVE user as the tenant's admin (no session) and
// returns its id.
func adminUser(t *testing.T, h *ts.Harness, first, last string) string {
	t.Helper()
	body := map[string]any{
		"firstName": first, "lastName": last,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": ts.UniqueEmail(first)}},
	}
	return h.Do("POST", "/users?autoActivate=true", body, h.Admin()).Expect(t, 201, "").Map(t)["id"].(string)
}

// givePhoto uploads a profile photo for the user through PUT
// /users/{userId}/avatar (as the tenant's admin).
func givePhoto(t *testing.T, h *ts.Harness, userID string) {
	t.Helper()
	u := h.Do("PUT", "/users/"+userID+"/avatar", ts.JPEG(), h.Admin(), ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "").Map(t)
	if u["hasProfilePhoto"] != true {
		t.Fatalf("avatar upload did not set hasProfilePhoto: %v", u)
	}
}

// photoUser is an activated user with a profile photo and a session.
func photoUser(t *testing.T, h *ts.Harness, first, last string) (id, token string) {
	t.Helper()
	id, token = activeUser(t, h, first, last)
	givePhoto(t, h, id)
	return id, token
}

// addLocation creates a location through POST /locations with the given
// admin headers: ACTIVE, offering check-ins, in London, changed by opts. It
// returns the location's id.
func addLocation(t *testing.T, h *ts.Harness, admin ts.Headers, title string, opts ...func(map[string]any)) string {
	t.Helper()
	body := map[string]any{
		"title": title, "geo": []float64{-0.1276, 51.5072}, "state": "ACTIVE",
		"services": map[string]any{"checkins": true, "pre_order": true},
		"regions":  []string{"london"}, "tags": []string{"flagship"}, "timezone": "Europe/London",
	}
	for _, o := range opts {
		o(body)
	}
	return h.Do("POST", "/locations", body, admin).Expect(t, 201, "").Map(t)["_id"].(string)
}

// list is a check-in list response.
type list struct {
	Checkins []map[string]any `json:"checkins"`
	Summary  struct {
		Total int `json:"total"`
		Count int `json:"count"`
		Pages int `json:"pages"`
		Page  int `json:"page"`
	} `json:"summary"`
}

func getList(t *testing.T, h *ts.Harness, path string, headers ...ts.Headers) list {
	t.Helper()
	var l list
	h.Do("GET", path, nil, headers...).Expect(t, 200, "").JSON(t, &l)
	return l
}

// userCheckins returns the ids of the user's live check-ins, as an admin
// sees them.
func userCheckins(t *testing.T, h *ts.Harness, userID string) []string {
	t.Helper()
	return ids(getList(t, h, "/users/"+userID+"/checkins", h.Admin()))
}

// locationCheckins returns the ids of the live check-ins at a location.
func locationCheckins(t *testing.T, h *ts.Harness, locationID string) []string {
	t.Helper()
	return ids(getList(t, h, "/locations/"+locationID+"/checkins?per_page=100", h.Admin()))
}

func ids(l list) []string {
	out := []string{}
	for _, c := range l.Checkins {
		out = append(out, c["_id"].(string))
	}
	return out
}

// actions returns the user's recorded check-in actions (CHECKIN_CREATED
// and CHECKOUT; not the users domain's USER_CREATED and USER_ACTIVATED),
// newest first.
func actions(t *testing.T, h *ts.Harness, userID string) []action.Action {
	t.Helper()
	as, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, userID, 100)
	if err != nil {
		t.Fatalf("read actions: %v", err)
	}
	out := []action.Action{}
	for _, a := range as {
		if a.Type == action.CheckinCreated || a.Type == action.Checkout {
			out = append(out, a)
		}
	}
	return out
}

// posRequest is one notification a test POS received.
type posRequest struct {
	Header http.Header
	Body   []byte
}

// pos is a test POS endpoint.
type pos struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []posRequest
	// status is the answer; 0 means 204.
	status atomic.Int32
	// block, when set, makes the POS hang until the test ends.
	block atomic.Bool
	done  chan struct{}
}

func newPOS(t *testing.T) *pos {
	p := &pos{done: make(chan struct{})}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.reqs = append(p.reqs, posRequest{Header: r.Header.Clone(), Body: body})
		p.mu.Unlock()
		if p.block.Load() {
			select {
			case <-p.done:
			case <-r.Context().Done():
			}
			return
		}
		if s := p.status.Load(); s != 0 {
			w.WriteHeader(int(s))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() { close(p.done); p.Close() })
	return p
}

// take returns and forgets the requests received so far.
func (p *pos) take() []posRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.reqs
	p.reqs = nil
	return out
}
