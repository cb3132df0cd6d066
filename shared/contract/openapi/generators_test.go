package openapi_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/openapi"
)

// The generators' folders, relative to this package: sdk/typescript holds
// openapi-typescript and TypeScript (npm ci from its lock file; make test
// installs them), sdk/go the Go module whose tool directive pins
// oapi-codegen.
const (
	sdkTypeScript = "../../../sdk/typescript"
	sdkGo         = "../../../sdk/go"
)

// run runs name with args in dir and fails the test on an error or on any
// output line that is a warning; it returns the combined output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%.4000s", name, strings.Join(args, " "), err, out.String())
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if l := strings.ToLower(line); strings.Contains(l, "warn") || strings.Contains(l, "error") {
			t.Errorf("%s: %s", name, line)
		}
	}
	return out.String()
}

// TestGenerators generates the clients outside users generate from the
// merged document and fails on any generator warning or compile error:
// openapi-typescript (then tsc --strict --noEmit of its output) and
// oapi-codegen (then go build and go vet of the generated package). It is
// skipped only when node or npm is absent (CI has them; make test installs
// sdk/typescript's packages).
func TestGenerators(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the TypeScript generator cannot run (%v)", tool, err)
		}
	}
	raw, err := openapi.Document()
	if err != nil {
		t.Fatalf("merge document: %v", err)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, raw, 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		bin, err := filepath.Abs(filepath.Join(sdkTypeScript, "node_modules", ".bin"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(bin, "openapi-typescript")); err != nil {
			t.Fatalf("openapi-typescript is not installed (run npm ci in sdk/typescript, as make test does): %v", err)
		}
		out := filepath.Join(dir, "api.ts")
		run(t, dir, nil, filepath.Join(bin, "openapi-typescript"), doc, "-o", out)
		run(t, dir, nil, filepath.Join(bin, "tsc"), "--strict", "--noEmit", "--target", "es2022", out)
	})

	t.Run("go", func(t *testing.T) {
		t.Parallel()
		module, err := filepath.Abs(sdkGo)
		if err != nil {
			t.Fatal(err)
		}
		// A module of its own in the temporary folder, with sdk/go's
		// requirements: the generated client builds against the pinned
		// runtime without touching the repository.
		gen := filepath.Join(dir, "gomod")
		if err := os.MkdirAll(filepath.Join(gen, "client"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"go.mod", "go.sum"} {
			b, err := os.ReadFile(filepath.Join(module, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(gen, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		config := filepath.Join(dir, "oapi-codegen.yaml")
		cfg := "package: client\noutput: " + filepath.Join(gen, "client", "client.gen.go") + "\ngenerate:\n  models: true\n  client: true\n"
		if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
		run(t, module, env, "go", "tool", "oapi-codegen", "-config", config, doc)
		run(t, gen, env, "go", "build", "./...")
		run(t, gen, env, "go", "vet", "./...")
	})
}
