package apidoc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/loyalty-platform/platform/shared/contract/apidoc"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestOpenAPIDocument: GET /openapi.json, through the operations function's
// handler, answers the whole document to a caller without credentials; it
// validates, names the server it was read from first, and may be cached.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	tests := []struct {
		name    string
		headers ts.Headers
		want    int
	}{
		{"NoCredentials", nil, 200},
		{"AnonymousOfTenant", h.Anon(), 200},
		{"ServiceKey", h.Admin(), 200},
		{"GarbageToken", ts.Headers{"Authorization", "Token not-a-token"}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.Do("GET", "/openapi.json", nil, tt.headers)
			if r.Status != tt.want {
				t.Fatalf("status = %d, want %d: %.300s", r.Status, tt.want, r.Body)
			}
			if tt.want != 200 {
				return
			}
			if got := r.Header.Get("Cache-Control"); got != apidoc.CacheControl {
				t.Errorf("Cache-Control = %q, want %q", got, apidoc.CacheControl)
			}
			doc, err := openapi3.NewLoader().LoadFromData(r.Body)
			if err != nil {
				t.Fatalf("load the served document: %v", err)
			}
			if err := doc.Validate(context.Background()); err != nil {
				t.Fatalf("the served document does not validate: %v", err)
			}
			if doc.Paths.Find("/openapi.json") == nil || doc.Paths.Find("/operations/{operationId}") == nil {
				t.Errorf("the served document lacks its own paths")
			}
			if len(doc.Servers) < 2 || doc.Servers[0].URL != h.Server.URL {
				t.Errorf("servers[0] = %s, want %s first, then the document's own", doc.Servers[0].URL, h.Server.URL)
			}
		})
	}
}

// TestBaseURL: the first server of the document is where the request came
// from; a Host that is not a plain host name is left out.
func TestBaseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, host, proto, want string
	}{
		{"Local", "localhost:3000", "", "http://localhost:3000"},
		{"Loopback", "127.0.0.1:8080", "", "http://127.0.0.1:8080"},
		{"IPv6Loopback", "[::1]:3000", "", "http://[::1]:3000"},
		{"Deployed", "abc.execute-api.eu-west-1.amazonaws.com", "https", "https://abc.execute-api.eu-west-1.amazonaws.com"},
		{"NoProtoIsHTTPS", "api.example.com", "", "https://api.example.com"},
		{"ForwardedList", "api.example.com", "http, https", "http://api.example.com"},
		{"BadProto", "api.example.com", "javascript", "https://api.example.com"},
		{"Injection", "evil.com/x?", "", ""},
		{"Empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/openapi.json", nil)
			r.Host = tt.host
			if tt.proto != "" {
				r.Header.Set("X-Forwarded-Proto", tt.proto)
			}
			if got := apidoc.BaseURL(r); got != tt.want {
				t.Errorf("BaseURL(host %q, proto %q) = %q, want %q", tt.host, tt.proto, got, tt.want)
			}
		})
	}
}

// TestOpenAPIDocumentBehindStage: through a named API Gateway stage (the
// sample event of the operations function), the first server is the
// stage's URL, so "Try it out" keeps the stage in its paths.
func TestOpenAPIDocumentBehindStage(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	raw, err := os.ReadFile("../../../events/operations-openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	handler, err := h.Deps.LambdaHandler("operations")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := handler(context.Background(), ev)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("invoke: %d %v: %.300s", resp.StatusCode, err, resp.Body)
	}
	var doc struct {
		Servers []struct{ URL string } `json:"servers"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &doc); err != nil {
		t.Fatal(err)
	}
	if want := "https://abc123.execute-api.us-east-1.amazonaws.com/prod"; len(doc.Servers) == 0 || doc.Servers[0].URL != want {
		t.Errorf("servers = %v, want %s first", doc.Servers, want)
	}
	if got := resp.Headers["Cache-Control"]; got != apidoc.CacheControl {
		t.Errorf("Cache-Control = %q, want %q", got, apidoc.CacheControl)
	}
}
