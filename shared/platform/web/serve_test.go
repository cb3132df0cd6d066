package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

func TestServe(t *testing.T) {
	admin := Caller{TenantID: "t", Service: true}
	user := Caller{TenantID: "t", UserID: "u", Roles: []string{RoleUser}}
	type out struct {
		N int `json:"n"`
	}
	ran := false
	op := func(r *http.Request, c Caller) (out, error) {
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
		caller     Caller
		query      string
		wantStatus int
		wantBody   string
		wantRan    bool
	}{
		{"AnswersTheValue", Serve(http.StatusCreated, op), user, "", 201, `{"n":7}`, true},
		{"ClientError", Serve(http.StatusOK, op), user, "?fail=client", 422, `"VALIDATION_FAILED"`, true},
		{"InternalErrorHidesItsText", Serve(http.StatusOK, op), user, "?fail=internal", 500, `"internal error"`, true},
		{"AdminServesTheAdmin", ServeAdmin(http.StatusOK, op), admin, "", 200, `{"n":7}`, true},
		{"AdminRefusesAUserBeforeTheOpRuns", ServeAdmin(http.StatusOK, op), user, "", 401, `"UNAUTHORIZED"`, false},
		{"EmptyAnswersNoBody", ServeEmpty(http.StatusNoContent, func(r *http.Request, c Caller) error { ran = true; return nil }), user, "", 204, "", true},
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
