// Command localstack runs the whole platform on one machine (make run):
//
//	go run ./localstack
//
// It reads template.yaml (SAM_TEMPLATE overrides the path), starts the
// storage (DynamoDB Local and an in-memory S3, or whatever AWS_ENDPOINT_URL
// names) with the template's tables and buckets, seeds a tenant and serves
// every HttpApi route of every function with that function's Lambda handler,
// through the same API Gateway adapter the deployed functions see, each
// invocation ending at its function's Timeout. Objects
// created in the in-memory S3 are announced to the functions whose template
// S3 triggers match, asynchronously, as S3 does (the jobs function runs the
// imports and exports this way). The stream pollers resume where the last
// run stopped, and the jobs a stopped run left PENDING or RUNNING are run
// again (see README, "The local stack when things fail").
//
// It answers browsers as API Gateway does with the template's
// CorsConfiguration (preflights on every path, Access-Control-* headers on
// the answers of an allowed Origin; cors.go). It also serves an
// interactive API reference (Swagger UI) at /docs, and a local OpenID
// Connect issuer per SSO provider under /_local/sso (sso.go), which SSO
// sign-in trusts unless SSO_GOOGLE_ISSUER or SSO_APPLE_ISSUER name other
// issuers.
//
// Environment: PORT (default 3000), LOCAL_TENANT_ID (default local),
// LOCAL_SERVICE_TOKEN (default local-service-token), LOCAL_STATE_DIR (where
// the stream positions outlive a restart; default build/localstack under
// the repository root; set and empty, a start picks nothing up: no
// positions, no jobs resumed), LOCAL_DYNAMODB_DIR (DynamoDB Local keeps its
// tables there instead of in memory; default unset: in memory).
package main

import (
	"io"

	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/loyalty-platform/platform/localstack/stack"
	"github.com/loyalty-platform/platform/shared/aws/apigw"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

func main() {
	if err := run(); err != nil {
		slog.Error("localstack", "err", err)
		os.Exit(1)
	}
}

// localSMSCountryCodes are the calling codes the seeded tenant sends text
// messages to (settings.smsCountryCodes).
var localSMSCountryCodes = []string{"+44", "+1"}

// settings are the local stack's own knobs, from the environment.
type settings struct {
	Port         string
	TenantID     string
	ServiceToken string
	// StateDir is the stack's state folder (stack.Options.StateDir).
	StateDir string
	// DynamoDBDir keeps DynamoDB Local's tables on disk when set
	// (stack.Options.DynamoDBDir).
	DynamoDBDir string
}

func settingsFromEnv() settings {
	get := func(env, def string) string {
		if v := os.Getenv(env); v != "" {
			return v
		}
		return def
	}
	return settings{
		Port:         get("PORT", "3000"),
		TenantID:     get("LOCAL_TENANT_ID", "local"),
		ServiceToken: get("LOCAL_SERVICE_TOKEN", "local-service-token"),
		StateDir:     stateDir(),
		DynamoDBDir:  os.Getenv("LOCAL_DYNAMODB_DIR"),
	}
}

// stateDir is LOCAL_STATE_DIR, or build/localstack when it is unset. Set
// and empty, the stack picks nothing up from a run before: each start is a
// new deployment (the benchmarks' server, on an emulator other runs share).
func stateDir() string {
	if v, ok := os.LookupEnv("LOCAL_STATE_DIR"); ok {
		return v
	}
	return defaultStateDir()
}

// defaultStateDir is build/localstack under the repository root (make clean
// forgets it), or under the working directory when the root is not found.
func defaultStateDir() string {
	if dir, err := stack.FindDir(); err == nil {
		return filepath.Join(filepath.Dir(dir), "build", "localstack")
	}
	return filepath.Join("build", "localstack")
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	set := settingsFromEnv()

	tmpl, err := sam.Load(sam.Path())
	if err != nil {
		return err
	}
	st, err := stack.Start(ctx, stack.Options{Template: tmpl, StateDir: set.StateDir, DynamoDBDir: set.DynamoDBDir})
	if err != nil {
		if ctx.Err() != nil {
			slog.Info("interrupted while starting")
			return nil
		}
		return fmt.Errorf("start storage: %w", err)
	}
	defer func() {
		if err := st.Close(); err != nil {
			slog.Error("stop storage", "err", err)
		}
	}()
	if err := st.Setenv(); err != nil {
		return err
	}
	// One process serves every function here, but a key rotated or a
	// setting changed with `make invoke FN=tenants` happens in another:
	// without the functions' per-container cache of tenants and keys
	// (30 seconds in AWS) it applies at once. TENANT_CACHE_SECONDS=30
	// serves as deployed.
	if os.Getenv("TENANT_CACHE_SECONDS") == "" {
		if err := os.Setenv("TENANT_CACHE_SECONDS", "0"); err != nil {
			return err
		}
	}
	// Profile photos are served by this process under /_local/media unless
	// MEDIA_URL names another host.
	if os.Getenv("MEDIA_URL") == "" {
		if err := os.Setenv("MEDIA_URL", "http://localhost:"+set.Port+adminPrefix+"/media"); err != nil {
			return err
		}
	}

	// SSO sign-in verifies ID tokens of the stack's own issuers unless
	// SSO_GOOGLE_ISSUER or SSO_APPLE_ISSUER name others.
	iss, err := newIssuers("http://localhost:" + set.Port)
	if err != nil {
		return err
	}
	ssoIssuers, err := iss.setenv()
	if err != nil {
		return err
	}
	deps, err := whole.New(ctx, wire.ConfigFromEnv())
	if err != nil {
		return fmt.Errorf("build the application: %w", err)
	}
	if err := seedTenant(ctx, deps, set); err != nil {
		return err
	}
	l := &local{template: tmpl, stack: st, deps: deps, settings: set, issuers: iss, ssoIssuers: ssoIssuers}
	if err := l.subscribe(); err != nil {
		return err
	}
	// The jobs a stopped stack left get a run again, as Lambda's retries
	// would give them (with AWS_ENDPOINT_URL the stack delivers no S3
	// events: nothing would run them; without a state folder each start is
	// a new deployment).
	if !st.External && set.StateDir != "" {
		if n, err := l.resumeJobs(ctx, nil); err != nil {
			slog.Error("localstack", "err", err)
		} else if n > 0 {
			slog.Info("localstack: jobs left by a stopped stack resumed", "operations", n)
		}
	}
	h, err := l.handler()
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", net.JoinHostPort("0.0.0.0", set.Port))
	if err != nil {
		return fmt.Errorf("listen on port %s: %w", set.Port, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	l.printBanner(set)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// A second signal now ends the process at once; DynamoDB Local dies
	// with it (the stack asks the kernel for that).
	stop()
	slog.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shut the server down: %w", err)
	}
	return nil
}

// seedTenant creates the local tenant with its service key (or gives an
// existing one that key again), sending text messages to UK and North
// American numbers only, as a real tenant should name its countries.
func seedTenant(ctx context.Context, deps *whole.Deps, set settings) error {
	seeded, err := deps.Tenants.Seed(ctx, set.TenantID, "Local tenant", set.ServiceToken)
	if err != nil {
		return fmt.Errorf("seed tenant %s: %w", set.TenantID, err)
	}
	if len(seeded.Settings.SMSCountryCodes) == 0 {
		s := seeded.Settings
		s.SMSCountryCodes = localSMSCountryCodes
		if err := deps.Tenants.Store.UpdateSettings(ctx, set.TenantID, s, deps.Clock.Now()); err != nil {
			return fmt.Errorf("seed tenant %s: %w", set.TenantID, err)
		}
	}
	return nil
}

// local is one running local stack: the template it was built from, the
// storage and the application. Local-only endpoints (delivering S3 events
// to the template's S3 triggers, running scheduled functions on demand) are
// methods on it registered in handler.
type local struct {
	template *sam.Template
	stack    *stack.Stack
	deps     *whole.Deps
	settings settings
	routes   []sam.Route
	// issuers are the local SSO issuers (sso.go) and ssoIssuers the
	// issuer each provider's sign-in uses (theirs unless the environment
	// named another).
	issuers    *issuers
	ssoIssuers map[string]string
}

// adminPrefix is the path prefix of the local-only endpoints; no HttpApi
// route of the template uses it.
const adminPrefix = "/_local"

// handler returns the HTTP handler of the whole stack: the API Gateway
// stand-in for the template's routes, under /_local/ the local-only
// endpoints, and the interactive API reference at /docs (docs.go), all
// behind the template's CORS configuration as API Gateway applies it
// (cors.go). Anything else gets the gateway's JSON 404.
func (l *local) handler() (http.Handler, error) {
	gw, err := l.gateway()
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", gw)
	mux.HandleFunc("GET "+adminPrefix+"/health", l.health)
	mux.HandleFunc("GET "+adminPrefix+"/media/{key...}", l.media)
	mux.HandleFunc("POST "+adminPrefix+"/schedules/{function}", l.schedule)
	if l.issuers != nil {
		l.issuers.register(mux)
	}
	mux.HandleFunc("GET /docs", l.docs)
	mux.Handle("GET /docs/{$}", http.RedirectHandler("/docs", http.StatusFound))
	mux.HandleFunc("GET /docs/{file}", l.docsFile)
	if c := corsFromTemplate(l.template); c != nil {
		return c.handler(mux), nil
	}
	return mux, nil
}

// media serves an object of the media bucket (profile photos), as the media
// host (MEDIA_URL) does in AWS.
func (l *local) media(w http.ResponseWriter, r *http.Request) {
	out, err := l.deps.S3.GetObject(r.Context(), &s3.GetObjectInput{
		Bucket: aws.String(l.deps.Config.Buckets.Media),
		Key:    aws.String(r.PathValue("key")),
	})
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"NOT_FOUND","message":"Not Found"}`)
		return
	}
	defer out.Body.Close()
	if out.ContentType != nil {
		w.Header().Set("Content-Type", *out.ContentType)
	}
	_, _ = io.Copy(w, out.Body)
}

// gateway registers every HttpApi route of every template function with
// the function's Lambda handler.
func (l *local) gateway() (*apigw.Gateway, error) {
	gw := apigw.New()
	for _, f := range l.template.Functions {
		if len(f.Routes) == 0 {
			continue
		}
		h, err := l.deps.LambdaHandler(f.Name)
		if err != nil {
			return nil, fmt.Errorf("function %s (%s) has HttpApi routes but no handler: %w", f.Name, f.LogicalID, err)
		}
		for _, r := range f.Routes {
			if err := route(gw, f, r, h); err != nil {
				return nil, err
			}
			l.routes = append(l.routes, r)
		}
	}
	return gw, nil
}

// route registers one route, turning what the gateway cannot serve (and the
// mux's panic on conflicting routes) into an error. Its invocations end at
// the function's template Timeout, as in Lambda.
func route(gw *apigw.Gateway, f sam.Function, r sam.Route, h apigw.LambdaHandler) (err error) {
	method := strings.ToUpper(r.Method)
	switch {
	case method == "":
		return fmt.Errorf("function %s, event %s: no Method", f.LogicalID, r.Event)
	case method == "ANY":
		return fmt.Errorf("function %s, event %s: Method ANY is not served locally", f.LogicalID, r.Event)
	case !strings.HasPrefix(r.Path, "/"):
		return fmt.Errorf("function %s, event %s: path %q does not start with /", f.LogicalID, r.Event, r.Path)
	case strings.HasPrefix(r.Path, adminPrefix+"/"):
		return fmt.Errorf("function %s, event %s: path %q is reserved for the local stack", f.LogicalID, r.Event, r.Path)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("function %s, event %s: route %s %s: %v", f.LogicalID, r.Event, method, r.Path, p)
		}
	}()
	gw.RouteFunction(method, r.Path, h, f.Timeout)
	return nil
}

// subscribe registers the S3 handler of every function with S3 triggers,
// so the stack's S3 delivers their ObjectCreated events (and the records
// of those that failed after the retries), and the stream handler of every
// function with DynamoDB events, so the stack polls the tables' streams
// for them as Lambda's event source mappings do (the rules function runs on
// new actions), and the queue handler of every function with SQS events,
// so the stack's SQS stand-in delivers their batches (the webhook sender).
func (l *local) subscribe() error {
	for _, f := range l.template.Functions {
		if len(f.QueueEvents) == 0 {
			continue
		}
		h, err := l.deps.QueueHandler(f.Name)
		if err != nil {
			return fmt.Errorf("function %s (%s) has SQS events but no handler: %w", f.Name, f.LogicalID, err)
		}
		l.stack.OnQueue(f.Name, h)
	}
	for _, f := range l.template.Functions {
		if len(f.Streams) == 0 {
			continue
		}
		h, err := l.deps.StreamHandler(f.Name)
		if err != nil {
			return fmt.Errorf("function %s (%s) has DynamoDB stream events but no handler: %w", f.Name, f.LogicalID, err)
		}
		l.stack.OnStream(f.Name, h)
	}
	for _, f := range l.template.Functions {
		if len(f.S3Events) == 0 {
			continue
		}
		h, err := l.deps.S3Handler(f.Name)
		if err != nil {
			return fmt.Errorf("function %s (%s) has S3 triggers but no handler: %w", f.Name, f.LogicalID, err)
		}
		l.stack.OnS3(f.Name, h)
		// A function that takes other events too (the jobs function) gets
		// the destination records of the events it failed on, as from its
		// OnFailure queue.
		if fh, err := l.deps.EventHandler(f.Name); err == nil {
			l.stack.OnS3Failure(f.Name, fh)
		}
	}
	return nil
}

// schedule runs a function of the template that an EventBridge schedule
// invokes (the daily expiry), now, with a scheduled event as EventBridge
// sends it, and answers what the run reported: POST
// /_local/schedules/expiry. The run ends at the function's Timeout.
func (l *local) schedule(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("function")
	f, ok := l.template.Function(name)
	w.Header().Set("Content-Type", "application/json")
	if !ok || len(f.Schedules) == 0 {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"code":"NOT_FOUND","message":"no scheduled function of that name"}`)
		return
	}
	h, err := l.deps.ScheduleHandler(name)
	if err != nil {
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(web.ErrorBody{Code: "NOT_FOUND", Message: err.Error()})
		return
	}
	now := time.Now().UTC()
	ev := events.EventBridgeEvent{
		Version: "0", ID: fmt.Sprintf("local-%d", now.UnixNano()), DetailType: "Scheduled Event", Source: "aws.events",
		AccountID: "000000000000", Time: now, Region: "us-east-1",
		Resources: []string{"arn:aws:events:us-east-1:000000000000:rule/local-" + f.LogicalID}, Detail: json.RawMessage("{}"),
	}
	rep, err := stack.Within(r.Context(), f.Timeout, func(ctx context.Context) (any, error) { return h(ctx, ev) })
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": err.Error(), "report": rep})
		return
	}
	_ = json.NewEncoder(w).Encode(rep)
}

// health reports that the stack is up and where its storage is.
func (l *local) health(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status":   "ok",
		"dynamodb": l.stack.DynamoDBEndpoint,
		"s3":       l.stack.S3Endpoint,
		"sqs":      l.stack.SQSEndpoint,
		"routes":   len(l.routes),
	})
}

func (l *local) printBanner(set settings) {
	base := "http://localhost:" + set.Port
	var b strings.Builder
	fmt.Fprintf(&b, "\nLoyalty platform running at %s\n", base)
	storage := "in memory"
	switch {
	case l.stack.External:
		storage = "AWS_ENDPOINT_URL"
	case os.Getenv(stack.EnvDynamoDBEndpoint) != "":
		storage = stack.EnvDynamoDBEndpoint
	case set.DynamoDBDir != "":
		storage = "on disk: " + set.DynamoDBDir
	}
	fmt.Fprintf(&b, "  DynamoDB      %s (%s)\n", l.stack.DynamoDBEndpoint, storage)
	if l.stack.External {
		fmt.Fprintf(&b, "  S3            %s\n", l.stack.S3Endpoint)
	} else {
		fmt.Fprintf(&b, "  S3            %s (in memory)\n", l.stack.S3Endpoint)
		fmt.Fprintf(&b, "  SQS           %s (in memory, %d queues)\n", l.stack.SQSEndpoint, len(l.template.Queues))
	}
	if set.StateDir != "" {
		fmt.Fprintf(&b, "  State         %s (stream positions)\n", set.StateDir)
	}
	fmt.Fprintf(&b, "  Tenant        %s: %s\n", web.HeaderTenant, set.TenantID)
	fmt.Fprintf(&b, "  Service token %s: %s\n", web.HeaderServiceToken, set.ServiceToken)
	fmt.Fprintf(&b, "  API reference %s/docs (the OpenAPI document: %s/openapi.json)\n", base, base)
	for _, p := range ssoProviders {
		if u := l.ssoIssuers[p]; u != "" {
			fmt.Fprintf(&b, "  SSO %-9s %s\n", p, u)
		}
	}
	if l.issuers != nil {
		fmt.Fprintf(&b, "  SSO tokens    curl -s -X POST %s%s/sso/google/token -d '{\"aud\":\"<a client id of PUT /tenant settings.ssoClientIds>\",\"sub\":\"dev-1\"}'\n", base, adminPrefix)
	}
	fmt.Fprintf(&b, "  Routes:\n")
	routes := slices.Clone(l.routes)
	slices.SortFunc(routes, func(a, b sam.Route) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Method, b.Method))
	})
	for _, r := range routes {
		fmt.Fprintf(&b, "    %-7s %s\n", r.Method, r.Path)
	}
	for _, f := range l.template.Functions {
		if len(f.Schedules) > 0 {
			fmt.Fprintf(&b, "  Scheduled: curl -X POST %s%s/schedules/%s   (%s)\n", base, adminPrefix, f.Name, strings.Join(f.Schedules, ", "))
		}
	}
	fmt.Fprintf(&b, "\nTry:\n  curl -s -X POST %s/users -H '%s: %s' -H 'content-type: application/json' \\\n"+
		"    -d '{\"firstName\":\"Ada\",\"lastName\":\"Tester\",\"credentials\":[{\"provider\":\"EMAIL\",\"id\":\"ada@example.com\"}],\"password\":\"correct-horse-9\"}'\n\n",
		base, web.HeaderTenant, set.TenantID)
	fmt.Fprintf(&b, "Ctrl-C stops everything.\n\n")
	_, _ = os.Stdout.WriteString(b.String())
}
