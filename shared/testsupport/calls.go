package testsupport

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"sync"

	"github.com/loyalty-platform/platform/shared/callcount"
)

// headerCalls names, on a request DoCounted sends, the counter its storage
// calls go to. The harness's server reads it before API Gateway's stand-in
// does (which passes the request's context on to the function).
const headerCalls = "x-test-calls"

// callCounters are the counters of the requests DoCounted has in flight.
var callCounters sync.Map // id -> *callcount.Counter

// countCalls puts the counter a request names (headerCalls) in its
// context: the SDK middleware counts the function's DynamoDB and S3 calls
// in it, as the web middleware does for the request log line.
func countCalls(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(headerCalls); id != "" {
			if c, ok := callCounters.Load(id); ok {
				r = r.WithContext(callcount.With(r.Context(), c.(*callcount.Counter)))
			}
			r.Header.Del(headerCalls)
		}
		next.ServeHTTP(w, r)
	})
}

// DoCounted is Do, and returns the DynamoDB and S3 calls the request made
// (every call is made before the function answers, so the count is
// complete when the response arrives).
func (h *Harness) DoCounted(method, path string, body any, headers ...Headers) (*Resp, *callcount.Counter) {
	h.T.Helper()
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	c := callcount.New()
	callCounters.Store(id, c)
	defer callCounters.Delete(id)
	r := h.Do(method, path, body, append(headers, Headers{headerCalls, id})...)
	return r, c
}
