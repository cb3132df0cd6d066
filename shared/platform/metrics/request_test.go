package metrics_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// TestRequestEmitsMetric sends requests to the accounts function's real
// Lambda handler, its log captured, and checks that each writes its
// business metric as one EMF line of the request: the metric under the
// platform's namespace with the tenant as dimension, and the request's
// id, route and function.
func TestRequestEmitsMetric(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	var out ts.LogBuffer
	b := *h.Deps.Base
	b.Log = web.FunctionLogger(web.NewLoggerTo(&out), "accounts")
	users := b.Lambda(h.Deps.Routes()["accounts"])
	basic := func(password string) map[string]string {
		hs := h.Basic("ada.metrics@example.com", password, "EMAIL")
		m := map[string]string{}
		for i := 0; i+1 < len(hs); i += 2 {
			m[strings.ToLower(hs[i])] = hs[i+1]
		}
		return m
	}
	admin := map[string]string{"x-application-id": h.Tenant.ID, "x-service-auth-token": h.ServiceKey, "content-type": "application/json"}
	tests := []struct {
		name    string
		route   string
		query   string
		headers map[string]string
		body    string
		status  int
		metric  string
	}{
		{name: "UserCreated", route: "POST /users", query: "autoActivate=true", headers: admin, status: 201, metric: metrics.UsersCreated,
			body: `{"firstName":"Ada","lastName":"Metrics","credentials":[{"provider":"EMAIL","id":"ada.metrics@example.com"}],"password":"correct-horse-9"}`},
		{name: "LoginFailed", route: "GET /users/login", headers: basic("wrong-horse-1"), status: 401, metric: metrics.LoginsFailed},
		{name: "Login", route: "GET /users/login", headers: basic("correct-horse-9"), status: 200, metric: metrics.Logins},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			method, path, _ := strings.Cut(tc.route, " ")
			ev := events.APIGatewayV2HTTPRequest{
				Version: "2.0", RouteKey: tc.route, RawPath: path, RawQueryString: tc.query, Headers: tc.headers, Body: tc.body,
				RequestContext: events.APIGatewayV2HTTPRequestContext{
					RequestID: "req-" + tc.name, Stage: "$default", RouteKey: tc.route,
					HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.10"},
				},
			}
			resp, err := users(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, resp.Body)
			}
			var emf []map[string]any
			for _, l := range out.Take(t) {
				if _, ok := l["_aws"]; ok {
					emf = append(emf, l)
				}
			}
			if len(emf) != 1 {
				t.Fatalf("metric lines = %v, want one", emf)
			}
			l := emf[0]
			meta, _ := json.Marshal(l["_aws"])
			if !strings.Contains(string(meta), `"Namespace":"`+metrics.Namespace+`"`) || !strings.Contains(string(meta), `"Name":"`+tc.metric+`"`) || !strings.Contains(string(meta), `"Dimensions":[["Tenant"]]`) {
				t.Errorf("_aws = %s, want %s in %s by Tenant", meta, tc.metric, metrics.Namespace)
			}
			want := map[string]any{tc.metric: 1.0, "Tenant": h.Tenant.ID, "requestId": "req-" + tc.name, "route": tc.route, "function": "accounts", "tenantId": h.Tenant.ID}
			for k, v := range want {
				if l[k] != v {
					t.Errorf("%s = %v, want %v", k, l[k], v)
				}
			}
		})
	}
}
