package openapi_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// safelisted are the headers a browser sends or reads across origins
// without CORS naming them (the Fetch standard's CORS-safelisted request
// and response headers), lower-cased. Content-Type is safelisted only for
// form and plain-text bodies, so a JSON API must allow it.
var safelisted = map[string]bool{
	"accept": true, "accept-language": true, "content-language": true,
	"cache-control": true, "content-length": true, "content-type": true, "expires": true, "last-modified": true, "pragma": true,
}

// TestCORSHeaders: the template's CorsConfiguration lets a page send every
// request header the OpenAPI document declares (header parameters and the
// header security schemes) and read every response header it declares,
// and allows every method of the template's routes; otherwise a browser
// refuses the call or hides the header from the page.
func TestCORSHeaders(t *testing.T) {
	t.Parallel()
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(tpl.APIs) != 1 || tpl.APIs[0].CORS == nil {
		t.Fatalf("want one HttpApi with a CorsConfiguration, have %+v", tpl.APIs)
	}
	conf := tpl.APIs[0].CORS
	lower := func(list []string) map[string]bool {
		out := map[string]bool{}
		for _, v := range list {
			out[strings.ToLower(v)] = true
		}
		return out
	}
	allowed, exposed, methods := lower(conf.AllowHeaders), lower(conf.ExposeHeaders), lower(conf.AllowMethods)

	spec := load(t).Spec()
	request := map[string]string{}  // header -> where the document declares it
	response := map[string]string{} // the same for response headers
	for name, s := range spec.Components.SecuritySchemes {
		if v := s.Value; v != nil && ((v.Type == "apiKey" && v.In == "header") || v.Type == "http") {
			h := v.Name
			if v.Type == "http" {
				h = "Authorization"
			}
			request[strings.ToLower(h)] = "security scheme " + name
		}
	}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			for _, p := range append(slices.Clone(item.Parameters), op.Parameters...) {
				if p.Value != nil && p.Value.In == "header" {
					request[strings.ToLower(p.Value.Name)] = where
				}
			}
			for status, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				for h := range r.Value.Headers {
					response[strings.ToLower(h)] = where + " " + status
				}
			}
		}
	}
	var missing []string
	for h, where := range request {
		if !safelisted[h] && !allowed[h] {
			missing = append(missing, "AllowHeaders lacks "+h+" (a request header of "+where+")")
		}
	}
	for h, where := range response {
		if !safelisted[h] && !exposed[h] && !strings.HasPrefix(h, "access-control-") {
			missing = append(missing, "ExposeHeaders lacks "+h+" (a response header of "+where+")")
		}
	}
	for _, f := range tpl.Functions {
		for _, r := range f.Routes {
			if !methods[strings.ToLower(r.Method)] {
				missing = append(missing, "AllowMethods lacks "+r.Method+" ("+r.Key()+")")
			}
		}
	}
	// A request body is JSON, and the functions read a client's own
	// x-request-id (README, "The HTTP contract in short").
	for _, h := range []string{"content-type", "idempotency-key", "x-request-id"} {
		if !allowed[h] {
			missing = append(missing, "AllowHeaders lacks "+h)
		}
	}
	sort.Strings(missing)
	missing = slices.Compact(missing)
	if len(missing) > 0 {
		t.Errorf("template.yaml's CorsConfiguration:\n  %s", strings.Join(missing, "\n  "))
	}
	if conf.MaxAge <= 0 {
		t.Errorf("CorsConfiguration.MaxAge = %d: every call would be preceded by a preflight", conf.MaxAge)
	}
	if conf.AllowOriginsParameter != "CorsAllowedOrigins" {
		t.Errorf("AllowOrigins comes from %q, want !Ref CorsAllowedOrigins", conf.AllowOriginsParameter)
	}
	if p := tpl.Parameters["CorsAllowedOrigins"]; p.Type != "CommaDelimitedList" || p.Default != "*" {
		t.Errorf("parameter CorsAllowedOrigins = %+v, want a CommaDelimitedList defaulting to *", p)
	}
}
