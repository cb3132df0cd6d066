package openapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/loyalty-platform/platform/shared/contract/openapi"
)

// spectralBin is Spectral as `npm ci` in localstack/ installs it (the
// version pinned in localstack/package.json), relative to this package.
const spectralBin = "../../../localstack/node_modules/.bin/spectral"

// TestSpectral lints the merged document with the ruleset spectral.yaml
// (the OpenAPI rules and the OWASP API security rules): any error fails,
// warnings are logged. It is skipped only when Spectral is not installed
// (make test installs it; so does CI).
func TestSpectral(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(spectralBin); err != nil {
		t.Skipf("Spectral is not installed (run npm ci in localstack/): %v", err)
	}
	raw, err := openapi.Document()
	if err != nil {
		t.Fatalf("merge document: %v", err)
	}
	doc := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(doc, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(spectralBin, "lint", "--ruleset", "spectral.yaml", "--format", "json", "--quiet", "--fail-severity", "error", doc)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var results []struct {
		Code     string `json:"code"`
		Message  string `json:"message"`
		Path     []any  `json:"path"`
		Severity int    `json:"severity"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		t.Fatalf("spectral: %v (exit %v)\nstdout: %.2000s\nstderr: %.2000s", err, runErr, stdout.String(), stderr.String())
	}
	counts := map[int]int{}
	for _, r := range results {
		counts[r.Severity]++
		if r.Severity == 0 {
			var p []string
			for _, s := range r.Path {
				p = append(p, strings.ReplaceAll(strings.ReplaceAll(toString(s), "~", "~0"), "/", "~1"))
			}
			t.Errorf("%s at #/%s: %s", r.Code, strings.Join(p, "/"), r.Message)
		}
	}
	t.Logf("spectral: %d errors, %d warnings, %d infos, %d hints", counts[0], counts[1], counts[2], counts[3])
	if counts[0] == 0 && runErr != nil {
		t.Errorf("spectral failed without an error result: %v\nstderr: %.2000s", runErr, stderr.String())
	}
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// TestEveryOperationAnswers checks what the merge adds to every operation:
// a 429 with a Retry-After header, and on every response but API
// Gateway's own (TooManyRequests) the x-request-id header.
func TestEveryOperationAnswers(t *testing.T) {
	t.Parallel()
	d := load(t)
	for path, item := range d.Spec().Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			tooMany := op.Responses.Status(429)
			if tooMany == nil || tooMany.Value == nil || tooMany.Value.Headers["Retry-After"] == nil {
				t.Errorf("%s: no 429 with a Retry-After header", key)
			}
			for code, resp := range op.Responses.Map() {
				if resp.Ref == "#/components/responses/TooManyRequests" {
					continue
				}
				if resp.Value == nil || resp.Value.Headers["x-request-id"] == nil {
					t.Errorf("%s: response %s does not declare x-request-id", key, code)
				}
			}
		}
	}
}

// TestNullableHasType checks every schema of the document: `nullable` only
// beside a `type` (OpenAPI 3.0 ignores it elsewhere, so a standard validator
// refuses the null that kin-openapi would let through), and every `number`
// with a `format` (double: generators otherwise pick float32 or a bare
// interface type), and every field described as read-only marked readOnly.
func TestNullableHasType(t *testing.T) {
	t.Parallel()
	d := load(t)
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Nullable && (s.Type == nil || len(*s.Type) == 0) {
			t.Errorf("%s: nullable without a type", where)
		}
		if strings.HasPrefix(s.Description, "Read-only") && !s.ReadOnly {
			t.Errorf("%s: described as read-only without readOnly: true", where)
		}
		if s.Type.Is("number") && s.Format != "double" {
			t.Errorf("%s: number without format: double", where)
		}
		for name, p := range s.Properties {
			walk(where+"."+name, p)
		}
		walk(where+"[]", s.Items)
		if s.AdditionalProperties.Schema != nil {
			walk(where+"{}", s.AdditionalProperties.Schema)
		}
		for i, list := range [][]*openapi3.SchemaRef{s.AllOf, s.OneOf, s.AnyOf} {
			for j, sub := range list {
				walk(where+"/"+[]string{"allOf", "oneOf", "anyOf"}[i]+"/"+toString(j), sub)
			}
		}
		walk(where+"/not", s.Not)
	}
	for name, s := range d.Spec().Components.Schemas {
		walk("components.schemas."+name, s)
	}
	for path, item := range d.Spec().Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil {
					walk(key+" parameter "+p.Value.Name, p.Value.Schema)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for ct, mt := range op.RequestBody.Value.Content {
					walk(key+" request "+ct, mt.Schema)
				}
			}
			for code, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for ct, mt := range resp.Value.Content {
					walk(key+" "+code+" "+ct, mt.Schema)
				}
			}
		}
	}
}

// TestExamples checks that every operation shows an example of its JSON
// request body and of each JSON success response (a free-form object, such
// as a whole document, needs none). Examples are checked against their
// schemas when the document loads and by Spectral.
func TestExamples(t *testing.T) {
	t.Parallel()
	d := load(t)
	hasExample := func(mt *openapi3.MediaType) bool {
		if mt == nil || mt.Example != nil || len(mt.Examples) > 0 {
			return true
		}
		s := mt.Schema
		return s != nil && s.Value != nil && len(s.Value.Properties) == 0 && len(s.Value.AllOf)+len(s.Value.OneOf)+len(s.Value.AnyOf) == 0 && s.Ref == ""
	}
	for path, item := range d.Spec().Paths.Map() {
		for method, op := range item.Operations() {
			key := method + " " + path
			if op.RequestBody != nil && op.RequestBody.Value != nil && !hasExample(op.RequestBody.Value.Content.Get("application/json")) {
				t.Errorf("%s: no example of its JSON request body", key)
			}
			for code, resp := range op.Responses.Map() {
				if !strings.HasPrefix(code, "2") || resp.Value == nil {
					continue
				}
				if !hasExample(resp.Value.Content.Get("application/json")) {
					t.Errorf("%s: no example of its %s JSON response", key, code)
				}
			}
		}
	}
}
