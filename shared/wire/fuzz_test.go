package wire

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/auth"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// keys is an authenticator without storage: one session token, one
// service key, one tenant; its errors are the real authenticator's.
type keys struct{}

func (keys) Session(_ context.Context, token string) (actor.Actor, error) {
	if token == "user-token" {
		return actor.Actor{TenantID: "t1", UserID: "u1", Roles: []string{actor.RoleUser}}, nil
	}
	return actor.Actor{}, auth.ErrBadSession
}

func (keys) ServiceKey(_ context.Context, key string) (actor.Actor, error) {
	if key == "service-key" {
		return actor.Actor{TenantID: "t1", Service: true}, nil
	}
	return actor.Actor{}, auth.ErrBadServiceKey
}

func (keys) Tenant(_ context.Context, id string) (actor.Actor, error) {
	if id == "t1" {
		return actor.Actor{TenantID: "t1"}, nil
	}
	return actor.Actor{}, auth.ErrUnknownTenant
}

type thing struct {
	Title string            `json:"title"`
	Count int               `json:"count"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

// parsingRoutes read what a request carries the way the platform's routes
// do (path values, JSON bodies, paging, filters, version, headers) and
// need no storage.
func parsingRoutes() []web.Route {
	return []web.Route{
		{Method: "POST", Path: "/users/{userId}/things", Access: web.Self, Handler: web.Serve(201, func(r *http.Request, _ actor.Actor) (thing, error) {
			if _, err := web.APIVersion(r); err != nil {
				return thing{}, err
			}
			return web.Decoded[thing](r)
		})},
		{Method: "GET", Path: "/things", Access: web.Admin, Handler: web.Serve(200, func(r *http.Request, _ actor.Actor) (web.Page, error) {
			limit, start, err := web.Paging(r)
			if err != nil {
				return web.Page{}, err
			}
			if _, err := timefilter.Parse(r, "updatedAt"); err != nil {
				return web.Page{}, err
			}
			_ = web.ListParam(r, "type")
			return web.Page{Limit: limit, StartKey: start}, nil
		})},
		{Method: "PUT", Path: "/things/{thingId}", Access: web.Authenticated, Handler: web.ServeEmpty(204, func(r *http.Request, _ actor.Actor) error {
			var v thing
			return web.DecodeOptional(r, &v)
		})},
	}
}

// FuzzLambda sends API Gateway HTTP API events (payload 2.0) through the
// adapter every function uses, to routes that parse like the platform's:
// no event makes the handler fail or panic, none is answered 5xx, and
// every error is {code, message} JSON (an event whose URL does not parse
// included).
func FuzzLambda(f *testing.F) {
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	h := lambda(web.Handler(parsingRoutes(), keys{}, log), log)
	type seed struct {
		method, path, query, body string
		b64                       bool
		auth, tenant, version     string
		stage                     string
	}
	for _, s := range []seed{
		{"POST", "/users/u1/things", "", `{"title":"a","tags":["x"]}`, false, "Token user-token", "", "8", ""},
		{"POST", "/prod/users/u1/things", "", `{"count":1}`, true, "Token user-token", "t1", "", "prod"},
		{"POST", "/users/u2/things", "", `{"tags":[x"]}`, false, "Token user-token", "", "0", "$default"},
		{"GET", "/things", "limit=5&updatedAt.gt=2024-01-01T00:00:00Z&type=A,B", "", false, "", "t1", "", ""},
		{"GET", "/things", "limit=5000&updatedAt.gt=x", "", false, "Bearer x", "t2", "", ""},
		{"PUT", "/things/%2e%2e", "x=%zz", "\xff\x00", true, "Basic Og==", "t1", "-1", "prod"},
		{"GET", "/things", "", "", false, "", "t1", "", ""},
		{"PUT", "/things/a", "", `{"title":"x"}`, false, "service", "", "", ""},
		{"DELETE", "/users/../things", "", "", false, "", "", "", "stage/with/slash"},
		{"GET", "", "", "", false, "", "", "", ""},
		{"GET", "%", "", "", false, "", "", "", ""},
		{"G T", "/things", "", "", false, "", "", "", ""},
		{"POST", "/users/u1/things", "", "{" + strings.Repeat(`"a":[`, 40), false, "Token user-token", "", "", ""},
		{"POST", "/users/u1/things", "", `{"count":1e308}`, false, "Token user-token", "", "", ""},
		{"POST", "/users/u1/things", "", `{"count":1e126,"attrs":{"":"x"}}`, false, "Token user-token", "", "", ""},
		{"POST", "/users/u1/things", "", `{"tags":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`, false, "Token user-token", "", "", ""},
		{"POST", "/users/u1/things", "", `{"title":"=HYPERLINK(\"x\")","attrs":{"a":"@SUM(1+1)"}}`, false, "Token user-token", "", "", ""},
	} {
		f.Add(s.method, s.path, s.query, s.body, s.b64, s.auth, s.tenant, s.version, s.stage)
	}
	f.Fuzz(func(t *testing.T, method, path, query, body string, b64 bool, auth, tenant, version, stage string) {
		if b64 {
			// API Gateway encodes a binary body itself: always valid base64.
			body = base64.StdEncoding.EncodeToString([]byte(body))
		}
		req := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "$default", RawPath: path, RawQueryString: query, Body: body, IsBase64Encoded: b64,
			Headers: map[string]string{"content-type": "application/json"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				Stage: stage, RequestID: "fuzz", HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path},
			},
		}
		for k, v := range map[string]string{"authorization": auth, "x-service-auth-token": "", "x-application-id": tenant, "x-api-version": version} {
			if v != "" {
				req.Headers[k] = v
			}
		}
		if auth == "service" {
			req.Headers["x-service-auth-token"] = "service-key"
		}
		resp, err := h(context.Background(), req)
		if err != nil {
			t.Fatalf("%s %q ?%q: handler error %v", method, path, query, err)
		}
		if resp.StatusCode >= 500 || resp.StatusCode < 200 {
			t.Fatalf("%s %q ?%q: status %d: %s", method, path, query, resp.StatusCode, resp.Body)
		}
		if resp.StatusCode >= 400 {
			var e struct{ Code, Message string }
			if err := json.Unmarshal([]byte(resp.Body), &e); err != nil || e.Code == "" || e.Message == "" {
				t.Fatalf("%s %q: %d answer %q is not {code, message}", method, path, resp.StatusCode, resp.Body)
			}
		}
	})
}
