package main

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// CORS as API Gateway serves it for an HttpApi with a CorsConfiguration,
// from the template's configuration (so make run and a deployed stack
// allow the same origins, headers and methods; README, "CORS"):
//
//   - A preflight (OPTIONS with Origin and Access-Control-Request-Method)
//     on any path is answered 204 by the gateway itself, no function
//     involved; for an allowed origin it carries Access-Control-Allow-Origin,
//     -Allow-Methods, -Allow-Headers and -Max-Age, for any other none (the
//     browser then refuses the call).
//   - Any other request with an allowed Origin is served as usual and its
//     answer gets Access-Control-Allow-Origin and -Expose-Headers.
//   - A request without Origin is served as if there were no configuration.
//
// Access-Control-Allow-Origin is "*" when every origin is allowed (and no
// credentials), else the request's origin. An allowed origin is "*", an
// exact origin (compared without regard to case), or a prefix ending in
// "*" such as "https://*".

// cors is the CORS configuration the local stack serves.
type cors struct {
	origins       []string
	allowHeaders  string
	allowMethods  string
	exposeHeaders string
	maxAge        string
	credentials   bool
}

// corsFromTemplate returns the CORS configuration of the template's HttpApi,
// or nil when it has none.
func corsFromTemplate(t *sam.Template) *cors {
	for _, api := range t.APIs {
		if api.CORS == nil {
			continue
		}
		c := &cors{
			origins:       api.CORS.AllowOrigins,
			allowHeaders:  strings.Join(api.CORS.AllowHeaders, ","),
			allowMethods:  strings.Join(api.CORS.AllowMethods, ","),
			exposeHeaders: strings.Join(api.CORS.ExposeHeaders, ","),
			credentials:   api.CORS.AllowCredentials,
		}
		if api.CORS.MaxAge > 0 {
			c.maxAge = strconv.Itoa(api.CORS.MaxAge)
		}
		return c
	}
	return nil
}

// allowOrigin returns the Access-Control-Allow-Origin answer to origin, or
// "" when the origin is not allowed.
func (c *cors) allowOrigin(origin string) string {
	for _, o := range c.origins {
		switch {
		case o == "*":
			if c.credentials {
				return origin
			}
			return "*"
		case strings.HasSuffix(o, "*") && len(origin) >= len(o)-1 && strings.EqualFold(origin[:len(o)-1], o[:len(o)-1]):
			return origin
		case strings.EqualFold(o, origin):
			return origin
		}
	}
	return ""
}

// handler serves next behind the CORS configuration.
func (c *cors) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		allowed := c.allowOrigin(origin)
		h := w.Header()
		if allowed != "" && allowed != "*" {
			h.Add("Vary", "Origin")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if allowed != "" {
				h.Set("Access-Control-Allow-Origin", allowed)
				h.Set("Access-Control-Allow-Methods", c.wildcard(c.allowMethods, r.Header.Get("Access-Control-Request-Method")))
				if v := c.wildcard(c.allowHeaders, r.Header.Get("Access-Control-Request-Headers")); v != "" {
					h.Set("Access-Control-Allow-Headers", v)
				}
				if c.maxAge != "" {
					h.Set("Access-Control-Max-Age", c.maxAge)
				}
				if c.credentials {
					h.Set("Access-Control-Allow-Credentials", "true")
				}
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed != "" {
			h.Set("Access-Control-Allow-Origin", allowed)
			if c.exposeHeaders != "" {
				h.Set("Access-Control-Expose-Headers", c.exposeHeaders)
			}
			if c.credentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
		}
		next.ServeHTTP(w, r)
	})
}

// wildcard returns the configured list, or what the browser asked for when
// the list is "*".
func (c *cors) wildcard(configured, requested string) string {
	if configured == "*" {
		return requested
	}
	return configured
}
