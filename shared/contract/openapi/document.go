// Package openapi embeds the OpenAPI 3 document of the whole API (Document,
// here) and checks responses against it (Load, openapi.go, with
// getkin/kin-openapi; not in Lambda builds).
package openapi

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"

	"gopkg.in/yaml.v3"
)

// The document is openapi.yaml (info, security, shared parameters,
// responses and schemas) plus one fragment per resource group under paths/
// (each with `paths` and, optionally, `components`, `tags` and
// `x-webhooks`, the requests the platform sends), merged at load. Keeping a
// file per resource group lets each domain document its own routes.
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
// path, webhook or component defined twice is an error.
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
		// OpenAPI 3.0 has no `webhooks`; Redoc and Redocly read x-webhooks.
		if err := mergeInto(base, frag, name, "x-webhooks"); err != nil {
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
