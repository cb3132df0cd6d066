package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path"
	"runtime/debug"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
)

type ctxKey int

const (
	loggerKey ctxKey = iota
	callerKey
	requestIDKey
	fieldsKey
	gatewayHeadersKey
)

// Route is one HTTP route of a function: a Go 1.22 ServeMux pattern split
// into method and path, who may call it, and its handler.
type Route struct {
	Method string
	Path   string
	// Access says who may call the route; Handler checks it before the
	// route's handler runs (see Access).
	Access Access
	// Before, when set, is checked before Access: a route that validated
	// part of its request (a header, a query parameter) before it looked
	// at its caller keeps that order, so a request's first error stays
	// what it was.
	Before func(r *http.Request) error
	// Handler serves the request once Before and Access passed: usually
	// Serve or ServeEmpty over a function that returns the answer.
	Handler http.HandlerFunc
	// Idempotent marks a route that moves points or money (or starts an
	// import): it takes the Idempotency-Key header. The route only declares
	// it; shared/platform/idempotency wraps such routes (Around, set by
	// app.Base.Lambda), after authentication, and the OpenAPI test checks
	// that exactly these operations document the header.
	Idempotent bool
	// Around, when set, wraps the route's checked handler (Before, Access,
	// Handler): shared/platform/idempotency claims a request's
	// Idempotency-Key there, before its access is checked, as it did when
	// each handler checked its caller itself.
	Around func(http.HandlerFunc) http.HandlerFunc
}

// Pattern returns the ServeMux pattern of the route.
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// NewLogger returns the JSON logger every function uses. In Lambda each
// line names the function (AWS_LAMBDA_FUNCTION_NAME); a line logged with a
// request's context (InfoContext(ctx, ...)) carries the request's fields
// (see Handler).
func NewLogger() *slog.Logger { return NewLoggerTo(os.Stderr) }

// NewLoggerTo returns the logger NewLogger returns, writing to w (tests
// read what a request logs).
func NewLoggerTo(w io.Writer) *slog.Logger {
	log := slog.New(&fieldsHandler{inner: slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})})
	if fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); fn != "" {
		log = log.With("function", fn)
	}
	return log
}

// Logger returns the request-scoped logger of ctx.
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// RequestID returns the request id of ctx.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// Handler builds a function's http.Handler: a ServeMux with routes (each
// checks its Before and its Access before its handler runs), JSON 404
// answers (also for a known path with another method), and the middleware
// chain (request id and logging, recovery, authentication). Every line logged during a request with its
// logger (Logger) or its context carries the request id ("requestId"), the
// route's pattern ("route", such as "GET /users/{userId}"), the tenant once
// known ("tenantId") and the function ("function", from log).
func Handler(routes []Route, auth Authenticator, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.Pattern(), rt.serve())
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		Error(w, r, apierr.Errorf(apierr.NotFound, "no route for %s %s", r.Method, r.URL.Path))
	})
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// ServeMux would answer an unclean path ("/users/./x", "/a/..")
		// with an HTML redirect; no route has such a path.
		if p := r.URL.Path; p != "/" && path.Clean(p) != p {
			Error(w, r, apierr.Errorf(apierr.NotFound, "no route for %s %s", r.Method, p))
			return
		}
		mux.ServeHTTP(w, r)
	})
	h = authenticate(auth, h)
	h = strictQuery(h)
	h = recoverer(h)
	route := func(r *http.Request) string {
		if _, pattern := mux.Handler(r); pattern != "/" {
			return pattern
		}
		return ""
	}
	h = requestLog(log, route, h)
	return h
}

// requestLog gives the request its id, its logger (the request's fields on
// every line) and its storage call counter, and logs one line when it is
// answered.
func requestLog(base *slog.Logger, route func(*http.Request) string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := ""
		if gw, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok {
			id = gw.RequestID
		}
		if id == "" {
			id = r.Header.Get("x-request-id")
		}
		if id == "" {
			id = newID()
		}
		fields := &requestFields{id: id, route: route(r)}
		log := requestLogger(base, fields)
		ctx := context.WithValue(r.Context(), loggerKey, log)
		ctx = context.WithValue(ctx, requestIDKey, id)
		ctx = context.WithValue(ctx, fieldsKey, fields)
		// The storage calls of this request (a test may have put its own
		// counter in the context already).
		calls := callcount.From(ctx)
		if calls == nil {
			calls = callcount.New()
			ctx = callcount.With(ctx, calls)
		}
		sw := &statusWriter{ResponseWriter: w}
		sw.Header().Set("x-request-id", id)
		next.ServeHTTP(sw, r.WithContext(ctx))
		log.Info("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "ms", time.Since(start).Milliseconds(),
			"ddbCalls", calls.Service(callcount.DynamoDB), "s3Calls", calls.Service(callcount.S3))
	})
}

// strictQuery answers 422 for a query string that does not parse (a bad
// percent escape, a semicolon separator): net/url would silently drop the
// pair, and a filter the client sent would be ignored.
func strictQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			Error(w, r, apierr.Invalid("", "the query string is malformed (check its percent-encoding)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				Logger(r.Context()).Error("panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				Error(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// GatewayContext returns the API Gateway request context of r, when r came
// through the Lambda adapter.
func GatewayContext(r *http.Request) (events.APIGatewayV2HTTPRequestContext, bool) {
	return core.GetAPIGatewayV2ContextFromContext(r.Context())
}
