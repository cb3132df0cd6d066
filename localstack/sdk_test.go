package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/testkit"
	"github.com/loyalty-platform/platform/shared/wire"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// TestSDKs serves the local stack's handler (what make run serves: every
// route, S3 events delivered to the jobs function, the rules function on
// the actions stream) for a seeded tenant on an httptest server, and runs
// the client SDKs' tests against it, once for both: npm test in
// sdk/typescript (tsc builds the SDK to dist/, then node --test walks the
// README's scenarios), then go vet and go test in sdk/go (the pay-at-POS
// loop). LOYALTY_BASE_URL, LOYALTY_TENANT and LOYALTY_SERVICE_TOKEN name
// the server. It is skipped only when node or npm is absent.
func TestSDKs(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the TypeScript SDK cannot be built (%v)", tool, err)
		}
	}
	ts, err := filepath.Abs(filepath.Join("..", "sdk", "typescript"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ts, "node_modules", "openapi-fetch")); err != nil {
		t.Fatalf("the TypeScript SDK's packages are not installed (run npm ci in sdk/typescript, as make test does): %v", err)
	}

	ctx := context.Background()
	st := testkit.Stack(t)
	deps, err := whole.New(ctx, wire.ConfigFromEnv())
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	set := settings{TenantID: "sdk-" + hex.EncodeToString(b[:]), ServiceToken: "sdk-service-token-" + hex.EncodeToString(b[:])}
	if _, err := deps.Tenants.Seed(ctx, set.TenantID, "SDK tenant", set.ServiceToken); err != nil {
		t.Fatalf("seed tenant %s: %v", set.TenantID, err)
	}
	l := &local{template: st.Template, stack: st, deps: deps, settings: set}
	h, err := l.handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	env := []string{
		"LOYALTY_BASE_URL=" + srv.URL,
		"LOYALTY_TENANT=" + set.TenantID,
		"LOYALTY_SERVICE_TOKEN=" + set.ServiceToken,
		"GOWORK=off",
	}
	if out := sdkRun(t, ts, env, "npm", "test"); !strings.Contains(out, "fail 0") || !strings.Contains(out, "skipped 0") {
		t.Errorf("sdk/typescript: a test failed or was skipped:\n%s", out)
	}
	goSDK := filepath.Join(filepath.Dir(ts), "go")
	sdkRun(t, goSDK, env, "go", "vet", "./...")
	if out := sdkRun(t, goSDK, env, "go", "test", "-count=1", "-v", "./..."); !strings.Contains(out, "--- PASS: TestPayAtPOS") {
		t.Errorf("sdk/go TestPayAtPOS did not pass:\n%s", out)
	}
}

// sdkRun runs name with args in dir with env added, failing the test (with
// the output) when it fails or runs past 3 minutes; it returns the output.
func sdkRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out.String()
}
