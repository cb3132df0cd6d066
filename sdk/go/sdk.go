package sdk

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// APIVersion is the x-api-version New sends: the newest the API reads (GET
// /users answers UserList from 4, GET /awards {items, page} from 8, the
// actions lists ask for 9), so answers have the shapes the generated
// types name first.
const APIVersion = 9

// New makes a client of the API at baseURL whose every request carries
// x-api-version APIVersion and the given editors (WithTenant, WithServiceKey,
// WithSession, WithBasic...).
func New(baseURL string, editors ...RequestEditorFn) (*ClientWithResponses, error) {
	opts := []ClientOption{WithRequestEditorFn(WithHeader("x-api-version", strconv.Itoa(APIVersion)))}
	for _, e := range editors {
		opts = append(opts, WithRequestEditorFn(e))
	}
	c, err := NewClientWithResponses(baseURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("sdk: new client of %s: %w", baseURL, err)
	}
	return c, nil
}

// WithHeader sets a request header.
func WithHeader(name, value string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set(name, value)
		return nil
	}
}

// WithTenant names the tenant (x-application-id); needed when no token names it.
func WithTenant(id string) RequestEditorFn { return WithHeader("x-application-id", id) }

// WithServiceKey authenticates with a tenant's service key
// (x-service-auth-token), acting as the tenant's admin.
func WithServiceKey(key string) RequestEditorFn { return WithHeader("x-service-auth-token", key) }

// WithSession authenticates as a session's user (Authorization: Token <id>,
// the `_id` of a Session).
func WithSession(id string) RequestEditorFn { return WithHeader("Authorization", "Token "+id) }

// WithBasic authenticates a login (GET /users/login only) with a credential
// and its password; provider (EMAIL, MOBILE...) is sent as AuthProvider
// when not empty.
func WithBasic(id, password, provider string) RequestEditorFn {
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+password))
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", auth)
		if provider != "" {
			req.Header.Set("AuthProvider", provider)
		}
		return nil
	}
}

// NewKey returns a new random UUID (version 4), for an Idempotency-Key or
// an x-platform-req-nonce. Send the same key with each retry of a call.
func NewKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// APIError is an answer of the API that is not a success. Code is the API's
// error code (VALIDATION_FAILED, NOT_FOUND...), or HTTP_<status> for an
// answer without one (API Gateway's own 429 or 5xx).
type APIError struct {
	Status    int
	Code      string
	Message   string
	RequestID string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
}

// Check returns err when it is not nil, an *APIError when resp is not a
// success (body being its body), and nil otherwise: pass it a generated
// response's HTTPResponse and Body and the call's error.
func Check(resp *http.Response, body []byte, err error) error {
	if err != nil {
		return err
	}
	if resp == nil {
		return fmt.Errorf("sdk: no response")
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	var b struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &b) != nil || b.Message == "" {
		b.Message = string(body)
	}
	if b.Code == "" {
		b.Code = "HTTP_" + strconv.Itoa(resp.StatusCode)
	}
	return &APIError{Status: resp.StatusCode, Code: b.Code, Message: b.Message, RequestID: resp.Header.Get("x-request-id")}
}

// Ptr returns a pointer to v, for the generated types' optional fields and
// parameters (sdk.Ptr(sdk.NewKey()), sdk.Ptr("T1-0042")).
func Ptr[T any](v T) *T { return &v }
