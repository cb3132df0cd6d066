package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// anyTenant accepts every x-application-id and refuses tokens.
type anyTenant struct{}

func (anyTenant) Session(context.Context, string) (actor.Actor, error) {
	return actor.Actor{}, errors.New("no sessions")
}
func (anyTenant) ServiceKey(context.Context, string) (actor.Actor, error) {
	return actor.Actor{}, errors.New("no keys")
}
func (anyTenant) Tenant(_ context.Context, id string) (actor.Actor, error) {
	return actor.Actor{TenantID: id}, nil
}

func TestHandlerAnswersJSON(t *testing.T) {
	ok := func(w http.ResponseWriter, r *http.Request) { web.Empty(w, http.StatusOK) }
	h := web.Handler([]web.Route{{Method: "GET", Path: "/users/{userId}/addresses", Handler: ok}}, anyTenant{}, web.NewLogger())
	tests := []struct {
		name, method, target string
		want                 int
		code                 string
	}{
		{"Route", "GET", "/users/u1/addresses", 200, ""},
		{"UnknownPath", "GET", "/nowhere", 404, "NOT_FOUND"},
		{"OtherMethod", "DELETE", "/users/u1/addresses", 404, "NOT_FOUND"},
		{"DotSegment", "GET", "/users/./addresses", 404, "NOT_FOUND"},
		{"DotDotSegment", "GET", "/users/u1/../u1/addresses", 404, "NOT_FOUND"},
		{"TrailingDotDot", "GET", "/users/..", 404, "NOT_FOUND"},
		{"MalformedQuery", "GET", "/users/u1/addresses?x=%ZZ", 422, "VALIDATION_FAILED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "http://api.test"+tc.target, nil)
			r.Header.Set("x-application-id", "t1")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if got := w.Code; got != tc.want {
				t.Fatalf("status = %d, want %d; body %s", got, tc.want, w.Body)
			}
			if tc.code == "" {
				return
			}
			var got struct{ Code, Message string }
			if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Code != tc.code || got.Message == "" {
				t.Errorf("body = %s, want {code: %s, message}", w.Body, tc.code)
			}
		})
	}
}
