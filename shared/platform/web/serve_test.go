package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

func TestServe(t *testing.T) {
	user := actor.Actor{TenantID: "t", UserID: "u", Roles: []string{RoleUser}}
	type out struct {
		N int `json:"n"`
	}
	ran := false
	op := func(r *http.Request, c actor.Actor) (out, error) {
		ran = true
		if r.URL.Query().Get("fail") == "client" {
			return out{}, apierr.Invalid("x", "bad")
		}
		if r.URL.Query().Get("fail") == "internal" {
			return out{}, errors.New("table gone: secret detail")
		}
		return out{N: 7}, nil
	}
	for _, c := range []struct {
		name       string
		handler    http.HandlerFunc
		caller     actor.Actor
		query      string
		wantStatus int
		wantBody   string
		wantRan    bool
	}{
		{"AnswersTheValue", Serve(http.StatusCreated, op), user, "", 201, `{"n":7}`, true},
		{"ClientError", Serve(http.StatusOK, op), user, "?fail=client", 422, `"VALIDATION_FAILED"`, true},
		{"InternalErrorHidesItsText", Serve(http.StatusOK, op), user, "?fail=internal", 500, `"internal error"`, true},
		{"EmptyAnswersNoBody", ServeEmpty(http.StatusNoContent, func(r *http.Request, c actor.Actor) error { ran = true; return nil }), user, "", 204, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ran = false
			r := httptest.NewRequest("GET", "/x"+c.query, nil)
			r = r.WithContext(WithCaller(r.Context(), c.caller))
			w := httptest.NewRecorder()
			c.handler(w, r)
			if got := w.Code; got != c.wantStatus {
				t.Errorf("status = %d, want %d (%s)", got, c.wantStatus, w.Body)
			}
			if got := w.Body.String(); !strings.Contains(got, c.wantBody) || c.wantBody == "" && got != "" {
				t.Errorf("body = %s, want %s", got, c.wantBody)
			}
			if strings.Contains(w.Body.String(), "secret") {
				t.Errorf("internal error text reached the client: %s", w.Body)
			}
			if ran != c.wantRan {
				t.Errorf("op ran = %v, want %v", ran, c.wantRan)
			}
		})
	}
}

// closer is a body that records that it was closed.
type closer struct {
	*strings.Reader
	closed bool
}

func (c *closer) Close() error { c.closed = true; return nil }

func TestServeResponse(t *testing.T) {
	body := &closer{Reader: strings.NewReader("a,b\n1,2\n")}
	for _, c := range []struct {
		name       string
		res        Response
		wantStatus int
		wantBody   string
		wantHeader map[string]string
	}{
		{"ValueWithTheRouteStatus", Response{Value: map[string]int{"n": 1}}, 201, `{"n":1}`, map[string]string{"Content-Type": "application/json"}},
		{"AnotherStatusAndHeaders", Response{Status: 303, Header: http.Header{"Location": {"https://x.test/f"}}}, 303, "", map[string]string{"Location": "https://x.test/f"}},
		{"RawBody", Response{Header: http.Header{"Content-Type": {"text/csv"}}, Body: body}, 201, "a,b\n1,2\n", map[string]string{"Content-Type": "text/csv"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := Serve(http.StatusCreated, func(r *http.Request, a actor.Actor) (any, error) { return c.res, nil })
			w := httptest.NewRecorder()
			h(w, httptest.NewRequest("GET", "/x", nil))
			if w.Code != c.wantStatus || w.Body.String() != c.wantBody {
				t.Errorf("answer %d %q, want %d %q", w.Code, w.Body, c.wantStatus, c.wantBody)
			}
			for k, v := range c.wantHeader {
				if got := w.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
	if !body.closed {
		t.Error("the raw body was not closed")
	}
}
