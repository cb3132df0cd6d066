package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Paging limits (README "The HTTP contract in short").
const (
	DefaultLimit = 100
	MaxLimit     = 1000
	// MaxStartKey is the longest startKey a list takes: more than twice the
	// longest nextKey (about 1,830 characters, the actions list's, which
	// holds a key for each of its shards).
	MaxStartKey = 4096
)

// Page is the paging block of every list response.
type Page struct {
	Limit    int    `json:"limit"`
	Count    int    `json:"count"`
	StartKey string `json:"startKey,omitempty"`
	NextKey  string `json:"nextKey,omitempty"`
}

// Paging reads `limit` and `startKey` from the query string.
func Paging(r *http.Request) (limit int, startKey string, err error) {
	q := r.URL.Query()
	limit = DefaultLimit
	if v := q.Get("limit"); v != "" {
		n, convErr := strconv.Atoi(v)
		if convErr != nil || n < 1 || n > MaxLimit {
			return 0, "", apierr.Invalid("limit", "must be an integer from 1 to %d", MaxLimit)
		}
		limit = n
	}
	startKey = q.Get("startKey")
	if len(startKey) > MaxStartKey {
		return 0, "", apierr.Invalid("startKey", "must be at most %d characters", MaxStartKey)
	}
	return limit, startKey, nil
}

// CheckPaging returns the error of malformed paging parameters (see
// Paging), or nil: a Route.Before for a route that read them before it
// looked at its caller.
func CheckPaging(r *http.Request) error {
	_, _, err := Paging(r)
	return err
}

// APIVersion returns the x-api-version header as an integer; 0 means absent
// (the legacy behaviour). A value that is not a positive integer is 422.
func APIVersion(r *http.Request) (int, error) {
	v := strings.TrimSpace(r.Header.Get(HeaderAPIVersion))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, apierr.Invalid(HeaderAPIVersion, "must be a positive integer")
	}
	return n, nil
}

// CheckAPIVersion returns the error of a malformed x-api-version header
// (see APIVersion), or nil: a Route.Before for a route that read the
// version before it looked at its caller.
func CheckAPIVersion(r *http.Request) error {
	_, err := APIVersion(r)
	return err
}

// BoolParam reads an optional boolean query parameter ("true"/"false").
func BoolParam(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, apierr.Invalid(name, "must be true or false")
	}
	return b, nil
}

// ParamValues returns the values of a query parameter that may be an
// array: given as name or as name[] (the bracket form some clients use for
// arrays), each possibly repeated, in that order.
func ParamValues(r *http.Request, name string) []string {
	q := r.URL.Query()
	return append(q[name], q[name+"[]"]...)
}

// ListParam splits a comma-separated query parameter, dropping empty items.
// The parameter may be repeated and may also be given as name[] (see
// ParamValues).
func ListParam(r *http.Request, name string) []string {
	var out []string
	for _, v := range ParamValues(r, name) {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
