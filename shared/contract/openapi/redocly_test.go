package openapi_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/openapi"
)

// redoclyAllowed are the warnings of Redocly's recommended rules the
// document keeps on purpose, by rule and the start of the pointer, each
// with its reason. Any other warning, and every error, fails TestRedocly.
var redoclyAllowed = []struct{ rule, pointer, why string }{
	{"info-license-strict", "#/info/license", "the API is proprietary: its license has a name and no URL to point at"},
	{"no-server-example.com", "#/servers/", "the local stack's server (http://localhost:3000) is listed on purpose, for make run"},
	{"no-ambiguous-paths", "#/paths/~1locations~1{locationId}~1", "GET /locations/exports/{fileId} is the original path of an export's file, kept as a deprecated alias of GET /locations/exports/files/{fileId}; a location id is never `exports`"},
}

// TestRedocly lints the merged document with Redocly CLI's recommended
// rules (the version pinned in sdk/typescript, installed by make test) and
// fails on any error and on any warning redoclyAllowed does not name. It
// is skipped only when node is absent.
func TestRedocly(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed: Redocly CLI cannot run (%v)", err)
	}
	ts, err := filepath.Abs(sdkTypeScript)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(ts, "node_modules", ".bin", "redocly")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Redocly CLI is not installed (run npm ci in sdk/typescript, as make test does): %v", err)
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
	cmd := exec.Command(bin, "lint", doc, "--format=json")
	cmd.Dir = dir
	// Redocly sends no telemetry and looks for no newer version.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, runErr := cmd.Output()
	var report struct {
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("redocly lint: %v (%v)\n%.2000s", err, runErr, out)
	}
	for _, p := range report.Problems {
		pointer := ""
		if len(p.Location) > 0 {
			pointer = p.Location[0].Pointer
		}
		allowed := false
		for _, a := range redoclyAllowed {
			allowed = allowed || p.Severity == "warn" && p.RuleID == a.rule && strings.HasPrefix(pointer, a.pointer)
		}
		if !allowed {
			t.Errorf("redocly %s %s at %s: %s", p.Severity, p.RuleID, pointer, p.Message)
		}
	}
}
