package apigw_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/aws/apigw"
)

// name answers with the route key and path parameters it was called with.
func name(_ context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	body := ev.RouteKey
	for k, v := range ev.PathParameters {
		body += " " + k + "=" + v
	}
	return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: body}, nil
}

// TestAmbiguousRoutes: routes that Go's ServeMux finds ambiguous but API
// Gateway accepts are both served.
func TestAmbiguousRoutes(t *testing.T) {
	gw := apigw.New()
	gw.Route("GET", "/locations/{locationId}/checkins", name)
	gw.Route("GET", "/locations/exports/{fileId}", name)
	gw.Route("GET", "/locations/{locationId}", name)
	srv := httptest.NewServer(gw)
	defer srv.Close()
	cases := []struct{ path, want string }{
		{"/locations/abc/checkins", "GET /locations/{locationId}/checkins locationId=abc"},
		{"/locations/exports/f1", "GET /locations/exports/{fileId} fileId=f1"},
		{"/locations/abc", "GET /locations/{locationId} locationId=abc"},
		// Both match: the route registered first wins.
		{"/locations/exports/checkins", "GET /locations/{locationId}/checkins locationId=exports"},
		{"/nothing", `{"code":"NOT_FOUND","message":"Not Found"}`},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			resp, err := http.Get(srv.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != c.want {
				t.Fatalf("body = %q, want %q", b, c.want)
			}
		})
	}
	t.Run("DuplicateRoutePanics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		gw.Route("GET", "/locations/exports/{fileId}", name)
	})
}
