package web

import (
	"bytes"
	"io"
	"net/http"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// An Op is what a route does: it reads the request (the actor is the
// authenticated caller, whom the route's Access admitted) and returns the
// value to answer, or an error that Error maps to its status. Serve is
// compiled once for each answer type that is a struct, with type
// descriptors named after its whole shape: Ops that return any (the answer
// is encoded the same) share one copy, where a function's binary is near
// its size limit (the loyalty function's).
type Op[T any] func(r *http.Request, a actor.Actor) (T, error)

// Serve adapts op to a handler that answers its value as JSON with status
// (a Response as it says), or its error as {code, message} (Error).
//
// Serve is not inlined: inlined into a Routes method, it would make a copy
// of its handler for each route.
//
//go:noinline
func Serve[T any](status int, op Op[T]) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := op(r, CallerOf(r))
		if err != nil {
			Error(w, r, err)
			return
		}
		write(w, status, v)
	}
}

// ServeEmpty adapts op to a handler that answers status with no body.
//
// It is not inlined, for the reason Serve is not.
//
//go:noinline
func ServeEmpty(status int, op func(r *http.Request, a actor.Actor) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := op(r, CallerOf(r)); err != nil {
			Error(w, r, err)
			return
		}
		Empty(w, status)
	}
}

// Response is an answer an Op shapes beyond a JSON value with its route's
// status: another status, headers, or a body that is not JSON (a CSV file,
// a document encoded once). Serve writes it as it says.
type Response struct {
	// Status is the answer's status; 0 is the route's.
	Status int
	// Header holds headers of the answer (each replaces one of the same
	// name set before).
	Header http.Header
	// Body, when set, is written as it is (and closed when it is an
	// io.Closer); else Value, when set, is written as JSON; else the
	// answer has no body.
	Body  io.Reader
	Value any
}

// write answers v with status: a Response as it says, anything else as
// JSON.
func write(w http.ResponseWriter, status int, v any) {
	res, ok := v.(Response)
	if !ok {
		JSON(w, status, v)
		return
	}
	if res.Status != 0 {
		status = res.Status
	}
	for name, values := range res.Header {
		w.Header()[http.CanonicalHeaderKey(name)] = values
	}
	switch {
	case res.Body != nil:
		if c, ok := res.Body.(io.Closer); ok {
			defer c.Close()
		}
		w.WriteHeader(status)
		_, _ = io.Copy(w, res.Body)
	case res.Value != nil:
		JSON(w, status, res.Value)
	default:
		w.WriteHeader(status)
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
