// Package apigw stands in for Amazon API Gateway (HTTP API, payload format
// 2.0) on one machine: it turns plain HTTP requests into the JSON events API
// Gateway sends, routes them by the template's route keys, invokes the
// function's Lambda handler (the same one the Lambda runtime calls) and turns
// its response back into HTTP. The local stack and the tests both use it, so
// every request goes through the real adapter path.
package apigw

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// MaxPayload is API Gateway's request payload limit for HTTP APIs.
const MaxPayload = 10 << 20

// MaxLambdaEvent is Lambda's limit for a synchronous invocation's event
// (6 MB); a binary body grows by a third when API Gateway base64-encodes it.
const MaxLambdaEvent = 6 * 1024 * 1024

// IntegrationTimeout is how long API Gateway (HTTP API) waits for a Lambda
// integration to answer: 30 seconds, its default and the most it allows.
const IntegrationTimeout = 30 * time.Second

// What API Gateway answers when the invocation does not give it a
// response: a function that failed (an error, a panic, or its Timeout
// reached: Lambda reports all three as a function error) is 500, and an
// integration that did not answer within IntegrationTimeout is 503. Both
// bodies are API Gateway's own, without the platform's code.
const (
	bodyInternalError = `{"message":"Internal Server Error"}`
	bodyUnavailable   = `{"message":"Service Unavailable"}`
)

// Why an invocation gave no response.
var (
	// ErrFunctionTimeout is an invocation still running at its function's
	// Timeout: Lambda ends it and reports "Task timed out".
	ErrFunctionTimeout = errors.New("apigw: the function timed out")
	// ErrIntegrationTimeout is an invocation API Gateway stopped waiting
	// for after IntegrationTimeout.
	ErrIntegrationTimeout = errors.New("apigw: the integration timed out")
)

// LambdaHandler is the signature of an HTTP API function's handler.
type LambdaHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Gateway routes HTTP requests to Lambda handlers by route key.
type Gateway struct {
	mux *http.ServeMux
	// overflow holds routes that Go's ServeMux rejects as ambiguous with a
	// route already registered, such as GET /locations/exports/{fileId} and
	// GET /locations/{locationId}/checkins (both match
	// /locations/exports/checkins). API Gateway accepts such pairs; here a
	// request goes to the first mux with a matching route.
	overflow []*http.ServeMux
	keys     map[string]bool
	// Stage is the stage name put in the request context ("$default").
	Stage string
	// IntegrationTimeout bounds the wait for a function registered with
	// RouteFunction; New sets the package's IntegrationTimeout.
	IntegrationTimeout time.Duration
}

var paramRe = regexp.MustCompile(`\{([^}]+)\}`)

// New returns an empty gateway.
func New() *Gateway {
	g := &Gateway{mux: http.NewServeMux(), keys: map[string]bool{}, Stage: "$default", IntegrationTimeout: IntegrationTimeout}
	g.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"NOT_FOUND","message":"Not Found"}`)
	})
	return g
}

// Route sends requests matching method and path (an HttpApi path such as
// /users/{userId}) to h, whose invocations run without a deadline (the
// tests' gateway).
func (g *Gateway) Route(method, path string, h LambdaHandler) {
	g.RouteFunction(method, path, h, 0)
}

// RouteFunction is Route for a function whose invocations end after
// timeout, its template Timeout, as Lambda ends them: the handler's
// context carries that deadline (as a Lambda handler's does), and when the
// handler has not answered by then (or answers after it) the request gets
// API Gateway's answer to a failed function, 500 {"message":"Internal
// Server Error"}, whatever the handler does afterwards. Whatever the
// function's Timeout, the gateway answers 503 {"message":"Service
// Unavailable"} once the integration took IntegrationTimeout. A timeout
// of 0 is Route.
func (g *Gateway) RouteFunction(method, path string, h LambdaHandler, timeout time.Duration) {
	routeKey := method + " " + path
	names := []string{}
	for _, m := range paramRe.FindAllStringSubmatch(path, -1) {
		names = append(names, m[1])
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		params := map[string]string{}
		for _, n := range names {
			params[n] = r.PathValue(n)
		}
		g.serve(w, r, routeKey, params, h, timeout)
	}
	if g.keys[routeKey] {
		panic(fmt.Sprintf("apigw: route %s registered twice", routeKey))
	}
	g.keys[routeKey] = true
	for _, m := range append([]*http.ServeMux{g.mux}, g.overflow...) {
		if register(m, routeKey, handler) {
			return
		}
	}
	m := http.NewServeMux()
	m.HandleFunc(routeKey, handler)
	g.overflow = append(g.overflow, m)
}

// register adds a route to m unless m rejects it as ambiguous.
func register(m *http.ServeMux, pattern string, h http.HandlerFunc) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	m.HandleFunc(pattern, h)
	return true
}

// ServeHTTP implements http.Handler.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := g.mux.Handler(r); pattern == "/" {
		for _, m := range g.overflow {
			if _, p := m.Handler(r); p != "" {
				m.ServeHTTP(w, r)
				return
			}
		}
	}
	g.mux.ServeHTTP(w, r)
}

func (g *Gateway) serve(w http.ResponseWriter, r *http.Request, routeKey string, params map[string]string, h LambdaHandler, timeout time.Duration) {
	ev, err := Event(r, routeKey, params, g.Stage)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, `{"code":"PAYLOAD_TOO_LARGE","message":"Request Entity Too Large"}`)
		return
	}
	// Round-trip through JSON, as the real service does, so the handler
	// sees exactly what a deployed function would.
	raw, err := json.Marshal(ev)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if len(raw) > MaxLambdaEvent {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = io.WriteString(w, `{"code":"PAYLOAD_TOO_LARGE","message":"Request Entity Too Large"}`)
		return
	}
	var in events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &in); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	resp, err := g.invoke(r.Context(), h, in, timeout)
	switch {
	case errors.Is(err, ErrIntegrationTimeout):
		slog.Warn("apigw: integration timed out", "route", routeKey, "after", g.IntegrationTimeout.String())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, bodyUnavailable)
	case errors.Is(err, ErrFunctionTimeout):
		slog.Warn("apigw: function timed out", "route", routeKey, "timeout", timeout.String())
		fallthrough
	case err != nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, bodyInternalError)
	default:
		WriteResponse(w, resp)
	}
}

// invoke calls h with in. With a timeout, the handler's context has that
// deadline and the call ends at it (ErrFunctionTimeout) or at the
// gateway's IntegrationTimeout (ErrIntegrationTimeout), whichever comes
// first, even when the handler goes on running (it has no way to be
// stopped here, as Lambda stops the function's sandbox; its context is
// cancelled and its answer dropped). A panic is a function error.
func (g *Gateway) invoke(ctx context.Context, h LambdaHandler, in events.APIGatewayV2HTTPRequest, timeout time.Duration) (events.APIGatewayV2HTTPResponse, error) {
	if timeout <= 0 {
		return h(ctx, in)
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		resp events.APIGatewayV2HTTPResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.err = fmt.Errorf("apigw: handler panicked: %v", p)
			}
			done <- res
		}()
		res.resp, res.err = h(fctx, in)
	}()
	var integration <-chan time.Time
	if g.IntegrationTimeout > 0 {
		t := time.NewTimer(g.IntegrationTimeout)
		defer t.Stop()
		integration = t.C
	}
	select {
	case res := <-done:
		if errors.Is(fctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			// An answer that came at or after the deadline is one Lambda
			// never lets out.
			return events.APIGatewayV2HTTPResponse{}, ErrFunctionTimeout
		}
		return res.resp, res.err
	case <-fctx.Done():
		if err := ctx.Err(); err != nil {
			return events.APIGatewayV2HTTPResponse{}, err // the client went away
		}
		return events.APIGatewayV2HTTPResponse{}, ErrFunctionTimeout
	case <-integration:
		return events.APIGatewayV2HTTPResponse{}, ErrIntegrationTimeout
	}
}

// Event builds the payload-2.0 event API Gateway would send for r.
func Event(r *http.Request, routeKey string, params map[string]string, stage string) (events.APIGatewayV2HTTPRequest, error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, MaxPayload+1))
		if err != nil {
			return events.APIGatewayV2HTTPRequest{}, fmt.Errorf("read body: %w", err)
		}
		if len(b) > MaxPayload {
			return events.APIGatewayV2HTTPRequest{}, fmt.Errorf("payload too large")
		}
		body = b
	}
	headers := map[string]string{}
	var cookies []string
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if lk == "cookie" {
			for _, v := range vs {
				for _, c := range strings.Split(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[lk] = strings.Join(vs, ",")
	}
	if r.Host != "" {
		headers["host"] = r.Host
	}
	var query map[string]string
	if q := r.URL.Query(); len(q) > 0 {
		query = map[string]string{}
		for k, vs := range q {
			query[k] = strings.Join(vs, ",")
		}
	}
	if len(params) == 0 {
		params = nil
	}
	now := time.Now().UTC()
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              routeKey,
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     routeKey,
			AccountID:    "000000000000",
			Stage:        stage,
			RequestID:    requestID(),
			APIID:        "local",
			DomainName:   hostOnly(r.Host),
			DomainPrefix: strings.Split(hostOnly(r.Host), ".")[0],
			Time:         now.Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method:    r.Method,
				Path:      r.URL.Path,
				Protocol:  r.Proto,
				SourceIP:  ip,
				UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		// A Lambda event is JSON text: a body that is not valid UTF-8
		// (even one labelled as text) travels base64-encoded, so that the
		// handler sees its real bytes and can refuse it.
		if isText(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	return ev, nil
}

// WriteResponse writes a Lambda proxy response to w.
func WriteResponse(w http.ResponseWriter, resp events.APIGatewayV2HTTPResponse) {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(resp.Body); err == nil {
			body = b
		}
	}
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func isText(ct string) bool {
	ct = strings.ToLower(ct)
	if ct == "" {
		return true
	}
	for _, s := range []string{"text/", "json", "xml", "javascript", "x-www-form-urlencoded"} {
		if strings.Contains(ct, s) {
			return true
		}
	}
	return false
}

// hostOnly returns the host of a Host header without its port, as API
// Gateway's domainName: an IPv6 literal keeps its brackets, because the
// adapter builds the request URL from it.
func hostOnly(h string) string {
	host, _, err := net.SplitHostPort(h)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	switch {
	case host == "":
		return "localhost"
	case strings.Contains(host, ":"):
		return "[" + host + "]"
	}
	return host
}

func requestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x", time.Now().UnixNano(), b)
}
