package web

import (
	"context"
	"net/http"
	"strings"
)

// WithGatewayHeaders returns ctx carrying the headers of the API Gateway
// event a request came in (names lower-case, as payload 2.0 sends them).
// The Lambda adapter (shared/wire) puts them there: the api-proxy adapter
// splits every header value at its commas into several values of
// r.Header, so a value that holds a comma can only be read whole from the
// event.
func WithGatewayHeaders(ctx context.Context, headers map[string]string) context.Context {
	return context.WithValue(ctx, gatewayHeadersKey, headers)
}

// WholeHeader returns the whole value of the request header name, commas
// included, and whether it was sent. Through API Gateway it is the
// event's value: payload 2.0 joins the values of a header sent more than
// once with commas, so such a header is one value here too. Without the
// event (a plain net/http server) it is r.Header's values joined the same
// way.
func WholeHeader(r *http.Request, name string) (string, bool) {
	if headers, ok := r.Context().Value(gatewayHeadersKey).(map[string]string); ok {
		if v, ok := headers[strings.ToLower(name)]; ok {
			return v, true
		}
		// API Gateway sends the names lower-case; another spelling (an
		// event written by hand) is looked up case-insensitively.
		for k, v := range headers {
			if strings.EqualFold(k, name) {
				return v, true
			}
		}
		return "", false
	}
	values, ok := r.Header[http.CanonicalHeaderKey(name)]
	if !ok {
		return "", false
	}
	return strings.Join(values, ","), true
}
