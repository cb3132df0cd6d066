package main

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
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// TestRouteEndsAtTheFunctionTimeout: the local stack serves a route with
// its function's template Timeout: a handler that blocks (as one did while
// DynamoDB Local was paused) is answered as API Gateway answers a Lambda
// that timed out, instead of holding the request.
func TestRouteEndsAtTheFunctionTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	blocks := func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		<-release
		return events.APIGatewayV2HTTPResponse{StatusCode: 200}, nil
	}
	gw := apigw.New()
	f := sam.Function{LogicalID: "SlowFunction", Name: "slow", Timeout: 20 * time.Millisecond}
	if err := route(gw, f, sam.Route{Event: "Get", Method: "get", Path: "/slow"}, blocks); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/slow")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := fmt.Sprintf("%d %s", resp.StatusCode, b), `500 {"message":"Internal Server Error"}`; got != want {
		t.Fatalf("answer = %s, want %s", got, want)
	}
}
