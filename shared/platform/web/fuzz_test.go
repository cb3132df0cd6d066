package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// clientError fails unless err is nil or an *apierr.Error answered with a
// 4xx status: nothing a client sends may be a 5xx.
func clientError(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	e, ok := apierr.As(err)
	if !ok {
		t.Fatalf("%s: %v is not a client error", what, err)
	}
	if s := e.Code.Status(); s < 400 || s > 499 {
		t.Fatalf("%s: %v answers %d", what, err, s)
	}
	if e.Message == "" {
		t.Fatalf("%s: error without a message", what)
	}
}

// fuzzBody is what the strict decoder fills in the fuzz target: nested
// structs, maps, slices, pointers, free-form values, time and raw JSON.
// Its fields are omitempty so that the round trip sends no null the
// decoder refuses (a nil slice encodes as null).
type fuzzBody struct {
	body
	ID      string                      `json:"_id,omitempty"`
	Price   float64                     `json:"price,omitempty"`
	On      *bool                       `json:"on,omitempty"`
	When    *time.Time                  `json:"when,omitempty"`
	Raw     json.RawMessage             `json:"raw,omitempty"`
	Any     any                         `json:"any,omitempty"`
	Matrix  [][]int                     `json:"matrix,omitempty"`
	Nested  map[string]map[string]inner `json:",omitempty"`
	private int
}

// FuzzDecodeBytes: the strict decoder never panics, answers every body it
// refuses with a 4xx {code, message}, and what it accepts encodes back to
// JSON that it accepts again as the same value.
func FuzzDecodeBytes(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"name":"a","count":1,"tags":["x"],"inner":{"line1":"l"}}`,
		`{"items":[{"line1":"a"},{"line1":"b"}],"free":{"k":[1,{"z":null}]}}`,
		`{"links":{"deliveroo":{"enabled":true,"tables":["1"]}},"flags":{"a":true}}`,
		`{"Name":"case"}`, `{"name":"a","name":"b"}`, `{"inner":{"zip":1}}`, `{"count":"1"}`,
		`{"count":1e400}`, `{"price":-0}`, `{"when":"2024-05-01T12:00:00Z"}`, `{"raw":{"a":[1,2]}}`,
		`{"any":[[[[]]]]}`, `{"matrix":[[1,2],[3]]}`, `{"Nested":{"a":{"b":{"line1":"x"}}}}`,
		`[]`, `"x"`, `{} {}`, `{"a":1`, "{\"name\":\"\xff\"}", `{"name":"\ud800"}`,
		`{"tags":[null]}`, `{"inner":null}`, `{"_id":"\u0000"}`,
		`{"any":{"n":1e308}}`, `{"free":{"n":1e126}}`, `{"price":1e-131}`, `{"raw":{"":1}}`,
		`{"free":{"n":123456789012345678901234567890123456789}}`, `{"any":` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `}`,
		`{"name":"=HYPERLINK(\"x\")","free":{"f":"@SUM(1+1)"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v fuzzBody
		err := web.DecodeBytes(data, &v)
		clientError(t, "decode", err)
		if err != nil {
			return
		}
		again, mErr := json.Marshal(v)
		if mErr != nil {
			return // a value JSON cannot encode (such as a time out of range) was refused nowhere else
		}
		var w fuzzBody
		if err := web.DecodeBytes(again, &w); err != nil {
			t.Fatalf("decoded %q, encoded %s, which does not decode: %v", data, again, err)
		}
		if !reflect.DeepEqual(normal(t, v), normal(t, w)) {
			t.Fatalf("round trip of %q changed the value:\n%+v\n%+v", data, v, w)
		}
	})
}

// normal re-encodes v as generic JSON, so that values that hold the same
// JSON (a nil slice and an empty one inside free-form data) compare equal.
func normal(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// request builds a GET request with a raw query string and headers, as
// the middleware passes it on (a query string that does not parse is
// refused before any handler reads it).
func request(rawQuery string, header ...string) (*http.Request, bool) {
	if _, err := url.ParseQuery(rawQuery); err != nil {
		return nil, false
	}
	r := &http.Request{Method: "GET", URL: &url.URL{Path: "/x", RawQuery: rawQuery}, Header: http.Header{}}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return r, true
}

// FuzzAPIVersion: x-api-version is absent (0), a positive integer that
// prints back as sent (spaces aside), or a 4xx.
func FuzzAPIVersion(f *testing.F) {
	for _, s := range []string{"", "1", "8", " 9 ", "0", "-1", "+3", "08", "1e3", "99999999999999999999", "٣", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, _ := request("", web.HeaderAPIVersion, v)
		n, err := web.APIVersion(r)
		clientError(t, "x-api-version", err)
		if err != nil {
			return
		}
		sent := r.Header.Get(web.HeaderAPIVersion)
		switch {
		case n < 0:
			t.Fatalf("%q read as %d", v, n)
		case n == 0 && strings.TrimSpace(sent) != "":
			t.Fatalf("%q read as absent", v)
		case n > 0:
			if back, err := strconv.Atoi(strings.TrimSpace(sent)); err != nil || back != n {
				t.Fatalf("%q read as %d", v, n)
			}
		}
	})
}

// FuzzQueryParams: the paging, boolean and list parameters never panic,
// refuse with a 4xx, and keep their documented ranges.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"", "limit=10&startKey=abc", "limit=0", "limit=1001", "limit=-5", "limit=1e2",
		"flag=true", "flag=maybe", "tags=a,b,,c&tags[]=d", "tags=%2C", "limit=1&limit=2", "startKey=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		r, ok := request(raw)
		if !ok {
			return
		}
		limit, _, err := web.Paging(r)
		clientError(t, "paging", err)
		if err == nil && (limit < 1 || limit > web.MaxLimit) {
			t.Fatalf("%q: limit %d", raw, limit)
		}
		_, err = web.BoolParam(r, "flag", false)
		clientError(t, "flag", err)
		for _, item := range web.ListParam(r, "tags") {
			if item == "" || strings.TrimSpace(item) != item {
				t.Fatalf("%q: list item %q", raw, item)
			}
		}
	})
}
