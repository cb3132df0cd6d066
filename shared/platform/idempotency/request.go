package idempotency

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// ParseKey validates the Idempotency-Key header's value: 1 to
// MaxKeyLength printable ASCII characters (space to tilde), commas
// included. The whole value is the key (see web.WholeHeader: a header
// sent twice reaches the function as one value, joined by a comma, and is
// that key). Anything else is VALIDATION_FAILED naming the header.
func ParseKey(value string) (string, error) {
	if value == "" || len(value) > MaxKeyLength {
		return "", web.InvalidHeader(Header, fmt.Sprintf("must be 1 to %d printable ASCII characters", MaxKeyLength))
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c > 0x7e {
			return "", web.InvalidHeader(Header, fmt.Sprintf("must be 1 to %d printable ASCII characters", MaxKeyLength))
		}
	}
	return value, nil
}

// readBody reads the request body (at most maxRequestBody bytes). whole
// is false when the body is longer: body then holds its first bytes only.
func readBody(r *http.Request) (body []byte, whole bool, err error) {
	if r.Body == nil || r.Body == http.NoBody {
		return []byte{}, true, nil
	}
	body, err = io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil {
		return nil, false, apierr.Invalid("", "the request body could not be read")
	}
	return body, len(body) <= maxRequestBody, nil
}

// requestHash identifies a request: SHA-256 of its method, path (path
// values included), query string (parsed and sorted by name, so the order
// of parameters does not matter), x-platform-req-nonce header and body.
// A multipart/form-data body counts by its parts (form name, file name,
// content), not its bytes: a client that sends the same file again makes
// a new boundary.
func requestHash(r *http.Request, body []byte) string {
	h := sha256.New()
	field := func(s string) {
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	field(r.Method)
	field(r.URL.EscapedPath())
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		field("raw:" + r.URL.RawQuery)
	} else {
		field(q.Encode())
	}
	field(strings.ToLower(strings.TrimSpace(r.Header.Get(web.HeaderNonce))))
	if !multipartDigest(h, r.Header.Get("Content-Type"), body) {
		sum := sha256.Sum256(body)
		field("body:" + hex.EncodeToString(sum[:]))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// multipartDigest writes the parts of a multipart/form-data body to h and
// reports whether the body was one; a malformed one is left to the raw
// bytes (the handler refuses it anyway).
func multipartDigest(h hash.Hash, contentType string, body []byte) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return false
	}
	var parts bytes.Buffer
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false
		}
		content := sha256.New()
		if _, err := io.Copy(content, p); err != nil {
			return false
		}
		fmt.Fprintf(&parts, "part %q %q %x\n", p.FormName(), p.FileName(), content.Sum(nil))
	}
	h.Write([]byte("multipart\n"))
	h.Write(parts.Bytes())
	return true
}

// storedHeaders are the response headers a replay repeats (the others
// belong to the response, such as x-request-id, or are set by the
// gateway).
var storedHeaders = []string{"Content-Type", "Location", "Retry-After"}

// captureWriter passes a response on as it is written and keeps a copy of
// its status, the stored headers (as of WriteHeader) and up to
// maxResponse bytes of body.
type captureWriter struct {
	http.ResponseWriter
	status   int
	header   map[string]string
	body     bytes.Buffer
	overflow bool
}

func (c *captureWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
		c.header = map[string]string{}
		for _, name := range storedHeaders {
			if v := c.ResponseWriter.Header().Get(name); v != "" {
				c.header[name] = v
			}
		}
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.overflow {
		if c.body.Len()+len(b) > maxResponse {
			c.overflow = true
			c.body = bytes.Buffer{}
		} else {
			c.body.Write(b)
		}
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// response is the captured response.
func (c *captureWriter) response(status int) response {
	return response{status: status, header: c.header, body: c.body.Bytes(), tooLarge: c.overflow}
}

// response is a first response as captured.
type response struct {
	status   int
	header   map[string]string
	body     []byte
	tooLarge bool
}

// replay is a stored response to answer again (returned as an error by
// claim).
type replay struct {
	status   int
	header   map[string]string
	body     []byte
	tooLarge bool
}

func (r *replay) Error() string { return fmt.Sprintf("replay of a %d response", r.status) }

// write answers the stored response, marked as replayed.
func (rp *replay) write(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(ReplayedHeader, "true")
	if rp.tooLarge {
		web.Error(w, r, errTooLarge)
		return
	}
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rp.status)
	if len(rp.body) > 0 {
		_, _ = w.Write(rp.body)
	}
}
