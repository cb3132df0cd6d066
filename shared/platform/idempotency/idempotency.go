// Package idempotency makes the routes that move points or money (and the
// import POSTs) safe to retry: a request that carries an Idempotency-Key
// header runs once, and a repeat of it within Lifetime is answered with the
// first response, byte for byte, with `Idempotent-Replayed: true`.
//
// A route opts in with web.Route.Idempotent; Decorate wraps those routes
// (web.Route.Around; app.Base.Lambda does it for every API function). The
// wrapper runs inside web.Handler's chain, so after authentication: it
// needs the caller. It runs before the route's access check, so a request
// with a malformed key is 422 whoever sends it. Without the header a route behaves exactly as without the
// wrapper, and nothing is stored.
//
// With the header:
//
//   - The key is the header's whole value, 1 to MaxKeyLength printable
//     ASCII characters, commas included (else 422 VALIDATION_FAILED naming
//     the header). It is read from the API Gateway event (web.WholeHeader),
//     not r.Header, where the api-proxy adapter splits a value at its
//     commas. A header sent twice is one value joined by a comma in a
//     payload 2.0 event, so it is that one key.
//   - The record is scoped to the tenant, the caller (a user, by user id,
//     whatever session they use; the tenant's service key; an admin
//     session made from the service key is the user "service") and the
//     route (method and pattern): a key of one caller never replays
//     another caller's response, and one key may be used once per route.
//   - The request is identified by a SHA-256 of its method, path (with its
//     path values), canonical query string, x-platform-req-nonce header and
//     body (a multipart/form-data body by its parts' names, file names and
//     contents, so a new boundary is the same request). The same key with
//     another request is 422 IDEMPOTENCY_KEY_REUSED.
//   - A repeat while the first request is being served is 409
//     IDEMPOTENCY_IN_PROGRESS with Retry-After: 1.
//   - The first response is stored (status, Content-Type, Location,
//     Retry-After and the body) when its status is below 500 and is none of
//     401, 409 and 429: a success and a client error (validation, business
//     rule, not found) replay; a server error, a crash, or an answer that
//     says "retry" (unauthorized, a concurrent change, throttling) releases
//     the key, so a retry with it runs again.
//   - A record left IN_FLIGHT longer than InFlightTimeout (its request's
//     function crashed or timed out before it could finish or release it)
//     is abandoned: the next request with the key and the same request
//     claims it again and runs, unless the first request committed its
//     change (below).
//
// A key never applies twice, whatever fails. The claim carries a fence
// (ddb.Claim, in the request's context): every transaction the handler
// commits through ddb.Tx.Run or ddb.Transact also updates the key's record,
// `SET committed = true`, conditional on the record still being this
// claim's and IN_FLIGHT. So:
//
//   - a request whose change committed is never run again: if its
//     response was stored, a repeat replays it; if not (the store failed,
//     the function died, or its answer is one not kept, such as a 5xx
//     after the change), a repeat is 409
//     IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE (after InFlightTimeout when
//     the record is still IN_FLIGHT, at once when the request could
//     record it): the change was made, its response is lost, read the
//     resource;
//   - a request whose key was claimed again (it ran past InFlightTimeout
//     with nothing committed, or its transaction reached DynamoDB late)
//     commits nothing: its transaction fails whole on the fence and it
//     answers 409 IDEMPOTENCY_IN_PROGRESS (ddb.ErrClaimLost), and its
//     record is left to the claim that holds it;
//   - a key is released (DeleteItem) only when the record is not marked
//     committed, so a transaction whose outcome the request did not learn
//     (a timeout) keeps the key when it did commit; one that reaches
//     DynamoDB after the release fails on its fence.
//
// The claim travels in the context because the context is the only path
// from this wrapper to the transactions that domains build (as the request
// id and the call counter do); only infrastructure packages read it
// (idempotency, web, ddb), never a domain. A request that commits no
// transaction (a read, a refused request) is unaffected; one that commits
// several marks the record in each. The import POSTs write their
// operation with a transaction of their own (shared/domain/operation), outside
// the fence: their nonce makes a repeat resume the same operation, and
// the rows are applied by the jobs function, once per operation.
//
// Storage: one conditional PutItem (the claim) before the handler and one
// conditional UpdateItem (the response) or DeleteItem (the release) after
// it, in the Operations table; a repeat costs the failed PutItem, which
// returns the stored record (ReturnValuesOnConditionCheckFailure). The
// fence is one more item in transactions the handler runs anyway: it
// costs no call.
package idempotency

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Header names.
const (
	// Header is the request header that carries the key.
	Header = "Idempotency-Key"
	// ReplayedHeader is set to "true" on a replayed response.
	ReplayedHeader = "Idempotent-Replayed"
)

const (
	// Lifetime is how long a key is remembered after its first request
	// (DynamoDB TTL on expiresAt, and every read treats an older record
	// as absent): 7 days, so that a till or a job that retries after a
	// long outage (a weekend) is still answered from the first request;
	// Stripe keeps keys 24 hours.
	Lifetime = 7 * 24 * time.Hour
	// InFlightTimeout is how long a record may stay IN_FLIGHT before it
	// is taken for abandoned: twice the API functions' Lambda timeout
	// (29 s, template.yaml), so a request that still runs is never
	// overtaken.
	InFlightTimeout = 60 * time.Second
	// MaxKeyLength is the longest key accepted.
	MaxKeyLength = 255

	// maxRequestBody is the largest body the wrapper reads to identify a
	// request: a Lambda request event is at most 6 MB, so a larger body
	// cannot come through API Gateway. A larger one is passed on without
	// the key (the handler refuses it).
	maxRequestBody = 6 << 20
	// maxResponse is the largest response captured (Lambda answers at most
	// 6 MB).
	maxResponse = 6 << 20
	// maxStoredBody is the largest stored body (gzip-compressed when that
	// is smaller); DynamoDB items are at most 400 KB.
	maxStoredBody = 300 << 10
	// writeTimeout bounds the write that records or releases a key, which
	// runs even when the request's context ended.
	writeTimeout = 5 * time.Second
)

// Errors answered by the wrapper.
var (
	ErrKeyReused  = apierr.New(apierr.IdempotencyKeyReused, "this Idempotency-Key was used with another request: send a new key for a new request")
	ErrInProgress = &apierr.Error{Code: apierr.IdempotencyInProgress, Message: "a request with this Idempotency-Key is still being processed: retry shortly", RetryAfter: time.Second}
	errTooLarge   = apierr.New(apierr.Conflict, "the request with this Idempotency-Key was done, but its response is too large to be replayed")
	// ErrCommittedWithoutResponse answers a repeat of a request that made
	// its change but whose response was not stored: running it again
	// would apply the change twice.
	ErrCommittedWithoutResponse = apierr.New(apierr.IdempotencyCommittedWithoutResponse, "the request with this Idempotency-Key made its change, but its response was lost: read the resource to see the result (do not retry with a new key)")
)

// Store keeps the records of idempotency keys in the Operations table.
type Store struct {
	DB    ddb.API
	Table string
	Clock clock.Clock
}

// Decorate returns routes with the Idempotent ones wrapped (see Wrap)
// around their checked handlers (web.Route.Around: the key is claimed
// before the route's access is checked); the others are unchanged.
func (s *Store) Decorate(routes []web.Route) []web.Route {
	out := make([]web.Route, len(routes))
	for i, rt := range routes {
		out[i] = rt
		if !rt.Idempotent {
			continue
		}
		pattern, inner := rt.Pattern(), rt.Around
		out[i].Around = func(h http.HandlerFunc) http.HandlerFunc {
			if inner != nil {
				h = inner(h)
			}
			return s.Wrap(pattern, h)
		}
	}
	return out
}

// Wrap returns next made idempotent for requests with the Idempotency-Key
// header; route ("METHOD /pattern") is part of each key's scope.
func (s *Store) Wrap(route string, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The whole value is the key: r.Header holds it split at its
		// commas (the api-proxy adapter), so it is read from the event.
		value, present := web.WholeHeader(r, Header)
		if !present {
			next(w, r)
			return
		}
		caller := web.CallerOf(r)
		if !caller.Authenticated() || caller.TenantID == "" {
			// Every such route needs a caller: the handler answers 401.
			next(w, r)
			return
		}
		key, err := ParseKey(value)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		body, whole, err := readBody(r)
		if err != nil {
			web.Error(w, r, err)
			return
		}
		if !whole {
			// Larger than any request that can reach a function: the
			// handler refuses it (413) without any effect.
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
			next(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		id := recordID{tenantID: caller.TenantID, principal: principal(caller), route: route, key: key}
		hash := requestHash(r, body)
		c, err := s.claim(r.Context(), id, hash)
		var rep *replay
		switch {
		case errors.As(err, &rep):
			rep.write(w, r)
			return
		case errors.Is(err, ErrCommittedWithoutResponse):
			// About the first request, as a replay is.
			w.Header().Set(ReplayedHeader, "true")
			web.Error(w, r, err)
			return
		case err != nil:
			web.Error(w, r, err)
			return
		}
		// The fence rides in the context into every transaction the
		// handler commits (ddb.Transact).
		s.serve(w, r.WithContext(ddb.WithClaim(r.Context(), c.fence)), next, c)
	}
}

// serve runs next for a claimed key, capturing its response, then stores
// the response or releases the key (settle: a request that committed a
// change keeps it). A panic settles the key and goes on (the recovery
// middleware answers 500). A request whose key was claimed again while it
// ran (its transaction failed on the fence, so it changed nothing) leaves
// the record to the claim that holds it.
func (s *Store) serve(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, c *claim) {
	cw := &captureWriter{ResponseWriter: w}
	finished := false
	defer func() {
		if finished {
			return
		}
		// next panicked (or called runtime.Goexit).
		if !c.fence.Lost() {
			s.settle(r, c, "the handler did not finish")
		}
	}()
	next(cw, r)
	finished = true
	if c.fence.Lost() {
		web.Logger(r.Context()).Warn("idempotency: the key was claimed again while the request ran; it committed nothing", "route", c.id.route)
		return
	}
	status := cw.status
	if status == 0 {
		status = http.StatusOK
	}
	if !Stored(status) {
		s.settle(r, c, "")
		return
	}
	s.complete(r, c, cw.response(status))
}

// Stored reports whether a first response with status is stored and
// replayed: below 500, except 401, 409 and 429, which say that the
// request had no effect and may be retried (so the key is released).
func Stored(status int) bool {
	switch {
	case status >= 500:
		return false
	case status == http.StatusUnauthorized, status == http.StatusConflict, status == http.StatusTooManyRequests:
		return false
	}
	return true
}

// principal names the caller within the tenant: a user by id (every
// session of the user is the same caller; an admin session made from the
// service key is the user "service"), or the tenant's service key.
func principal(c actor.Actor) string {
	if c.UserID != "" {
		return "USER:" + c.UserID
	}
	return "SERVICEKEY"
}

// detached returns a context for a write that must happen even when the
// request's context ended (the client went away, the deadline passed).
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
}
