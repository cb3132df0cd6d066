// Package awsapitest holds what the tests of an AWS API caller built on
// awsapi share: a service stand-in that records requests and answers from
// a script, the check of a request's Signature Version 4 signature, and
// the check of a constructor's endpoint choice.
package awsapitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The test credentials, region and signing time.
const (
	Region = "eu-west-1"
	Key    = "AKIDEXAMPLE"
	Secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// SignedAt is the fixed signing time of every test request.
var SignedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// Received is one request as the server saw it.
type Received struct {
	Method, Path, Host string
	Header             http.Header
	Body               []byte
}

// Answer is a scripted response.
type Answer struct {
	Status int
	Header map[string]string
	Body   string
}

// Server is a service stand-in that records requests and answers each
// attempt with the next scripted answer (the last one repeats), or, with
// no script, with what its default function makes of the request.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Received
	answers  []Answer
}

// NewServer starts a Server that answers from answers, or, without any,
// with def of each request; it closes when the test ends.
func NewServer(t testing.TB, def func(Received) Answer, answers ...Answer) *Server {
	t.Helper()
	s := &Server{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got := Received{Method: r.Method, Path: r.URL.RequestURI(), Host: r.Host, Header: r.Header.Clone(), Body: b}
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, got)
		var a Answer
		if len(s.answers) > 0 {
			a = s.answers[min(n, len(s.answers)-1)]
		} else {
			a = def(got)
		}
		s.mu.Unlock()
		for k, v := range a.Header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.Status)
		io.WriteString(w, a.Body)
	}))
	t.Cleanup(s.Close)
	return s
}

// Received returns the requests so far.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.requests...)
}

// Resign signs a copy of the received request (its signed headers only)
// with creds for service in Region at SignedAt and returns its
// Authorization header.
func Resign(t testing.TB, r Received, creds aws.Credentials, service string) string {
	t.Helper()
	auth := r.Header.Get("Authorization")
	_, signed, ok := strings.Cut(auth, "SignedHeaders=")
	if !ok {
		t.Fatalf("Authorization %q names no signed headers", auth)
	}
	signed, _, _ = strings.Cut(signed, ",")
	req, err := http.NewRequest(r.Method, "http://"+r.Host+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			req.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(r.Body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, Region, SignedAt); err != nil {
		t.Fatal(err)
	}
	return req.Header.Get("Authorization")
}

// CheckSigned checks that r was signed as the SDK's signer signs it with
// Key, Secret and the session token token, for service in Region at
// SignedAt: its X-Amz-Date and X-Amz-Security-Token, the signed headers
// (Content-Length when there is a body, and the request's own headers
// extra, such as SQS's x-amz-target), the scope and the signature, and
// that the secret key shows in no header.
func CheckSigned(t testing.TB, r Received, token, service string, extra ...string) {
	t.Helper()
	if got, want := r.Header.Get("X-Amz-Date"), "20260102T030405Z"; got != want {
		t.Errorf("X-Amz-Date: got %q, want %q", got, want)
	}
	if got, want := r.Header.Get("X-Amz-Security-Token"), token; got != want {
		t.Errorf("X-Amz-Security-Token: got %q, want %q", got, want)
	}
	headers := []string{"content-type", "host", "x-amz-date"}
	if len(r.Body) > 0 {
		headers = append(headers, "content-length")
	}
	if token != "" {
		headers = append(headers, "x-amz-security-token")
	}
	for _, h := range extra {
		headers = append(headers, strings.ToLower(h))
	}
	sort.Strings(headers)
	signed := strings.Join(headers, ";")
	auth := r.Header.Get("Authorization")
	wantPrefix := "AWS4-HMAC-SHA256 Credential=" + Key + "/20260102/" + Region + "/" + service + "/aws4_request, SignedHeaders=" + signed + ", Signature="
	if !strings.HasPrefix(auth, wantPrefix) {
		t.Errorf("Authorization: got %q, want prefix %q", auth, wantPrefix)
	}
	creds := aws.Credentials{AccessKeyID: Key, SecretAccessKey: Secret, SessionToken: token}
	if got, want := auth, Resign(t, r, creds, service); got != want {
		t.Errorf("Authorization: got %q, re-signed %q", got, want)
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			if strings.Contains(v, Secret) {
				t.Errorf("header %s %q holds the secret key", k, v)
			}
		}
	}
}

// CheckEndpoints checks the endpoint endpoint(region) chooses under the
// environment variables AWS_ENDPOINT_URL_<endpointID> and
// AWS_ENDPOINT_URL: the one named for the API (without its trailing
// slash), else the one named for every service, else AWS's regional
// endpoint https://<host>.<region>.amazonaws.com (.com.cn in China).
func CheckEndpoints(t *testing.T, endpointID, host string, endpoint func(region string) string) {
	t.Helper()
	tests := []struct {
		name          string
		region        string
		api, anything string
		want          string
	}{
		{name: "regional", region: "eu-west-1", want: "https://" + host + ".eu-west-1.amazonaws.com"},
		{name: "china", region: "cn-northwest-1", want: "https://" + host + ".cn-northwest-1.amazonaws.com.cn"},
		{name: "china north", region: "cn-north-1", want: "https://" + host + ".cn-north-1.amazonaws.com.cn"},
		{name: "every service", region: "eu-west-1", anything: "http://localhost:4566", want: "http://localhost:4566"},
		{name: "this api", region: "eu-west-1", api: "http://127.0.0.1:9000/", anything: "http://localhost:4566", want: "http://127.0.0.1:9000"},
		{name: "this api alone", region: "cn-north-1", api: "http://127.0.0.1:9911", want: "http://127.0.0.1:9911"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL_"+endpointID, tt.api)
			t.Setenv("AWS_ENDPOINT_URL", tt.anything)
			if got, want := endpoint(tt.region), tt.want; got != want {
				t.Errorf("Endpoint: got %q, want %q", got, want)
			}
		})
	}
}

// Refusal is the error type a package on awsapi makes of a service's
// refusal.
type Refusal interface {
	error
	// Throttled reports whether the service refused for its rate.
	Throttled() bool
}

// CheckRefusal checks that err is a *E equal to want, with the text
// wantText and Throttled wantThrottled, and that its text holds neither Key
// nor Secret; it returns the *E. Without a *E in err the test ends.
func CheckRefusal[E any, P interface {
	*E
	Refusal
}](t testing.TB, err error, want P, wantText string, wantThrottled bool) P {
	t.Helper()
	var got P
	if !errors.As(err, &got) {
		t.Fatalf("got %v (%T), want a %T", err, err, want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("error: got %+v, want %+v", *got, *want)
	}
	if got, want := err.Error(), wantText; got != want {
		t.Errorf("error text: got %q, want %q", got, want)
	}
	if got, want := got.Throttled(), wantThrottled; got != want {
		t.Errorf("Throttled: got %v, want %v", got, want)
	}
	if strings.Contains(err.Error(), Secret) || strings.Contains(err.Error(), Key) {
		t.Errorf("error %q holds credentials", err)
	}
	return got
}
