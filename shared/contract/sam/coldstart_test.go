package sam_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// initHeavyPackages are packages that build large tables at their
// initialisation, which every cold start of a function linking them pays
// for whether or not it calls them. The schema tables of the DynamoDB SDK
// releases with schema-based (de)serialization (service/dynamodb v1.69
// and later, service/dynamodbstreams v1.42 and later) took about 0.5 ms
// and 600 KB of allocations of each start, a third of a hello-world
// Lambda's whole start (README: How the pieces fit).
var initHeavyPackages = []string{
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/schemas",
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/schemas",
}

// TestFunctionInitPackages lists the packages every function of the
// template links, built as make build builds it, and fails when one links
// a package of initHeavyPackages, so that an SDK upgrade that brings the
// tables back shows here rather than at a cold start.
func TestFunctionInitPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every function's packages")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	root := filepath.Join("..", "..", "..")
	for _, f := range loadTemplate(t).Functions {
		t.Run(f.Name, func(t *testing.T) {
			cmd := exec.Command(goBin, "list", "-deps", "-tags", "lambda.norpc", "./functions/"+f.Name)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps ./functions/%s: %v\n%s", f.Name, err, stderrOf(err))
			}
			for _, p := range strings.Fields(string(out)) {
				if slices.Contains(initHeavyPackages, p) {
					t.Errorf("%s links %s, whose initialisation every cold start pays for", f.Name, p)
				}
			}
		})
	}
}

// stderrOf returns what a failed command wrote to its standard error.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
