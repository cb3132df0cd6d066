// Package apidoc serves the API's own description: GET /openapi.json
// answers the merged OpenAPI document (shared/contract/openapi) to anyone, with no
// credentials, so that clients and interactive references (the local
// stack's /docs page) can read it from the API they call.
package apidoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/loyalty-platform/platform/shared/contract/openapi"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// CacheControl is the Cache-Control header of the document: it changes
// only with a deployment, so browsers and proxies may keep it a while.
const CacheControl = "public, max-age=300"

// Service serves the document. Its zero value is ready; the document is
// merged on the first request (not at a cold start, so the function
// serving it starts as fast as before).
type Service struct {
	once sync.Once
	doc  map[string]any
	err  error

	mu      sync.Mutex
	encoded map[string][]byte // the answer by base URL, at most maxEncoded
}

// maxEncoded bounds the answers kept: a function is reached through one
// or two host names (the API's, a custom domain), so a few suffice.
const maxEncoded = 8

// Routes returns the route of the document.
func (s *Service) Routes() []web.Route {
	return []web.Route{{Method: "GET", Path: "/openapi.json", Access: web.Public, Handler: web.Serve(http.StatusOK, s.handleGet)}}
}

func (s *Service) load() (map[string]any, error) {
	s.once.Do(func() {
		raw, err := openapi.Document()
		if err != nil {
			s.err = fmt.Errorf("apidoc: %w", err)
			return
		}
		// Numbers stay as written (json.Number), not float64.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&s.doc); err != nil {
			s.err = fmt.Errorf("apidoc: decode the merged document: %w", err)
		}
	})
	return s.doc, s.err
}

// handleGet serves GET /openapi.json: the OpenAPI document as JSON, public
// (credentials, when sent, are checked as on every route, but none is
// needed). The first `servers` entry is the base URL the request came
// through (scheme, host and, behind a named API Gateway stage, the stage),
// so "Try it out" in an interactive reference calls the API that served
// the document; the document's own servers follow.
func (s *Service) handleGet(r *http.Request, _ actor.Actor) (web.Response, error) {
	body, err := s.encode(BaseURL(r))
	if err != nil {
		return web.Response{}, err
	}
	return web.Response{Body: bytes.NewReader(body), Header: http.Header{
		"Content-Type":  {"application/json"},
		"Cache-Control": {CacheControl},
		"Vary":          {"Host"},
	}}, nil
}

// encode returns the document as JSON with base as its first server,
// encoding it once per base.
func (s *Service) encode(base string) ([]byte, error) {
	s.mu.Lock()
	body, ok := s.encoded[base]
	s.mu.Unlock()
	if ok {
		return body, nil
	}
	doc, err := s.load()
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if base != "" {
		servers := []any{map[string]any{"url": base, "description": "The server this document was read from."}}
		listed, _ := doc["servers"].([]any)
		for _, sv := range listed {
			if m, ok := sv.(map[string]any); ok && m["url"] == base {
				continue
			}
			servers = append(servers, sv)
		}
		out["servers"] = servers
	}
	body, err = json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("apidoc: encode the document: %w", err)
	}
	s.mu.Lock()
	if s.encoded == nil || len(s.encoded) >= maxEncoded {
		s.encoded = map[string][]byte{}
	}
	s.encoded[base] = body
	s.mu.Unlock()
	return body, nil
}

// hostRe is what a Host header may be to appear in the document: a DNS
// name or an address, with an optional port. It is compiled on first use
// so that a cold start does not pay for it.
var hostRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:[0-9]{1,5})?$`)
})

// BaseURL returns the base URL a request reached the API through, or ""
// when its Host is not a plain host name. The scheme is the gateway's
// X-Forwarded-Proto (https in AWS); without it, http for a loopback host
// (the local stack) and https otherwise.
func BaseURL(r *http.Request) string {
	// The gateway passes the Host header on (with the port, locally);
	// the adapter sets r.Host to the domain name alone.
	host := r.Header.Get("Host")
	if host == "" {
		host = r.Host
	}
	gw, fromGateway := web.GatewayContext(r)
	if host == "" && fromGateway {
		host = gw.DomainName
	}
	if !hostRe().MatchString(host) {
		return ""
	}
	scheme := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]))
	if scheme != "http" && scheme != "https" {
		scheme = "https"
		name := host
		if i := strings.LastIndex(name, ":"); i > 0 && !strings.HasSuffix(name, "]") {
			name = name[:i]
		}
		if slices.Contains([]string{"localhost", "127.0.0.1", "[::1]"}, name) {
			scheme = "http"
		}
	}
	base := scheme + "://" + host
	if fromGateway && gw.Stage != "" && gw.Stage != "$default" {
		base += "/" + gw.Stage
	}
	return base
}
