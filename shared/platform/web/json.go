// Package web holds the HTTP plumbing every API function shares: strict JSON
// decoding, the {code, message} error writer, middleware (request ids, logs,
// recovery, authentication), each route's declared access (Route.Access,
// checked before its handler runs), the adapter that answers what a
// handler returns (Serve), paging parameters and API versions.
package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// MaxBodyBytes is the largest JSON body accepted by any endpoint.
const MaxBodyBytes = 1 << 20

// Decode reads a JSON body into dst strictly: one JSON object, no unknown
// fields, types as declared, at most MaxBodyBytes. Errors are
// VALIDATION_FAILED (naming the field where there is one) or
// PAYLOAD_TOO_LARGE.
func Decode(r *http.Request, dst any, opts ...DecodeOption) error {
	body, err := ReadBody(r, MaxBodyBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.Invalid("", "a JSON body is required")
	}
	return DecodeBytes(body, dst, opts...)
}

// DecodeOptional is Decode for endpoints whose body may be absent; an empty
// body leaves dst unchanged.
func DecodeOptional(r *http.Request, dst any, opts ...DecodeOption) error {
	body, err := ReadBody(r, MaxBodyBytes)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	return DecodeBytes(body, dst, opts...)
}

// ReadBody reads at most limit bytes of the request body; a longer body is
// PAYLOAD_TOO_LARGE.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apierr.Invalid("", "the request body could not be read")
	}
	if int64(len(body)) > limit {
		return nil, apierr.Errorf(apierr.PayloadTooLarge, "the request body is larger than %d bytes", limit)
	}
	return body, nil
}

// MaxDepth is the deepest nesting of objects and arrays a JSON body may
// have. No resource needs more; the limit keeps decoding (and the paths it
// names in errors) linear in the body size.
const MaxDepth = 32

// depth returns the deepest nesting of objects and arrays in a JSON text,
// ignoring brackets inside strings. Malformed text is left to the decoder.
func depth(body []byte) int {
	level, deepest, inString, escaped := 0, 0, false, false
	for _, c := range body {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if level++; level > deepest {
				deepest = level
			}
		case c == '}' || c == ']':
			level--
		}
	}
	return deepest
}

// deepPath names the first value of body nested at level limit (such as
// extended.a[0]) whose content goes one level deeper, or "" when there is
// none or the text does not read that far. It walks the tokens without
// recursion, so any depth is safe.
func deepPath(body []byte, limit int) string {
	type level struct {
		object  bool
		wantKey bool   // in an object: the next token is a key
		name    string // the path of the value at this level
		next    int    // in an array: the index of the next element
		key     string // in an object: the key of the next value
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:top]
			continue
		}
		if top >= 0 && stack[top].wantKey {
			stack[top].key, _ = tok.(string)
			stack[top].wantKey = false
			continue
		}
		// tok starts a value: name it.
		at := ""
		if top >= 0 {
			p := &stack[top]
			if p.object {
				if at = p.key; p.name != "" {
					at = p.name + "." + p.key
				}
				p.wantKey = true
			} else {
				at = fmt.Sprintf("%s[%d]", p.name, p.next)
				p.next++
			}
		}
		if d, ok := tok.(json.Delim); ok {
			if len(stack) == limit {
				return stack[top].name
			}
			stack = append(stack, level{object: d == '{', wantKey: d == '{', name: at})
		}
	}
}

// DecodeBytes decodes one strict JSON value from body into dst. A null is
// refused (VALIDATION_FAILED naming the field) unless dst keeps it as a
// value (any, json.RawMessage) or an option declares the field Nullable.
func DecodeBytes(body []byte, dst any, opts ...DecodeOption) error {
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] != '{' {
		return apierr.Invalid("", "the body must be a JSON object")
	}
	if !utf8.Valid(body) {
		return apierr.Invalid("", "the body is not valid UTF-8 text")
	}
	if depth(body) > MaxDepth {
		return apierr.Invalid(deepPath(body, MaxDepth), "the body is nested deeper than %d levels", MaxDepth)
	}
	if err := checkKeys(body, reflect.TypeOf(dst)); err != nil {
		return err
	}
	var o decodeOptions
	for _, opt := range opts {
		opt(&o)
	}
	if err := checkNulls(body, reflect.TypeOf(dst), o.nullable); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(body, err)
	}
	if dec.More() {
		return apierr.Invalid("", "the body must hold exactly one JSON object")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return apierr.Invalid("", "the body must hold exactly one JSON object")
	}
	return nil
}

func decodeError(body []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &syntax):
		return apierr.Invalid("", "malformed JSON at byte %d", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apierr.Invalid("", "malformed JSON: unexpected end of input")
	case errors.As(err, &typ):
		field := typeErrorPath(body, typ)
		if field == "" {
			field = "body"
		}
		return apierr.Invalid(field, "must be of type %s", jsonType(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apierr.Invalid(name, "unknown field")
	default:
		return apierr.Invalid("", "malformed JSON: %s", sanitize(err.Error()))
	}
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	default:
		return kind
	}
}

func sanitize(s string) string {
	s = strings.TrimPrefix(s, "json: ")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// JSON writes v as a JSON response with status.
func JSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"code":"INTERNAL","message":"internal error"}`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// Empty writes a response with status and no body.
func Empty(w http.ResponseWriter, status int) {
	w.WriteHeader(status)
}

// ErrorBody is the shape of every error response.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error writes err as {code, message}. Errors that are not *apierr.Error are
// logged with the request's logger and answered 500 "internal error", but
// for DynamoDB refusing a value it cannot hold (ddb.IsUnstorable), which is
// VALIDATION_FAILED. A request whose Idempotency-Key was taken over while it
// ran (its transaction failed on the key's fence, ddb.Claim.Lost) is
// answered ddb.ErrClaimLost (409 IDEMPOTENCY_IN_PROGRESS) whatever err a
// domain made of that failure: it changed nothing.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	if ddb.ClaimOf(r.Context()).Lost() && !errors.Is(err, ddb.ErrClaimLost) {
		// The request's Idempotency-Key was claimed again while it ran
		// (ddb.Claim): its transaction failed on the key's fence, so it
		// changed nothing, whatever error a domain made of that.
		Logger(r.Context()).Warn("request lost its Idempotency-Key", "error", err.Error())
		err = ddb.ErrClaimLost
	}
	e, ok := apierr.As(err)
	if !ok && ddb.IsUnstorable(err) {
		// A value DynamoDB refused that no check caught: the client's
		// request made it, so it is the client's error, not a 500.
		Logger(r.Context()).Warn("request holds a value DynamoDB cannot store", "error", err.Error())
		e, ok = apierr.Invalid("", "the request holds a value DynamoDB cannot store (an item over 400 KB, a number out of range, nesting too deep or an empty key)"), true
	}
	if !ok || e.Code.Status() >= 500 {
		Logger(r.Context()).Error("request failed", "error", err.Error())
		JSON(w, http.StatusInternalServerError, ErrorBody{Code: string(apierr.Internal), Message: "internal error"})
		return
	}
	if e.Code.Status() == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Token realm="platform"`)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	JSON(w, e.Code.Status(), ErrorBody{Code: string(e.Code), Message: e.Message})
}

// Errorf is a convenience for handlers: it formats an internal error.
func Errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
