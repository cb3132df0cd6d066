package sam_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// MaxFunctionBytes is the most a function's binary may weigh: stripped,
// linux/arm64, built as make build builds it. A smaller binary is read from
// the deployment package and paged in faster at a cold start; the limit
// keeps every function to what its routes need (README: How the pieces
// fit). The linker aligns segments to 64 KiB on arm64, so sizes move in
// 64 KiB steps. The largest are the jobs and loyalty functions (the jobs
// function links no rules engine: the rules function applies the rules on
// what jobs record, from the actions stream).
const MaxFunctionBytes = 10 << 20

// TestFunctionSizes builds every function of the template as make build
// does (linux/arm64, -tags lambda.norpc, -trimpath, -s -w) and fails when
// one is over MaxFunctionBytes, so that a new dependency or a route moved
// into the wrong function shows here rather than at a cold start. It also
// fails when the README's size table differs from what it measured, and
// prints the table to paste.
func TestFunctionSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every function")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	root := filepath.Join("..", "..", "..")
	dir := t.TempDir()
	sizes := map[string]int64{}
	t.Cleanup(func() { compareSizeTable(t, filepath.Join(root, "README.md"), sizes) })
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
			sizes[f.Name] = st.Size()
		})
	}
}

// compareSizeTable fails t when the README's table of function sizes (the
// rows after "| function | bytes |") is not sizes, largest first (then by
// name), and logs the table as it should be.
func compareSizeTable(t *testing.T, readme string, sizes map[string]int64) {
	t.Helper()
	if t.Failed() || len(sizes) == 0 {
		return
	}
	raw, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "| function | bytes |\n|---|---|\n")
	if !ok {
		t.Fatal("README.md has no function size table (| function | bytes |)")
	}
	got, _, _ := strings.Cut(rest, "\n\n")
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if sizes[names[i]] != sizes[names[j]] {
			return sizes[names[i]] > sizes[names[j]]
		}
		return names[i] < names[j]
	})
	var want strings.Builder
	for _, n := range names {
		fmt.Fprintf(&want, "| %s | %s |\n", n, commas(sizes[n]))
	}
	if strings.TrimSpace(got) != strings.TrimSpace(want.String()) {
		t.Errorf("README.md's function size table is not what this build measured; replace its rows with:\n%s", want.String())
	}
}

// commas writes n with thousands separators (10,420,386).
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestCodeLocations proves that the template names where each function's
// code is: its CodeUri is the Go module (make builds functions/<name>),
// so the line carries a comment naming the function's main package and
// its wiring, and both exist.
func TestCodeLocations(t *testing.T) {
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(sam.Path())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(sam.Path())
	for _, f := range tpl.Functions {
		t.Run(f.Name, func(t *testing.T) {
			want := "CodeUri: . # the Go module; its code: functions/" + f.Name + "/main.go, wired in shared/wire/" + f.Name + "\n"
			if !strings.Contains(string(raw), want) {
				t.Errorf("template.yaml lacks the line %q", strings.TrimSpace(want))
			}
			for _, p := range []string{filepath.Join("functions", f.Name, "main.go"), filepath.Join("shared", "wire", f.Name)} {
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		})
	}
}
