package openapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/openapi"
)

// The SDKs' folders, relative to this package: sdk/typescript holds the
// generator script, openapi-typescript and TypeScript (npm ci from its lock
// file; make test installs them), sdk/go the Go module whose tool directive
// pins oapi-codegen.
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

// TestGenerators generates the SDKs from the merged document as make sdk
// does (sdk/typescript/scripts/generate.mjs: openapi-typescript, the
// operations table, oapi-codegen) into a temporary folder, and fails on any
// generator warning, on a compile error of what they made (tsc --strict
// --noEmit; go build and go vet), and when the files committed under sdk/
// differ from what the current document gives (then run make sdk and
// commit the result). It is skipped only when node or npm is absent (CI
// has them; make test installs sdk/typescript's packages).
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
	ts, err := filepath.Abs(sdkTypeScript)
	if err != nil {
		t.Fatal(err)
	}
	module, err := filepath.Abs(sdkGo)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ts, "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "openapi-typescript")); err != nil {
		t.Fatalf("openapi-typescript is not installed (run npm ci in sdk/typescript, as make test does): %v", err)
	}

	// The Go client goes into a module of its own in the temporary folder,
	// with sdk/go's requirements: it builds against the pinned runtime
	// without touching the repository.
	gen := filepath.Join(dir, "gomod")
	tsOut, goOut := filepath.Join(dir, "ts"), filepath.Join(gen, "client")
	run(t, ts, []string{"GOWORK=off"}, "node", "scripts/generate.mjs", "--doc", doc, "--ts-out", tsOut, "--go-out", goOut, "--no-package")

	t.Run("committed", func(t *testing.T) {
		t.Parallel()
		for _, f := range []struct{ committed, fresh string }{
			{filepath.Join(ts, "src", "schema.d.ts"), filepath.Join(tsOut, "schema.d.ts")},
			{filepath.Join(ts, "src", "operations.ts"), filepath.Join(tsOut, "operations.ts")},
			{filepath.Join(module, "client.gen.go"), filepath.Join(goOut, "client.gen.go")},
			{filepath.Join(module, "version.gen.go"), filepath.Join(goOut, "version.gen.go")},
		} {
			want, err := os.ReadFile(f.fresh)
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(f.committed)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is not what the current OpenAPI document gives (%v): run make sdk and commit the result", f.committed, err)
			}
		}
		var doc struct {
			Info struct{ Version string } `json:"info"`
		}
		var pkg struct{ Version string }
		b, err := os.ReadFile(filepath.Join(ts, "package.json"))
		if err == nil {
			err = json.Unmarshal(b, &pkg)
		}
		if err == nil {
			err = json.Unmarshal(raw, &doc)
		}
		if err != nil {
			t.Fatal(err)
		}
		if pkg.Version != doc.Info.Version {
			t.Errorf("sdk/typescript/package.json version %s, the document's info.version %s: run make sdk and commit the result", pkg.Version, doc.Info.Version)
		}
	})

	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		run(t, dir, nil, filepath.Join(bin, "tsc"), "--strict", "--noEmit", "--target", "es2022",
			filepath.Join(tsOut, "schema.d.ts"), filepath.Join(tsOut, "operations.ts"))
	})

	t.Run("go", func(t *testing.T) {
		t.Parallel()
		for _, f := range []string{"go.mod", "go.sum"} {
			b, err := os.ReadFile(filepath.Join(module, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(gen, f), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env := []string{"GOWORK=off", "GOFLAGS=-mod=mod"}
		run(t, gen, env, "go", "build", "./...")
		run(t, gen, env, "go", "vet", "./...")
	})
}
