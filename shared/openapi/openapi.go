// Package openapi embeds the OpenAPI 3 document of the whole API and checks
// requests and responses against it (getkin/kin-openapi).
package openapi

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"gopkg.in/yaml.v3"
)

// The document is openapi.yaml (info, security, shared parameters,
// responses and schemas) plus one fragment per resource group under paths/
// (each with `paths` and, optionally, `components`), merged at load. Keeping
// a file per resource group lets each domain document its own routes.
//
//go:embed openapi.yaml paths/*.yaml
var files embed.FS

// Document returns the whole merged OpenAPI document as JSON.
func Document() ([]byte, error) {
	merged, err := merge()
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(merged, "", "  ")
}

// merge reads openapi.yaml and folds every paths/*.yaml fragment into it. A
// path or component defined twice is an error.
func merge() (map[string]any, error) {
	base, err := readYAML("openapi.yaml")
	if err != nil {
		return nil, err
	}
	frags, err := fs.Glob(files, "paths/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("openapi: list fragments: %w", err)
	}
	sort.Strings(frags)
	for _, name := range frags {
		frag, err := readYAML(name)
		if err != nil {
			return nil, err
		}
		if err := mergeInto(base, frag, name, "paths"); err != nil {
			return nil, err
		}
		comps, _ := frag["components"].(map[string]any)
		for kind, v := range comps {
			section, _ := v.(map[string]any)
			baseComps, _ := base["components"].(map[string]any)
			if baseComps == nil {
				baseComps = map[string]any{}
				base["components"] = baseComps
			}
			if err := mergeInto(baseComps, map[string]any{kind: section}, name, kind); err != nil {
				return nil, err
			}
		}
		if tags, ok := frag["tags"].([]any); ok {
			baseTags, _ := base["tags"].([]any)
			base["tags"] = append(baseTags, tags...)
		}
	}
	decorate(base)
	return base, nil
}

// methods are the operation keys of a path item.
var methods = map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true, "trace": true}

// decorate adds to every operation what any route may answer, so that no
// fragment repeats it: the 429 of API Gateway's throttling ($ref
// TooManyRequests) where an operation documents no 429 of its own; the
// x-request-id header ($ref RequestId) on each response the functions write;
// and the CORS header API Gateway adds ($ref AccessControlAllowOrigin) on
// every response.
func decorate(doc map[string]any) {
	components, _ := doc["components"].(map[string]any)
	shared, _ := components["responses"].(map[string]any)
	for name, r := range shared {
		resp, _ := r.(map[string]any)
		addHeaders(resp, name != "TooManyRequests")
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for method, v := range ops {
			op, ok := v.(map[string]any)
			if !ok || !methods[method] {
				continue
			}
			responses, _ := op["responses"].(map[string]any)
			if responses == nil {
				continue
			}
			if _, ok := responses["429"]; !ok {
				responses["429"] = map[string]any{"$ref": "#/components/responses/TooManyRequests"}
			}
			for _, r := range responses {
				resp, _ := r.(map[string]any)
				addHeaders(resp, true)
			}
		}
	}
}

// addHeaders declares the CORS header and, with requestID, the x-request-id
// header on a response written in place (not a $ref), unless it declares
// them already.
func addHeaders(resp map[string]any, requestID bool) {
	if resp == nil || resp["$ref"] != nil {
		return
	}
	headers, _ := resp["headers"].(map[string]any)
	if headers == nil {
		headers = map[string]any{}
		resp["headers"] = headers
	}
	add := map[string]string{"Access-Control-Allow-Origin": "#/components/headers/AccessControlAllowOrigin"}
	if requestID {
		add["x-request-id"] = "#/components/headers/RequestId"
	}
	for name, ref := range add {
		if _, ok := headers[name]; !ok {
			headers[name] = map[string]any{"$ref": ref}
		}
	}
}

func mergeInto(dst, src map[string]any, file, key string) error {
	from, _ := src[key].(map[string]any)
	if len(from) == 0 {
		return nil
	}
	to, _ := dst[key].(map[string]any)
	if to == nil {
		to = map[string]any{}
		dst[key] = to
	}
	for k, v := range from {
		existing, dup := to[k]
		if !dup {
			to[k] = v
			continue
		}
		// A path may be split across fragments by method; its operations
		// merge, but one operation defined twice is an error.
		a, okA := existing.(map[string]any)
		b, okB := v.(map[string]any)
		if key != "paths" || !okA || !okB {
			return fmt.Errorf("openapi: %s defines %s %q again", file, key, k)
		}
		for method, op := range b {
			if _, twice := a[method]; twice && method != "parameters" {
				return fmt.Errorf("openapi: %s defines %s %s again", file, method, k)
			}
			if method != "parameters" || a[method] == nil {
				a[method] = op
			}
		}
	}
	return nil
}

func readYAML(name string) (map[string]any, error) {
	raw, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("openapi: read %s: %w", name, err)
	}
	var out map[string]any
	if err := yaml.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("openapi: parse %s: %w", name, err)
	}
	return out, nil
}

// Doc is a loaded OpenAPI document.
type Doc struct {
	// doc is the parsed, validated document.
	doc *openapi3.T
	// router finds operations by method and path on any host: it is built
	// from a second copy of the document without `servers`, so responses of
	// test servers (http://127.0.0.1:PORT) and of any stage match.
	router routers.Router
}

// Load parses and validates the embedded document.
func Load() (*Doc, error) {
	ctx := context.Background()
	doc, err := parse()
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	routed, err := parse()
	if err != nil {
		return nil, err
	}
	routed.Servers = nil
	router, err := gorillamux.NewRouter(routed)
	if err != nil {
		return nil, fmt.Errorf("openapi: build router: %w", err)
	}
	return &Doc{doc: doc, router: router}, nil
}

func parse() (*openapi3.T, error) {
	document, err := Document()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(document)
	if err != nil {
		return nil, fmt.Errorf("openapi: load document: %w", err)
	}
	return doc, nil
}

// ValidateResponse checks a response to req against the document: the
// operation of req's method and path must exist, status must be documented
// for it, and the body must match the documented content type and schema (a
// status documented without content must come with an empty body). The
// request itself (parameters, body, security) is not checked.
func (d *Doc) ValidateResponse(req *http.Request, status int, header http.Header, body []byte) error {
	if req == nil || req.URL == nil {
		return errors.New("openapi: no request")
	}
	// Match on the path only: the router ignores the host because the
	// routing copy of the document has no servers.
	r := req.Clone(req.Context())
	r.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	r.Host = ""
	route, pathParams, err := d.router.FindRoute(r)
	if err != nil {
		return fmt.Errorf("openapi: %s %s is not a documented operation: %w", req.Method, req.URL.Path, err)
	}
	if header == nil {
		header = http.Header{}
	}
	responseRef := route.Operation.Responses.Status(status)
	if responseRef == nil {
		responseRef = route.Operation.Responses.Default()
	}
	if responseRef == nil || responseRef.Value == nil {
		return fmt.Errorf("openapi: %s %s: status %d is not documented", req.Method, route.Path, status)
	}
	if len(responseRef.Value.Content) == 0 && len(bytes.TrimSpace(body)) > 0 {
		return fmt.Errorf("openapi: %s %s: status %d is documented without a body, got %d bytes", req.Method, route.Path, status, len(body))
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    r,
			PathParams: pathParams,
			Route:      route,
			Options: &openapi3filter.Options{
				ExcludeRequestBody: true,
				AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			},
		},
		Status: status,
		Header: header,
		Body:   io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{
			ExcludeRequestBody:    true,
			AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
			IncludeResponseStatus: true,
			MultiError:            false,
			// Name the failing field and reason; leave the schema dump out.
			SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()},
		},
	}
	if err := openapi3filter.ValidateResponse(req.Context(), input); err != nil {
		return fmt.Errorf("openapi: %s %s: %w", req.Method, route.Path, err)
	}
	return nil
}

// Spec returns the parsed document (read-only: do not change it).
func (d *Doc) Spec() *openapi3.T { return d.doc }

// Paths returns "METHOD /path" for every operation of the document, sorted.
func (d *Doc) Paths() []string {
	var out []string
	for path, item := range d.doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

// ErrorCodes returns the values of the Error schema's `code` enum.
func (d *Doc) ErrorCodes() []string {
	ref := d.doc.Components.Schemas["Error"]
	if ref == nil || ref.Value == nil {
		return nil
	}
	code := ref.Value.Properties["code"]
	if code == nil || code.Value == nil {
		return nil
	}
	out := make([]string, 0, len(code.Value.Enum))
	for _, v := range code.Value.Enum {
		out = append(out, fmt.Sprint(v))
	}
	sort.Strings(out)
	return out
}
