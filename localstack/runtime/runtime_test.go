package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/localstack/runtime"
)

// echoBin is the host build of testdata/echo, made once by TestMain.
var echoBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runtime-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	echoBin = filepath.Join(dir, "echo", "bootstrap")
	if err := buildLambda(echoBin, "./testdata/echo"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// buildLambda builds the Lambda program in pkg (relative to this package's
// directory) for the host, as the Makefile does.
func buildLambda(out, pkg string) error {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// testEnv is a small, fixed base environment: the functions under test must
// not depend on the environment of whoever runs the tests.
func testEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}, extra...)
}

// invoke runs echoBin on event, with the function's logs in the test's
// output.
func invoke(t *testing.T, ctx context.Context, event string, env []string, timeout time.Duration) (resp, fnErr []byte, err error) {
	t.Helper()
	return runtime.Invoker{Output: t.Output()}.Invoke(ctx, echoBin, []byte(event), env, timeout)
}

// echoResponse mirrors the response of testdata/echo.
type echoResponse struct {
	Event       json.RawMessage   `json:"event"`
	RequestID   string            `json:"requestId"`
	FunctionARN string            `json:"functionArn"`
	HasDeadline bool              `json:"hasDeadline"`
	TraceID     string            `json:"traceId"`
	Env         map[string]string `json:"env"`
}

// lambdaError is the error payload of a failed invocation.
type lambdaError struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
}

func TestInvokeResponse(t *testing.T) {
	t.Parallel()
	env := testEnv(
		"ECHO_PASSED=yes",
		"AWS_REGION=eu-west-1",
		"AWS_LAMBDA_FUNCTION_NAME=overridden", // reserved: the harness sets it
	)
	resp, fnErr, err := runtime.Invoke(context.Background(), echoBin, []byte(`{"hello":"world"}`), env, 30*time.Second)
	if err != nil || fnErr != nil {
		t.Fatalf("Invoke: err %v, function error %s", err, fnErr)
	}
	var got echoResponse
	if err := json.Unmarshal(resp, &got); err != nil {
		t.Fatalf("response %s: %v", resp, err)
	}
	if string(got.Event) != `{"hello":"world"}` {
		t.Errorf("event = %s, want the one sent", got.Event)
	}
	if len(got.RequestID) != 36 {
		t.Errorf("request id = %q, want a UUID", got.RequestID)
	}
	if want := "arn:aws:lambda:eu-west-1:000000000000:function:echo"; got.FunctionARN != want {
		t.Errorf("function ARN = %q, want %q", got.FunctionARN, want)
	}
	if !got.HasDeadline {
		t.Error("handler context has no deadline")
	}
	if !strings.HasPrefix(got.TraceID, "Root=1-") {
		t.Errorf("trace id = %q, want an X-Ray trace header", got.TraceID)
	}
	for k, want := range map[string]string{
		"ECHO_PASSED":                     "yes",
		"AWS_REGION":                      "eu-west-1",
		"AWS_DEFAULT_REGION":              "eu-west-1",
		"AWS_LAMBDA_FUNCTION_NAME":        "echo",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"_HANDLER":                        "bootstrap",
	} {
		if got.Env[k] != want {
			t.Errorf("env %s = %q, want %q", k, got.Env[k], want)
		}
	}
	if api := got.Env["AWS_LAMBDA_RUNTIME_API"]; !strings.HasPrefix(api, "127.0.0.1:") {
		t.Errorf("AWS_LAMBDA_RUNTIME_API = %q, want 127.0.0.1:<port>", api)
	}
}

func TestInitDone(t *testing.T) {
	t.Parallel()
	var calls []time.Duration
	var mu sync.Mutex
	inv := runtime.Invoker{Output: t.Output(), InitDone: func(d time.Duration) {
		mu.Lock()
		calls = append(calls, d)
		mu.Unlock()
	}}
	start := time.Now()
	if _, fnErr, err := inv.Invoke(context.Background(), echoBin, []byte(`{}`), testEnv(), 30*time.Second); err != nil || fnErr != nil {
		t.Fatalf("Invoke: err %v, function error %s", err, fnErr)
	}
	total := time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 {
		t.Fatalf("InitDone called %d times, want once", len(calls))
	}
	if got := calls[0]; got <= 0 || got > total {
		t.Errorf("init time = %s, want between 0 and the whole invocation (%s)", got, total)
	}
}

func TestInvokerOptions(t *testing.T) {
	t.Parallel()
	inv := runtime.Invoker{FunctionName: "custom", MemoryMB: 1024, Version: "7", Output: t.Output()}
	resp, fnErr, err := inv.Invoke(context.Background(), echoBin, []byte(`{}`), testEnv(), 30*time.Second)
	if err != nil || fnErr != nil {
		t.Fatalf("Invoke: err %v, function error %s", err, fnErr)
	}
	var got echoResponse
	if err := json.Unmarshal(resp, &got); err != nil {
		t.Fatalf("response %s: %v", resp, err)
	}
	for k, want := range map[string]string{
		"AWS_REGION":                      runtime.DefaultRegion,
		"AWS_LAMBDA_FUNCTION_NAME":        "custom",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
		"AWS_LAMBDA_FUNCTION_VERSION":     "7",
	} {
		if got.Env[k] != want {
			t.Errorf("env %s = %q, want %q", k, got.Env[k], want)
		}
	}
}

func TestInvokeFunctionError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		event    string
		wantType string
		wantMsg  string
	}{
		{"returned error", `{"fail":"boom"}`, "errorString", "boom"},
		{"panic", `{"panic":"argh"}`, "string", "argh"},
		{"process exit", `{"exit":3}`, "Runtime.ExitError", "exit status 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, fnErr, err := invoke(t, context.Background(), tt.event, testEnv(), 30*time.Second)
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			if resp != nil {
				t.Errorf("response = %s, want none", resp)
			}
			var got lambdaError
			if err := json.Unmarshal(fnErr, &got); err != nil {
				t.Fatalf("function error %q: %v", fnErr, err)
			}
			if got.Type != tt.wantType || !strings.Contains(got.Message, tt.wantMsg) {
				t.Errorf("function error = %+v, want type %q and a message containing %q", got, tt.wantType, tt.wantMsg)
			}
		})
	}
}

func TestInvokeInitError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		init    string
		wantMsg string
	}{
		{"exit before next", "exit", "exit status 1"},
		{"posted init error", "post", "Echo.InitError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, fnErr, err := invoke(t, context.Background(), `{}`, testEnv("ECHO_INIT="+tt.init), 30*time.Second)
			if !errors.Is(err, runtime.ErrInit) {
				t.Fatalf("Invoke: err %v (response %s, function error %s), want ErrInit", err, resp, fnErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestInvokeTimeout(t *testing.T) {
	t.Parallel()
	// The handler ignores its context, so only the harness can end the run.
	start := time.Now()
	_, _, err := invoke(t, context.Background(), `{"hang":true}`, testEnv(), 300*time.Millisecond)
	if !errors.Is(err, runtime.ErrTimeout) {
		t.Fatalf("Invoke: err %v, want ErrTimeout", err)
	}
	// Invoke must not wait for the process, which would never exit.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("Invoke took %s after a 300ms timeout", d)
	}
}

func TestInvokeContextCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, _, err := invoke(t, ctx, `{"hang":true}`, testEnv(), time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, runtime.ErrTimeout) {
		t.Fatalf("Invoke: err %v, want the context's error", err)
	}
}

func TestInvokeMissingBinary(t *testing.T) {
	t.Parallel()
	_, _, err := runtime.Invoke(context.Background(), filepath.Join(t.TempDir(), "bootstrap"), []byte(`{}`), nil, time.Second)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Invoke: err %v, want a not-exist error", err)
	}
}

// TestTenantsRejectsUnknownAction runs the real tenants function, built for
// the host. The handler rejects an unknown action before it touches
// DynamoDB, and the endpoint points at a closed port, so no database is
// needed and no AWS account can be reached.
func TestTenantsRejectsUnknownAction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tenants function")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "tenants", "bootstrap")
	if err := buildLambda(bin, "../../functions/tenants"); err != nil {
		t.Fatal(err)
	}
	env := testEnv(
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test",
		"AWS_SECRET_ACCESS_KEY=test",
		"AWS_ENDPOINT_URL=http://127.0.0.1:1",
		"AWS_EC2_METADATA_DISABLED=true",
		"TENANTS_TABLE=Tenants",
		"NOTIFIER=log",
	)
	inv := runtime.Invoker{Output: t.Output()}
	resp, fnErr, err := inv.Invoke(context.Background(), bin, []byte(`{"action":"bogus"}`), env, 30*time.Second)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	if fnErr == nil {
		t.Fatalf("response = %s, want a function error", resp)
	}
	var got lambdaError
	if err := json.Unmarshal(fnErr, &got); err != nil {
		t.Fatalf("function error %q: %v", fnErr, err)
	}
	if !strings.Contains(got.Message, "action") || !strings.Contains(got.Message, "bogus") {
		t.Errorf("function error = %+v, want a message naming the action and %q", got, "bogus")
	}
}
