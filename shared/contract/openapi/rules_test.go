package openapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// spectralResult is one finding of `spectral lint --format json`.
type spectralResult struct {
	Code     string `json:"code"`
	Message  string `json:"message"`
	Path     []any  `json:"path"`
	Severity int    `json:"severity"`
}

// lintDoc lints the JSON document raw with the ruleset spectral.yaml and
// returns Spectral's findings.
func lintDoc(t *testing.T, raw []byte) []spectralResult {
	t.Helper()
	doc := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(doc, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(spectralBin, "lint", "--ruleset", "spectral.yaml", "--format", "json", "--quiet", "--fail-severity", "error", doc)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var results []spectralResult
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("spectral: %v (exit %v)\nstdout: %.2000s\nstderr: %.2000s", err, runErr, stdout.String(), stderr.String())
	}
	return results
}

// TestRequestLimitRules checks that the project's rules request-string-limit
// and request-array-limit catch an unbounded request body whose schema is
// itself a string or an array (not only one nested in an object), that
// request-number-limit and request-integer-limit catch a request number
// without both bounds, and that each passes the same body once bounded.
func TestRequestLimitRules(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(spectralBin); err != nil {
		t.Skipf("Spectral is not installed (run npm ci in localstack/): %v", err)
	}
	cases := []struct {
		name   string
		schema map[string]any
		rule   string
		caught bool
	}{
		{"root string without maxLength", map[string]any{"type": "string", "format": "binary"}, "request-string-limit", true},
		{"root string with maxLength", map[string]any{"type": "string", "format": "binary", "maxLength": 10}, "request-string-limit", false},
		{"root array without maxItems", map[string]any{"type": "array", "items": map[string]any{"type": "string", "maxLength": 5}}, "request-array-limit", true},
		{"root array with maxItems", map[string]any{"type": "array", "maxItems": 3, "items": map[string]any{"type": "string", "maxLength": 5}}, "request-array-limit", false},
		{"nested string without maxLength", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}, "request-string-limit", true},
		{"nested number without maximum", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number", "minimum": 0}}}, "request-number-limit", true},
		{"nested number bounded", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "number", "minimum": 0, "maximum": 9}}}, "request-number-limit", false},
		{"nested integer without minimum", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer", "maximum": 9}}}, "request-integer-limit", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			doc := map[string]any{
				"openapi": "3.0.3",
				"info":    map[string]any{"title": "t", "version": "1", "description": "d"},
				"paths": map[string]any{"/x": map[string]any{"put": map[string]any{
					"operationId": "x",
					"requestBody": map[string]any{"required": true, "content": map[string]any{"application/octet-stream": map[string]any{"schema": c.schema}}},
					"responses":   map[string]any{"204": map[string]any{"description": "ok"}},
				}}},
			}
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			caught := false
			for _, r := range lintDoc(t, raw) {
				if r.Code == c.rule {
					caught = true
				}
			}
			if caught != c.caught {
				t.Errorf("%s reported: %v, want %v", c.rule, caught, c.caught)
			}
		})
	}
}
