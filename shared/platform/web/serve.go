package web

import (
	"bytes"
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// An Op is what a route does: it reads the request (the caller is the
// authenticated one) and returns the value to answer, or an error that
// Error maps to its status. Serve and ServeAdmin are compiled once for
// each answer type that is a struct, with type descriptors named after
// its whole shape: Ops that return any (the answer is encoded the same)
// share one copy, where a function's binary is near its size limit.
type Op[T any] func(r *http.Request, caller Caller) (T, error)

// Serve adapts op to a handler that answers its value as JSON with status,
// or its error as {code, message}.
func Serve[T any](status int, op Op[T]) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := op(r, CallerOf(r))
		if err != nil {
			Error(w, r, err)
			return
		}
		JSON(w, status, v)
	}
}

// ServeAdmin is Serve for admin routes: a caller who is not an admin is
// refused (401) before op reads the request, so a USER never learns more
// about a route than that it is not theirs.
func ServeAdmin[T any](status int, op Op[T]) http.HandlerFunc {
	return Serve(status, func(r *http.Request, c Caller) (T, error) {
		if err := c.RequireAdmin(); err != nil {
			var zero T
			return zero, err
		}
		return op(r, c)
	})
}

// ServeEmpty adapts op to a handler that answers status with no body.
func ServeEmpty(status int, op func(r *http.Request, caller Caller) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := op(r, CallerOf(r)); err != nil {
			Error(w, r, err)
			return
		}
		Empty(w, status)
	}
}

// RequiredBody reads a request body that must hold JSON (at most
// MaxBodyBytes: 413 beyond; empty: 422).
func RequiredBody(r *http.Request) ([]byte, error) {
	b, err := ReadBody(r, MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, apierr.Invalid("", "a JSON body is required")
	}
	return b, nil
}

// Decoded reads a JSON body into a new T (see Decode).
func Decoded[T any](r *http.Request, opts ...DecodeOption) (T, error) {
	var v T
	err := Decode(r, &v, opts...)
	return v, err
}
