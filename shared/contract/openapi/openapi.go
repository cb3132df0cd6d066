//go:build !lambda.norpc

// The response validation links kin-openapi, which is several megabytes of
// binary: Lambda builds (tag lambda.norpc) leave it out, so that a
// function serving the document (Document, in document.go) stays small.
// The tests, the local stack and the tools build it.

package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

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
