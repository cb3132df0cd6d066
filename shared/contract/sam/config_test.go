package sam_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// dynamicEnv lists the environment reads whose name is not a string
// literal ("file: argument"), with the names they read.
var dynamicEnv = map[string][]string{
	// The services are those of the Endpoint calls (endpointRead).
	`shared/platform/ddb/ddb.go: "AWS_ENDPOINT_URL_" + service`: {},
	`shared/platform/ddb/ddb.go: env`: {"TENANTS_TABLE", "USERS_TABLE", "SESSIONS_TABLE", "CHECKINS_TABLE", "ACTIONS_TABLE",
		"LOYALTY_TABLE", "AUDIENCES_TABLE", "POS_TABLE", "LOCATIONS_TABLE", "OPERATIONS_TABLE"},
}

var envRead = regexp.MustCompile(`os\.(?:Getenv|LookupEnv)\(([^()]*(?:\([^()]*\))?[^()]*)\)`)

// endpointRead finds the calls of ddb.Endpoint(service), which reads
// AWS_ENDPOINT_URL_<service>.
var endpointRead = regexp.MustCompile(`\bEndpoint\("([A-Za-z0-9_]+)"\)`)

// codeEnv returns the environment variables the code under shared/ and
// functions/ reads (tests excluded), each with a file that reads it.
func codeEnv(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range []string{"shared", "functions"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			for _, m := range envRead.FindAllStringSubmatch(string(b), -1) {
				arg := strings.TrimSpace(m[1])
				if name, err := unquote(arg); err == nil {
					out[name] = rel
					continue
				}
				names, ok := dynamicEnv[rel+": "+arg]
				if !ok {
					t.Errorf("%s reads the environment variable named by %s: add the names it reads to dynamicEnv", rel, arg)
				}
				for _, n := range names {
					out[n] = rel
				}
			}
			for _, m := range endpointRead.FindAllStringSubmatch(string(b), -1) {
				out["AWS_ENDPOINT_URL_"+m[1]] = rel
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func unquote(s string) (string, error) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && !strings.ContainsAny(s[1:len(s)-1], `"\`) {
		return s[1 : len(s)-1], nil
	}
	return "", os.ErrInvalid
}

// readmeConfig returns the names in the first cell of each row of the
// README's configuration table.
func readmeConfig(t *testing.T, root string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Configuration reference\n")
	if !ok {
		t.Fatal(`README.md has no "## Configuration reference" section`)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	out := map[string]bool{}
	name := regexp.MustCompile("`([A-Za-z0-9_]+)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			if out[m[1]] {
				t.Errorf("README configuration table lists %s twice", m[1])
			}
			out[m[1]] = true
		}
	}
	return out
}

// TestConfigTable: the README's configuration table lists exactly the
// template's parameters, the environment variables the template sets and
// those the code reads.
func TestConfigTable(t *testing.T) {
	tpl := loadTemplate(t)
	root := filepath.Dir(sam.Path())
	want := map[string]string{}
	for name := range tpl.Parameters {
		want[name] = "a template parameter"
	}
	for name := range tpl.GlobalEnv {
		want[name] = "set by the template (Globals)"
	}
	for _, f := range tpl.Functions {
		for name := range f.Env {
			want[name] = "set by the template (" + f.LogicalID + ")"
		}
	}
	for name, file := range codeEnv(t, root) {
		if _, ok := want[name]; !ok {
			want[name] = "read by " + file
		}
	}
	got := readmeConfig(t, root)
	var missing, extra []string
	for name, why := range want {
		if !got[name] {
			missing = append(missing, name+" ("+why+")")
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("README configuration table lacks:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("README configuration table lists names no parameter, template variable or code has: %s", strings.Join(extra, ", "))
	}
}
