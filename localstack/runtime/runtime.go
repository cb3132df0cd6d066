// Package runtime is a local stand-in for the AWS Lambda Runtime API. It
// starts a function's bootstrap binary as a child process, serves it exactly
// one event over the Runtime API (the endpoints the aws-lambda-go runtime
// client uses) and returns what the function posts back. It needs neither
// Docker nor the Lambda Runtime Interface Emulator.
//
// Runtime API reference:
// https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html
package runtime

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrInit is wrapped by the error Invoke returns when the function fails
// before it asks for its event: it posts to /runtime/init/error or its
// process exits during initialisation.
var ErrInit = errors.New("function init failed")

// ErrTimeout is wrapped by the error Invoke returns when the function posts
// no result before its deadline.
var ErrTimeout = errors.New("function timed out")

// Runtime API paths and headers, as in the Lambda documentation and the
// aws-lambda-go runtime client.
const (
	apiPrefix = "/2018-06-01/runtime"

	headerRequestID   = "Lambda-Runtime-Aws-Request-Id"
	headerDeadlineMS  = "Lambda-Runtime-Deadline-Ms"
	headerFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID     = "Lambda-Runtime-Trace-Id"

	// The aws-lambda-go client reports an error that happens while it
	// streams a response body in these trailers; the body trailer holds
	// the base64-encoded error payload.
	trailerErrorType = "Lambda-Runtime-Function-Error-Type"
	trailerErrorBody = "Lambda-Runtime-Function-Error-Body"
)

// Defaults of the Invoker fields.
const (
	DefaultMemoryMB = 256
	DefaultVersion  = "$LATEST"
	DefaultRegion   = "us-east-1"
	defaultAccount  = "000000000000"
)

// Invoker runs function binaries. Its zero value is ready to use; the
// package-level Invoke uses the zero value.
type Invoker struct {
	// FunctionName is the function's name (AWS_LAMBDA_FUNCTION_NAME). When
	// empty it is derived from the binary's path: the name of the
	// directory holding a file called "bootstrap" (build/users/bootstrap
	// gives "users"), otherwise the file's name.
	FunctionName string
	// MemoryMB is reported in AWS_LAMBDA_FUNCTION_MEMORY_SIZE; zero means
	// DefaultMemoryMB. The harness does not enforce it.
	MemoryMB int
	// Version is reported in AWS_LAMBDA_FUNCTION_VERSION; empty means
	// DefaultVersion.
	Version string
	// Output receives the function's stdout and stderr (its logs); nil
	// means os.Stderr, so that a caller's stdout holds only the result.
	Output io.Writer
	// InitDone, when set, is called once with the function's
	// initialisation time: from just before its process is started to its
	// first GET /invocation/next (the cold start the benchmarks report).
	InitDone func(time.Duration)
}

// Invoke runs the Lambda bootstrap binary at binPath with the zero Invoker;
// see Invoker.Invoke.
func Invoke(ctx context.Context, binPath string, event []byte, env []string, timeout time.Duration) (resp []byte, fnErr []byte, err error) {
	return Invoker{}.Invoke(ctx, binPath, event, env, timeout)
}

// Invoke starts the Lambda bootstrap binary at binPath, delivers event to it
// as the only invocation and kills the process once it has answered.
//
// The process environment is env (typically os.Environ(), so that table
// names and endpoints pass through; nil means an empty base) plus the
// variables Lambda reserves: AWS_LAMBDA_RUNTIME_API, _HANDLER=bootstrap,
// AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
// AWS_LAMBDA_FUNCTION_VERSION, the log group and stream names and
// LAMBDA_TASK_ROOT, which override env. AWS_REGION and AWS_DEFAULT_REGION
// are added when env sets neither of them (DefaultRegion).
//
// timeout bounds the whole run, initialisation included, and is also the
// deadline the handler's context carries. Invoke returns exactly one of:
//   - resp, the response payload, when the function succeeded;
//   - fnErr, the error payload ({"errorMessage": ..., "errorType": ...}),
//     when the handler failed, panicked or the process exited while it
//     handled the event (errorType "Runtime.ExitError", as in Lambda);
//   - err, when the function could not be run: it wraps ErrInit when the
//     function failed to initialise, ErrTimeout when it did not answer in
//     time, and ctx.Err() when ctx was cancelled first.
func (iv Invoker) Invoke(ctx context.Context, binPath string, event []byte, env []string, timeout time.Duration) (resp []byte, fnErr []byte, err error) {
	if timeout <= 0 {
		return nil, nil, fmt.Errorf("invoke %s: timeout must be positive, not %s", binPath, timeout)
	}
	bin, err := filepath.Abs(binPath)
	if err != nil {
		return nil, nil, fmt.Errorf("invoke %s: %w", binPath, err)
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, nil, fmt.Errorf("function binary: %w", err)
	}
	name := iv.functionName(bin)
	region := lookupEnv(env, "AWS_REGION")
	if region == "" {
		region = lookupEnv(env, "AWS_DEFAULT_REGION")
	}
	if region == "" {
		region = DefaultRegion
	}

	start := time.Now()
	deadline := start.Add(timeout)
	srv := &server{
		event:     event,
		requestID: newRequestID(),
		deadline:  deadline,
		arn:       fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", region, defaultAccount, name),
		traceID:   newTraceID(start),
		delivered: make(chan struct{}),
		results:   make(chan result, 1),
		done:      make(chan struct{}),
		initDone:  iv.InitDone,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("%s: listen for the runtime API: %w", name, err)
	}
	httpSrv := &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second}
	// Set before the server goroutine starts, which reads it; the process
	// starts a few microseconds later.
	srv.execStart = time.Now()
	go func() { _ = httpSrv.Serve(ln) }()
	defer func() {
		close(srv.done)
		_ = httpSrv.Close()
	}()

	out := iv.Output
	if out == nil {
		out = os.Stderr
	}
	cmd := exec.Command(bin)
	cmd.Env = iv.environ(env, ln.Addr().String(), name, region, filepath.Dir(bin), start)
	cmd.Stdout = out
	cmd.Stderr = out
	// A child that leaves its output open in a grandchild must not keep
	// Wait blocked once the function has been killed.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("%s: start %s: %w", name, bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The process is always killed: Lambda freezes or discards it after the
	// invocation, and aws-lambda-go is by then blocked asking for the next
	// event, which never comes.
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()

	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()

	select {
	case r := <-srv.results:
		return r.unpack(name)
	case waitErr := <-exited:
		// The exit closes the race with a result posted just before it:
		// the result is queued before the post is acknowledged, so before
		// the process can go on to exit.
		exited <- waitErr
		select {
		case r := <-srv.results:
			return r.unpack(name)
		default:
		}
		if !srv.wasDelivered() {
			return nil, nil, fmt.Errorf("%s: %w: process exited before asking for an event: %s", name, ErrInit, exitStatus(waitErr))
		}
		payload, _ := json.Marshal(errorPayload{
			Type:    "Runtime.ExitError",
			Message: fmt.Sprintf("RequestId: %s Error: Runtime exited with error: %s", srv.requestID, exitStatus(waitErr)),
		})
		return nil, payload, nil
	case <-timer.C:
		phase := "while handling the event"
		if !srv.wasDelivered() {
			phase = "before asking for an event"
		}
		return nil, nil, fmt.Errorf("%s: %w after %s %s", name, ErrTimeout, timeout, phase)
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("%s: %w", name, ctx.Err())
	}
}

// functionName returns the configured name or derives one from bin.
func (iv Invoker) functionName(bin string) string {
	if iv.FunctionName != "" {
		return iv.FunctionName
	}
	if filepath.Base(bin) == "bootstrap" {
		return filepath.Base(filepath.Dir(bin))
	}
	return filepath.Base(bin)
}

// environ builds the function's environment: base, the region defaults
// when base has no region, and the reserved variables, which come last so
// that they win (exec keeps the last value of a duplicated key).
func (iv Invoker) environ(base []string, api, name, region, taskRoot string, start time.Time) []string {
	memory := iv.MemoryMB
	if memory <= 0 {
		memory = DefaultMemoryMB
	}
	version := iv.Version
	if version == "" {
		version = DefaultVersion
	}
	env := append([]string(nil), base...)
	if lookupEnv(base, "AWS_REGION") == "" {
		env = append(env, "AWS_REGION="+region)
	}
	if lookupEnv(base, "AWS_DEFAULT_REGION") == "" {
		env = append(env, "AWS_DEFAULT_REGION="+region)
	}
	return append(env,
		"AWS_LAMBDA_RUNTIME_API="+api,
		"_HANDLER=bootstrap",
		"AWS_LAMBDA_FUNCTION_NAME="+name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(memory),
		"AWS_LAMBDA_FUNCTION_VERSION="+version,
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/"+name,
		"AWS_LAMBDA_LOG_STREAM_NAME="+start.UTC().Format("2006/01/02")+"/["+version+"]"+randomHex(16),
		"LAMBDA_TASK_ROOT="+taskRoot,
	)
}

// lookupEnv returns the last value of key in env, or "".
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// exitStatus describes how a process ended.
func exitStatus(waitErr error) string {
	if waitErr == nil {
		return "exit status 0"
	}
	return waitErr.Error()
}

// resultKind says which endpoint a result came from.
type resultKind int

const (
	kindResponse resultKind = iota
	kindFunctionError
	kindInitError
)

// result is what the function posted.
type result struct {
	kind resultKind
	body []byte
}

// unpack turns a result into Invoke's return values.
func (r result) unpack(name string) (resp []byte, fnErr []byte, err error) {
	switch r.kind {
	case kindResponse:
		return r.body, nil, nil
	case kindFunctionError:
		return nil, r.body, nil
	default:
		return nil, nil, fmt.Errorf("%s: %w: %s", name, ErrInit, bytesOr(r.body, "(empty init error payload)"))
	}
}

// errorPayload is the Lambda error document.
type errorPayload struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
}

// server implements the Runtime API for one invocation.
type server struct {
	event     []byte
	requestID string
	deadline  time.Time
	arn       string
	traceID   string

	deliverOnce sync.Once
	delivered   chan struct{} // closed when the event has been handed out
	results     chan result   // holds the first result posted
	resultOnce  sync.Once
	done        chan struct{} // closed when Invoke returns

	execStart time.Time           // just before the process started
	initDone  func(time.Duration) // Invoker.InitDone
}

// routes returns the Runtime API handler.
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiPrefix+"/invocation/next", s.next)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/response", s.post(kindResponse))
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/error", s.post(kindFunctionError))
	mux.HandleFunc("POST "+apiPrefix+"/init/error", s.post(kindInitError))
	return mux
}

// wasDelivered reports whether the function has received its event.
func (s *server) wasDelivered() bool {
	select {
	case <-s.delivered:
		return true
	default:
		return false
	}
}

// next serves GET /invocation/next: the event the first time, and a request
// that blocks until the process is killed every time after that.
func (s *server) next(w http.ResponseWriter, r *http.Request) {
	first := false
	s.deliverOnce.Do(func() {
		first = true
		if s.initDone != nil {
			s.initDone(time.Since(s.execStart))
		}
		close(s.delivered)
	})
	if !first {
		select {
		case <-r.Context().Done():
		case <-s.done:
		}
		return
	}
	h := w.Header()
	h.Set(headerRequestID, s.requestID)
	h.Set(headerDeadlineMS, strconv.FormatInt(s.deadline.UnixMilli(), 10))
	h.Set(headerFunctionARN, s.arn)
	h.Set(headerTraceID, s.traceID)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(s.event)
}

// post serves the endpoints through which the function reports a result.
// Only the first result counts; the rest are refused as Lambda refuses a
// second result for the same invocation.
func (s *server) post(kind resultKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if kind != kindInitError && r.PathValue("id") != s.requestID {
			writeError(w, http.StatusBadRequest, "InvalidRequestID", fmt.Sprintf("unknown request id %q", r.PathValue("id")))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "InvalidRequest", fmt.Sprintf("read body: %v", err))
			return
		}
		// Trailers are only readable once the body has been read.
		if kind == kindResponse && r.Trailer.Get(trailerErrorType) != "" {
			kind = kindFunctionError
			body = streamedError(r.Trailer)
		}
		accepted := false
		s.resultOnce.Do(func() {
			accepted = true
			s.results <- result{kind: kind, body: body}
		})
		if !accepted {
			writeError(w, http.StatusForbidden, "InvalidStateTransition", "a result was already posted")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"status":"OK"}`)
	}
}

// streamedError returns the error payload that the function reported in the
// trailers of a response it failed to stream.
func streamedError(trailer http.Header) []byte {
	if b, err := base64.StdEncoding.DecodeString(trailer.Get(trailerErrorBody)); err == nil && len(b) > 0 {
		return b
	}
	b, _ := json.Marshal(errorPayload{
		Type:    trailer.Get(trailerErrorType),
		Message: "the function failed while streaming its response",
	})
	return b
}

// writeError writes a Runtime API error document.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorPayload{Type: typ, Message: msg})
}

// bytesOr returns b as a string, or alt when b is empty.
func bytesOr(b []byte, alt string) string {
	if len(b) == 0 {
		return alt
	}
	return string(b)
}

// newRequestID returns a random version 4 UUID.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// newTraceID returns an X-Ray trace header for a new, unsampled trace.
func newTraceID(t time.Time) string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", t.Unix(), randomHex(12), randomHex(8))
}

// randomHex returns n random bytes, hex-encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
