// Package wire is what every function builds once per cold start: its
// configuration from the environment, the AWS configuration and the
// DynamoDB client, the clock, the logger and paging keys (Base), the small
// shared services every domain uses (who calls, tenants, users' profiles,
// the actions recorder, operations, idempotency), and the Lambda handler of
// an HTTP function. It links no domain beyond those, and no S3 client:
// each function's wiring (shared/wire/<function>, one package per
// Lambda function, built from the group builders under shared/wire/parts)
// builds what it serves, so a function links, and initialises at its cold
// start, only what it serves. shared/wire/whole assembles the same
// wirings at once for the local stack and the tests.
package wire

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"log"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
	"github.com/loyalty-platform/platform/shared/aws/bucket"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/operation"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/auth"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/idempotency"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Config is everything a function reads from its environment.
type Config struct {
	Tables  ddb.Tables
	Buckets bucket.Names
	// PagingSecret signs paging keys. Locally a random secret is made per
	// process when PAGING_KEY_SECRET is unset.
	PagingSecret []byte
	// Notifier is "aws" (SNS and SES) or "log" (the local outbox).
	Notifier    string
	SenderEmail string
	MediaURL    string
	// TenantCacheTTL is how long a warm function trusts a tenant or
	// service key it read (TENANT_CACHE_SECONDS, default
	// tenant.CacheTTL; 0 turns the cache off).
	TenantCacheTTL time.Duration
	// WebhookQueueURL is the FIFO queue the webhook fan-out sends to and
	// the sender reads (WEBHOOK_QUEUE_URL).
	WebhookQueueURL string
}

// ConfigFromEnv reads the configuration.
func ConfigFromEnv() Config {
	c := Config{
		Tables:       ddb.TablesFromEnv(),
		Buckets:      bucket.NamesFromEnv(),
		PagingSecret: []byte(os.Getenv("PAGING_KEY_SECRET")),
		Notifier:     os.Getenv("NOTIFIER"),
		SenderEmail:  os.Getenv("SENDER_EMAIL"),
		MediaURL:     os.Getenv("MEDIA_URL"),

		WebhookQueueURL: os.Getenv("WEBHOOK_QUEUE_URL"),
	}
	c.TenantCacheTTL = tenant.CacheTTL
	if v, err := strconv.Atoi(os.Getenv("TENANT_CACHE_SECONDS")); err == nil && v >= 0 {
		c.TenantCacheTTL = time.Duration(v) * time.Second
	}
	if len(c.PagingSecret) == 0 {
		c.PagingSecret = make([]byte, 32)
		_, _ = rand.Read(c.PagingSecret)
	}
	if c.MediaURL == "" {
		// Where the local stack (make run, on PORT) serves the media
		// bucket, for a function run locally against it.
		c.MediaURL = "http://localhost:" + cmp.Or(os.Getenv("PORT"), "3000") + "/_local/media"
	}
	return c
}

// MustBase builds the base of the function named name from its
// environment, or stops the process: a function's cold start that cannot
// read its configuration or AWS credentials cannot serve.
func MustBase(name string) *Base {
	b, err := NewBase(context.Background(), ConfigFromEnv())
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return b
}

// RunningLocally reports whether the function runs against local
// endpoints (make run, make invoke) rather than in AWS.
func RunningLocally() bool {
	return os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != ""
}

// Base is what every function builds once per cold start.
type Base struct {
	Config Config
	AWS    aws.Config
	DB     ddb.API
	Clock  clock.Clock
	Log    *slog.Logger
	Cursor ddb.Cursor
	// TenantCache is the container's cache of tenants and service keys
	// (Config.TenantCacheTTL), shared by every domain; nil is no cache.
	TenantCache *tenant.Cache
	// Notifier and Pusher, when set, send the codes and register the push
	// endpoints of the functions that do (the tests' outbox); nil means
	// the ones Config.Notifier names (shared/wire/parts/identity).
	Notifier notify.Notifier
	Pusher   notify.Pusher
	// PasswordCost is the cost of new password hashes (see
	// auth.PasswordCost): zero in every function, lowered by the tests.
	PasswordCost auth.PasswordCost
}

// NewBase builds the base of a function from cfg with the real clock.
func NewBase(ctx context.Context, cfg Config) (*Base, error) {
	awsCfg, err := ddb.LoadAWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	// Every client made from this configuration (DynamoDB, S3, ...) counts
	// its calls in the request's counter (the ddbCalls and s3Calls of the
	// request log line, and the budgets of shared/contract/budget).
	awsCfg.APIOptions = append(awsCfg.APIOptions, callcount.Middleware)
	b := &Base{
		Config: cfg, AWS: awsCfg, DB: ddb.NewClient(awsCfg),
		Clock: clock.System{}, Log: web.NewLogger(), Cursor: ddb.NewCursor(cfg.PagingSecret),
		TenantCache: tenant.NewCacheTTL(cfg.TenantCacheTTL),
	}
	// Lines logged outside a request (jobs, streams, schedules) and the
	// business metrics they record are JSON too: CloudWatch reads the
	// metrics only from JSON lines.
	slog.SetDefault(b.Log)
	if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" && !RunningLocally() && os.Getenv("PAGING_KEY_SECRET") == "" {
		b.Log.Warn("PAGING_KEY_SECRET is not set: paging keys are signed with a per-container secret and fail across containers")
	}
	return b, nil
}

// Tenants is the tenants' store, on the container's cache (none when
// TenantCacheTTL is 0).
func (b *Base) Tenants() *tenant.Store {
	return &tenant.Store{DB: b.DB, Table: b.Config.Tables.Tenants, Cache: b.TenantCache, Clock: b.Clock}
}

// Auth resolves who calls (sessions, service keys, tenants).
func (b *Base) Auth() *auth.Authenticator {
	return &auth.Authenticator{DB: b.DB, Sessions: b.Config.Tables.Sessions, Tenants: b.Tenants(), Clock: b.Clock}
}

// Profiles reads users' profiles.
func (b *Base) Profiles() *profile.Reader {
	return &profile.Reader{DB: b.DB, Table: b.Config.Tables.Users, Clock: b.Clock}
}

// Actions records actions (the event log).
func (b *Base) Actions() *action.Recorder {
	return &action.Recorder{DB: b.DB, Table: b.Config.Tables.Actions}
}

// Operations builds the operations of asynchronous jobs (polling them).
func (b *Base) Operations() *operation.Service {
	return &operation.Service{DB: b.DB, Table: b.Config.Tables.Operations, Clock: b.Clock}
}

// TenantTitle names a tenant (for the actions of jobs and the expiry).
func (b *Base) TenantTitle(ctx context.Context, tenantID string) (string, error) {
	t, err := b.Tenants().Get(ctx, tenantID)
	return t.Title, err
}

// Titles names tenants (Title) for the domains whose actions name the
// tenant.
type Titles struct{ b *Base }

// Titles returns the tenant names read on b (TenantTitle).
func (b *Base) Titles() Titles { return Titles{b} }

// Title names tenant id.
func (t Titles) Title(ctx context.Context, id string) (string, error) {
	return t.b.TenantTitle(ctx, id)
}

// LambdaHandler is the handler of an API function: API Gateway HTTP API
// events (payload 2.0) through the api-proxy adapter.
type LambdaHandler = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Idempotency keeps the records of Idempotency-Key headers.
func (b *Base) Idempotency() *idempotency.Store {
	return &idempotency.Store{DB: b.DB, Table: b.Config.Tables.Operations, Clock: b.Clock}
}

// Lambda returns the Lambda handler of an API function serving routes,
// authenticated by b.Auth(). The routes marked Idempotent take the
// Idempotency-Key header (b.Idempotency()): they are wrapped (around
// their access checks) before web.Handler adds the middleware, so the
// wrapper runs after authentication and knows the caller.
func (b *Base) Lambda(routes []web.Route) LambdaHandler {
	return lambda(web.Handler(b.Idempotency().Decorate(routes), b.Auth(), b.Log), b.Log)
}

// lambda adapts h to API Gateway HTTP API events. An event that does not
// make an HTTP request (a path with a bad percent escape) is answered 422
// like a malformed query string, rather than failing the invocation
// (which API Gateway would answer 500).
func lambda(h http.Handler, log *slog.Logger) LambdaHandler {
	adapter := httpadapter.NewV2(h)
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		// The event's headers ride along whole: the adapter splits each
		// value at its commas (web.WholeHeader reads them).
		req, err := adapter.EventToRequestWithContext(web.WithGatewayHeaders(ctx, ev.Headers), withoutStage(ev))
		if err != nil {
			log.Info("request", "requestId", ev.RequestContext.RequestID, "route", ev.RouteKey, "method", ev.RequestContext.HTTP.Method, "status", http.StatusUnprocessableEntity, "error", err.Error())
			body, _ := json.Marshal(web.ErrorBody{Code: string(apierr.ValidationFailed), Message: "the request URL is malformed (check its percent-encoding)"})
			return events.APIGatewayV2HTTPResponse{
				StatusCode: http.StatusUnprocessableEntity,
				Headers:    map[string]string{"Content-Type": "application/json"},
				Body:       string(body),
			}, nil
		}
		w := core.NewProxyResponseWriterV2()
		h.ServeHTTP(w, req)
		return w.GetProxyResponse()
	}
}

// withoutStage removes the stage from the paths of a request that came
// through a named API Gateway stage: HTTP APIs pass "/prod/users" for
// GET /users on stage prod (only the $default stage has no prefix), and the
// routes are the template's paths without it.
func withoutStage(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
	stage := req.RequestContext.Stage
	if stage == "" || stage == "$default" {
		return req
	}
	prefix := "/" + stage
	strip := func(p string) string {
		if p == prefix {
			return "/"
		}
		if rest, ok := strings.CutPrefix(p, prefix+"/"); ok {
			return "/" + rest
		}
		return p
	}
	req.RawPath = strip(req.RawPath)
	req.RequestContext.HTTP.Path = strip(req.RequestContext.HTTP.Path)
	return req
}
