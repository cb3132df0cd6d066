// Package testkit runs the platform for integration tests: one storage
// stack (DynamoDB Local and an in-process S3) per test binary, and for each
// test its own platform (New builds a whole.Deps per harness), tenant,
// manual clock, message outbox, client address, and an HTTP server that
// sends every request through the API Gateway stand-in and the functions'
// real Lambda handlers. Every response is checked against the OpenAPI
// document.
//
// # Parallel tests
//
// A test that works through its own harness is isolated by it and calls
// t.Parallel() first: its tenant keys every item and job file it touches,
// and what it sets (hooks and knobs on h.Deps' services, h.Clock,
// h.Deps.Jobs) is its own. OnS3 and CaptureS3 take only the S3 events of
// the harness's tenants, so tests that run or capture the jobs function
// themselves are parallel too; the stream handlers serve the tenants of
// every test of the binary at once, and WaitStreams waits for the records
// of parallel tests as well. Subtests that make their own harness are
// parallel; subtests that share their parent's are parallel only when
// independent of each other and of what the parent checks after them. A
// test of pure logic (validation, parsing, arithmetic) makes no harness at
// all: a table over the function.
//
// A test stays serial, with a comment saying why, when it reaches beyond
// its harness: it sets an environment variable (t.Setenv panics in a
// parallel test), a package-level variable (metrics' clock) or the
// default logger (slog.SetDefault, which every New sets too: notify's
// TestCaps, checkin's and rule's log captures); it counts or replaces what
// the stack runs for every tenant (CountFunction in access's
// TestPoliciesAllowCalls, Stack().OnS3 or OnStream); it works on a tenant
// no harness owns (the events' fixed tenant "local"); or it loads
// DynamoDB Local with many concurrent transactions (idempotency's 100
// clients: DynamoDB Local runs one transaction at a time, and with other
// tests' alongside some wait past its lock timeout and fail with a 500).
// Go runs a package's serial tests first, one at a time, and its parallel
// tests after them, so a serial test never overlaps a parallel one of its
// package.
package testkit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/loyalty-platform/platform/localstack/stack"
	"github.com/loyalty-platform/platform/shared/aws/apigw"
	"github.com/loyalty-platform/platform/shared/contract/openapi"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/auth"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

var (
	stk      *stack.Stack
	stkErr   error
	stkOnce  sync.Once
	contract *openapi.Doc
)

// Main runs a package's tests with the shared stack and stops it after:
// call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if stk != nil {
		_ = stk.Close()
	}
	os.Exit(code)
}

// Stack returns the storage stack of this test binary, starting it on first
// use (DynamoDB Local from DYNAMODB_ENDPOINT when `make test` started one).
func Stack(t testing.TB) *stack.Stack {
	t.Helper()
	stkOnce.Do(func() {
		stk, stkErr = stack.Start(context.Background(), stack.Options{})
		if stkErr == nil {
			stkErr = stk.Setenv()
		}
		if stkErr == nil {
			contract, stkErr = openapi.Load()
		}
		if stkErr == nil {
			stkErr = subscribeS3(stk)
		}
		if stkErr == nil {
			stkErr = subscribeStreams(stk)
		}
		if stkErr == nil {
			stkErr = subscribeQueues(stk)
		}
	})
	if stkErr != nil {
		t.Fatalf("start test stack: %v", stkErr)
	}
	return stk
}

// subscribeS3 gives the stack's S3 the handlers of the functions with S3
// triggers (the jobs function), built once per test binary with the real
// clock: like a deployed function, they run apart from the test's own
// dependencies. Tests wait for a job with WaitOperation.
func subscribeS3(st *stack.Stack) error {
	deps, err := whole.New(context.Background(), wire.ConfigFromEnv())
	if err != nil {
		return fmt.Errorf("build the S3-triggered functions: %w", err)
	}
	for _, f := range st.Template.Functions {
		if len(f.S3Events) == 0 {
			continue
		}
		h, err := deps.S3Handler(f.Name)
		if err != nil {
			return fmt.Errorf("function %s has S3 triggers: %w", f.Name, err)
		}
		routed := routeS3(f.Name, h)
		st.OnS3(f.Name, routed)
		defaultS3[f.Name] = routed
	}
	return nil
}

// Harness is one test's platform: its own tenant, clock and outbox.
type Harness struct {
	T          testing.TB
	Deps       *whole.Deps
	Clock      *clock.Manual
	Outbox     *notify.Outbox
	Server     *httptest.Server
	Template   *sam.Template
	Tenant     tenant.Tenant
	ServiceKey string
	// SkipContract turns off the OpenAPI check of responses (for tests of
	// deliberately broken requests to routes the document does not know).
	SkipContract bool
	// ServerErrorsExpected lets a 5xx answer pass (a fault-injection test
	// sets it around the requests whose failure it causes); otherwise any
	// 5xx fails the test.
	ServerErrorsExpected bool
	// Peer is the client address the harness's requests come from (API
	// Gateway's source IP): each harness has its own, so that the
	// per-address allowance of anonymous calls of one test does not meet
	// another's. From sends a request from another address.
	Peer string

	mu sync.Mutex
	// s3 are the handlers that take the S3 events of the harness's
	// tenants instead of the stack's functions (OnS3), by function.
	s3 map[string]stack.S3Handler
}

// headerPeer names, on a request the harness sends, the client address
// the API Gateway stand-in sees as the request's TCP peer.
const headerPeer = "x-test-peer"

// From returns the header that sends a request from client address addr.
func From(addr string) Headers { return Headers{headerPeer, addr} }

// NewPeer returns a client address no other harness or test uses (one of
// the IPv6 documentation networks, a /64 of its own).
func NewPeer() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("2001:db8:%x:%x:%x::1", uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]), uint16(b[4])<<8|uint16(b[5]))
}

// withPeer gives a request the client address its headerPeer names.
func withPeer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get(headerPeer); p != "" {
			r.RemoteAddr = net.JoinHostPort(p, "40000")
			r.Header.Del(headerPeer)
		}
		next.ServeHTTP(w, r)
	})
}

// New starts a harness with a fresh tenant.
func New(t testing.TB) *Harness {
	t.Helper()
	return newHarness(t, "")
}

// newHarness starts a harness with a fresh tenant whose title ends with
// suffix.
func newHarness(t testing.TB, suffix string) *Harness {
	t.Helper()
	st := Stack(t)
	ctx := context.Background()
	deps, err := whole.New(ctx, wire.ConfigFromEnv())
	if err != nil {
		t.Fatalf("build deps: %v", err)
	}
	h := &Harness{T: t, Deps: deps, Clock: &clock.Manual{}, Outbox: &notify.Outbox{}, Template: st.Template}
	deps.Clock, deps.Notifier, deps.Pusher = h.Clock, h.Outbox, h.Outbox
	deps.PasswordCost = TestPasswordCost
	if err := deps.Wire(); err != nil {
		t.Fatalf("wire the functions: %v", err)
	}
	gw := apigw.New()
	for _, f := range st.Template.Functions {
		if len(f.Routes) == 0 {
			continue
		}
		handler, err := deps.LambdaHandler(f.Name)
		if err != nil {
			t.Fatalf("function %s: %v", f.Name, err)
		}
		for _, r := range f.Routes {
			gw.Route(r.Method, r.Path, handler)
		}
	}
	h.Server = httptest.NewServer(withPeer(countCalls(gw)))
	h.Peer = NewPeer()
	t.Cleanup(h.Server.Close)
	h.Tenant, h.ServiceKey = h.newTenant(tenant.Settings{InitialPoints: 0}, suffix)
	return h
}

// NewTenant creates another tenant and returns it with its service key.
func (h *Harness) NewTenant(settings tenant.Settings) (tenant.Tenant, string) {
	h.T.Helper()
	return h.newTenant(settings, "")
}

func (h *Harness) newTenant(settings tenant.Settings, suffix string) (tenant.Tenant, string) {
	h.T.Helper()
	t, key, err := h.Deps.Tenants.Create(context.Background(), tenant.CreateInput{Title: "Test " + h.T.Name() + suffix, Settings: settings})
	if err != nil {
		h.T.Fatalf("create tenant: %v", err)
	}
	own.Store(t.ID, h)
	return t, key
}

// SetSettings replaces the harness tenant's settings.
func (h *Harness) SetSettings(s tenant.Settings) {
	h.T.Helper()
	if err := h.Deps.Tenants.Store.UpdateSettings(context.Background(), h.Tenant.ID, s, h.Clock.Now()); err != nil {
		h.T.Fatalf("update settings: %v", err)
	}
}

// Headers is a list of header name/value pairs.
type Headers []string

// Admin returns the headers of the tenant's service key.
func (h *Harness) Admin() Headers {
	return Headers{"x-service-auth-token", h.ServiceKey, "x-application-id", h.Tenant.ID}
}

// Anon returns the headers of an anonymous caller of the tenant.
func (h *Harness) Anon() Headers { return Headers{"x-application-id", h.Tenant.ID} }

// Token returns the headers of a session token.
func Token(token string) Headers { return Headers{"Authorization", "Token " + token} }

// Basic returns the headers of a Basic login.
func (h *Harness) Basic(user, password, provider string) Headers {
	hs := Headers{"x-application-id", h.Tenant.ID, "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))}
	if provider != "" {
		hs = append(hs, "AuthProvider", provider)
	}
	return hs
}

// Resp is a response read whole.
type Resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request. body is JSON-encoded unless it is a string or []byte
// (sent as is). Every response is checked against the OpenAPI document.
func (h *Harness) Do(method, path string, body any, headers ...Headers) *Resp {
	h.T.Helper()
	var rd io.Reader
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		j, err := json.Marshal(b)
		if err != nil {
			h.T.Fatalf("encode body: %v", err)
		}
		raw = j
	}
	if raw != nil {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, h.Server.URL+path, rd)
	if err != nil {
		h.T.Fatalf("new request: %v", err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set(headerPeer, h.Peer)
	for _, hs := range headers {
		for i := 0; i+1 < len(hs); i += 2 {
			req.Header.Set(hs[i], hs[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		h.T.Fatalf("read response: %v", err)
	}
	r := &Resp{Status: resp.StatusCode, Header: resp.Header, Body: out}
	if !h.SkipContract && contract != nil {
		vreq, _ := http.NewRequest(method, h.Server.URL+path, bytes.NewReader(raw))
		vreq.Header = req.Header.Clone()
		if err := contract.ValidateResponse(vreq, r.Status, r.Header, r.Body); err != nil {
			h.T.Errorf("%s %s: response %d does not match the OpenAPI document: %v\nbody: %s", method, path, r.Status, err, truncate(out))
		}
	}
	if r.Status >= 500 && !h.ServerErrorsExpected {
		h.T.Errorf("%s %s: server error %d: %s", method, path, r.Status, truncate(out))
	}
	return r
}

// JSON decodes the body into v.
func (r *Resp) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %q: %v", truncate(r.Body), err)
	}
}

// Map decodes the body as a JSON object.
func (r *Resp) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Expect fails the test unless the status is want (and, for errors, the code
// is code when code is not empty).
func (r *Resp) Expect(t testing.TB, want int, code string) *Resp {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, want, truncate(r.Body))
	}
	if code != "" {
		var e struct{ Code, Message string }
		_ = json.Unmarshal(r.Body, &e)
		if e.Code != code {
			t.Fatalf("code = %q, want %q; body: %s", e.Code, code, truncate(r.Body))
		}
		if e.Message == "" {
			t.Fatalf("error without message: %s", truncate(r.Body))
		}
	}
	return r
}

func truncate(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		s = s[:2000] + "..."
	}
	return strings.TrimSpace(s)
}

// Sprintf is fmt.Sprintf, for building paths.
func Sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// TestPasswordCost is the cost of the password hashes the harness's
// platform makes (64 KiB, 1 iteration, instead of the functions' 19 MiB and
// 2): the suite signs up a user with a password in most of its tests, and
// under the race detector every 19 MiB hash costs about 240 ms of
// CPU. account's own tests check the functions' cost.
var TestPasswordCost = auth.PasswordCost{MemoryKiB: 64, Time: 1}
