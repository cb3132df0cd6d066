package apigw_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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

// TestFunctionTimeout: a route of RouteFunction ends its invocation at the
// function's Timeout, or at the integration's, as Lambda and API Gateway
// do, whatever the handler does (it may ignore its context and block).
func TestFunctionTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	blocks := func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		<-release // a handler stuck on a call that ignores its context
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "too late"}, nil
	}
	// waits answers the platform's own error once its context ends, as a
	// handler whose DynamoDB call was cancelled does.
	waits := func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		<-ctx.Done()
		return events.APIGatewayV2HTTPResponse{StatusCode: 500, Body: `{"code":"INTERNAL","message":"internal error"}`}, nil
	}
	// deadline answers how long its context gives it.
	deadline := func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		d, ok := ctx.Deadline()
		if !ok {
			return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "no deadline"}, nil
		}
		if left := time.Until(d); left <= 0 || left > time.Minute {
			return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "deadline " + left.String()}, nil
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "deadline within the Timeout"}, nil
	}
	panics := func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		panic("handler bug")
	}
	tests := []struct {
		name                 string
		handler              apigw.LambdaHandler
		timeout, integration time.Duration
		status               int
		body                 string
	}{
		{"AnswersInTime", deadline, time.Minute, time.Minute, 200, "deadline within the Timeout"},
		{"BlocksPastItsTimeout", blocks, 20 * time.Millisecond, time.Minute, 500, `{"message":"Internal Server Error"}`},
		{"AnswersAtItsDeadline", waits, 20 * time.Millisecond, time.Minute, 500, `{"message":"Internal Server Error"}`},
		{"IntegrationTimesOutFirst", blocks, time.Minute, 20 * time.Millisecond, 503, `{"message":"Service Unavailable"}`},
		{"Panics", panics, time.Minute, time.Minute, 500, `{"message":"Internal Server Error"}`},
		{"WithoutTimeout", deadline, 0, time.Minute, 200, "no deadline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := apigw.New()
			gw.IntegrationTimeout = tc.integration
			gw.RouteFunction("GET", "/slow", tc.handler, tc.timeout)
			srv := httptest.NewServer(gw)
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/slow")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got, want := fmt.Sprintf("%d %s", resp.StatusCode, b), fmt.Sprintf("%d %s", tc.status, tc.body); got != want {
				t.Fatalf("answer = %s, want %s", got, want)
			}
		})
	}
}
