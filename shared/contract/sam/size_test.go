package sam_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// MaxFunctionBytes is the most a function's binary may weigh: stripped,
// linux/arm64, built as make build builds it. A smaller binary is read from
// the deployment package and paged in faster at a cold start; the limit
// keeps every function to what its routes need (README: How the pieces
// fit). It was 10 MiB until the jobs function, which runs every kind of
// job, passed it by 162 bytes with the points liability rebuild (its code
// segment grew past a 64 KiB boundary: the linker aligns segments to 64
// KiB on arm64, so the size moves in 64 KiB steps).
const MaxFunctionBytes = 10<<20 + 512<<10

// TestFunctionSizes builds every function of the template as make build
// does (linux/arm64, -tags lambda.norpc, -trimpath, -s -w) and fails when
// one is over MaxFunctionBytes, so that a new dependency or a route moved
// into the wrong function shows here rather than at a cold start.
func TestFunctionSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every function")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	root := filepath.Join("..", "..", "..")
	dir := t.TempDir()
	for _, f := range loadTemplate(t).Functions {
		t.Run(f.Name, func(t *testing.T) {
			out := filepath.Join(dir, f.Name)
			cmd := exec.Command(goBin, "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, "./functions/"+f.Name)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build ./functions/%s: %v\n%s", f.Name, err, strings.TrimSpace(string(msg)))
			}
			st, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Size(); got > MaxFunctionBytes {
				t.Errorf("%s is %d bytes, over the %d-byte limit by %d", f.Name, got, MaxFunctionBytes, got-MaxFunctionBytes)
			}
			t.Logf("%s: %d bytes", f.Name, st.Size())
		})
	}
}
