package awsapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/loyalty-platform/platform/shared/aws/awsapi"
	"github.com/loyalty-platform/platform/shared/aws/awsapi/awsapitest"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// service is the signing name of the test API.
const service = "example"

// newCaller returns a Caller pointed at url with a fixed clock and no wait
// before its retry.
func newCaller(url string, creds aws.CredentialsProvider) *awsapi.Caller {
	c := awsapi.New(aws.Config{Region: awsapitest.Region, Credentials: creds}, service, "", "example")
	c.Endpoint = url
	c.Now = func() time.Time { return awsapitest.SignedAt }
	c.Backoff = 0
	return &c
}

// okAnswer is the test API's answer to every request without a script.
func okAnswer(awsapitest.Received) awsapitest.Answer {
	return awsapitest.Answer{Status: http.StatusOK, Header: map[string]string{"X-Answer": "yes"}, Body: `{"Id":"a-1"}`}
}

// staticCreds returns credentials with the test key and token.
func staticCreds(token string) aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(awsapitest.Key, awsapitest.Secret, token)
}

func TestCallRequest(t *testing.T) {
	tests := []struct {
		name  string
		token string
		req   awsapi.Request
	}{
		{name: "long-term key", req: awsapi.Request{Op: "example send", Method: http.MethodPost, Path: "/v2/things", ContentType: "application/json", Body: []byte(`{"Name":"x"}`)}},
		{name: "session token", token: "IQoJb3JpZ2luX2VjEXAMPLETOKEN", req: awsapi.Request{Op: "example send", Method: http.MethodPost, Path: "/", ContentType: "application/x-www-form-urlencoded; charset=utf-8", Body: []byte("Action=Do&Version=1")}},
		{name: "reserved and non-ascii characters", req: awsapi.Request{Op: "example put", Method: http.MethodPut, Path: "/v2/things/a%2Fb", ContentType: "text/plain; charset=utf-8", Body: []byte("Código: 1 & 2 = 3 + 4 % ✓ <b>\"x\"</b>\nline 2 ~*'()!")}},
		{name: "no body", req: awsapi.Request{Op: "example get", Method: http.MethodGet, Path: "/v2/things?limit=2", ContentType: "application/json"}},
		{name: "own headers", req: awsapi.Request{Op: "example do", Method: http.MethodPost, Path: "/", ContentType: "application/x-amz-json-1.0", Header: map[string]string{"X-Amz-Target": "Example.Do"}, Body: []byte(`{}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, okAnswer)
			a, err := newCaller(srv.URL, staticCreds(tt.token)).Call(context.Background(), tt.req)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if got, want := a.Status, http.StatusOK; got != want {
				t.Errorf("status: got %d, want %d", got, want)
			}
			if got, want := a.Header.Get("X-Answer"), "yes"; got != want {
				t.Errorf("answer header: got %q, want %q", got, want)
			}
			if got, want := string(a.Body), `{"Id":"a-1"}`; got != want {
				t.Errorf("answer body: got %q, want %q", got, want)
			}
			reqs := srv.Received()
			if got, want := len(reqs), 1; got != want {
				t.Fatalf("requests: got %d, want %d", got, want)
			}
			r := reqs[0]
			if got, want := r.Method+" "+r.Path, tt.req.Method+" "+tt.req.Path; got != want {
				t.Errorf("request: got %q, want %q", got, want)
			}
			if got, want := r.Header.Get("Content-Type"), tt.req.ContentType; got != want {
				t.Errorf("Content-Type: got %q, want %q", got, want)
			}
			if got, want := r.Body, tt.req.Body; !bytes.Equal(got, want) {
				t.Errorf("body: got %q, want %q", got, want)
			}
			var own []string
			for k, v := range tt.req.Header {
				own = append(own, k)
				if got := r.Header.Get(k); got != v {
					t.Errorf("%s: got %q, want %q", k, got, v)
				}
			}
			awsapitest.CheckSigned(t, r, tt.token, service, own...)
		})
	}
}

// refusal is the test API's error: the status and body of its answer.
type refusal struct {
	status int
	body   string
}

func (e *refusal) Error() string { return "refused " + e.body }

func TestCallRetry(t *testing.T) {
	refused := func(a awsapi.Answer) error { return &refusal{status: a.Status, body: string(a.Body)} }
	// slowDown retries the answers whose body says so, whatever the status,
	// and the 5xx ones.
	slowDown := func(a awsapi.Answer, err error) bool {
		var r *refusal
		return a.Status >= 500 || errors.As(err, &r) && r.body == "SlowDown"
	}
	tests := []struct {
		name         string
		answers      []awsapitest.Answer
		refused      func(awsapi.Answer) error
		retry        func(awsapi.Answer, error) bool
		wantStatus   int
		wantBody     string
		wantText     string // the error's, none: no error
		wantAttempts int
	}{
		{name: "done", answers: []awsapitest.Answer{{Status: 200, Body: "ok"}}, wantStatus: 200, wantBody: "ok", wantAttempts: 1},
		{name: "created", answers: []awsapitest.Answer{{Status: 201}}, wantStatus: 201, wantAttempts: 1},
		{name: "client error", answers: []awsapitest.Answer{{Status: 400, Body: "bad"}}, wantStatus: 400, wantBody: "bad", wantText: "example send: 400", wantAttempts: 1},
		{name: "throttled twice", answers: []awsapitest.Answer{{Status: 429, Body: "slow"}}, wantStatus: 429, wantBody: "slow", wantText: "example send: 429", wantAttempts: 2},
		{name: "server error twice", answers: []awsapitest.Answer{{Status: 503}}, wantStatus: 503, wantText: "example send: 503", wantAttempts: 2},
		{name: "server error then done", answers: []awsapitest.Answer{{Status: 500, Body: "oops"}, {Status: 200, Body: "ok"}}, wantStatus: 200, wantBody: "ok", wantAttempts: 2},
		{name: "throttled then done", answers: []awsapitest.Answer{{Status: 429}, {Status: 200}}, wantStatus: 200, wantAttempts: 2},
		{name: "refused as the caller says", answers: []awsapitest.Answer{{Status: 403, Body: "Denied"}}, refused: refused, wantStatus: 403, wantBody: "Denied", wantText: "refused Denied", wantAttempts: 1},
		{name: "retried as the caller says", answers: []awsapitest.Answer{{Status: 400, Body: "SlowDown"}}, refused: refused, retry: slowDown, wantStatus: 400, wantBody: "SlowDown", wantText: "refused SlowDown", wantAttempts: 2},
		{name: "retried as the caller says then done", answers: []awsapitest.Answer{{Status: 400, Body: "SlowDown"}, {Status: 200, Body: "ok"}}, refused: refused, retry: slowDown, wantStatus: 200, wantBody: "ok", wantAttempts: 2},
		{name: "not retried as the caller says", answers: []awsapitest.Answer{{Status: 429, Body: "Quota"}}, refused: refused, retry: slowDown, wantStatus: 429, wantBody: "Quota", wantText: "refused Quota", wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, okAnswer, tt.answers...)
			a, err := newCaller(srv.URL, staticCreds("token")).Call(context.Background(), awsapi.Request{
				Op: "example send", Method: http.MethodPost, Path: "/", ContentType: "text/plain", Body: []byte("x"),
				Refused: tt.refused, Retry: tt.retry,
			})
			if got, want := len(srv.Received()), tt.wantAttempts; got != want {
				t.Errorf("attempts: got %d, want %d", got, want)
			}
			if got, want := a.Status, tt.wantStatus; got != want {
				t.Errorf("status: got %d, want %d", got, want)
			}
			if got, want := string(a.Body), tt.wantBody; got != want {
				t.Errorf("body: got %q, want %q", got, want)
			}
			if tt.wantText == "" {
				if err != nil {
					t.Fatalf("Call: got %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Call: got no error, want %q", tt.wantText)
			}
			if got, want := err.Error(), tt.wantText; got != want {
				t.Errorf("error text: got %q, want %q", got, want)
			}
			var want error = &awsapi.StatusError{Op: "example send", Answer: awsapi.Answer{Status: tt.wantStatus, Body: []byte(tt.wantBody)}}
			if tt.refused != nil {
				want = &refusal{status: tt.wantStatus, body: tt.wantBody}
			}
			got := err
			if se, ok := err.(*awsapi.StatusError); ok {
				c := *se
				c.Header = nil
				got = &c
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("error: got %#v, want %#v", got, want)
			}
			if strings.Contains(err.Error(), awsapitest.Secret) || strings.Contains(err.Error(), awsapitest.Key) {
				t.Errorf("error %q holds credentials", err)
			}
		})
	}
}

// doFunc is an aws.HTTPClient made of a function.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }

// brokenReader gives its text, then fails.
type brokenReader struct{ r io.Reader }

func (b *brokenReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		return n, errors.New("connection reset")
	}
	return n, err
}

func (b *brokenReader) Close() error { return nil }

func TestCallAnswerRead(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     io.ReadCloser
		wantBody string
		wantErr  string
	}{
		{name: "larger than the bound", status: 200, body: io.NopCloser(strings.NewReader(strings.Repeat("a", awsapi.MaxAnswer+10))), wantBody: strings.Repeat("a", awsapi.MaxAnswer)},
		{name: "done and broken off", status: 200, body: &brokenReader{strings.NewReader(`{"Id":"a-`)}, wantBody: `{"Id":"a-`},
		{name: "refused and broken off", status: 400, body: &brokenReader{strings.NewReader(`{"message":"no`)}, wantBody: `{"message":"no`, wantErr: "example send: 400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCaller("https://example.eu-west-1.amazonaws.com", staticCreds(""))
			c.HTTPClient = doFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tt.status, Header: http.Header{}, Body: tt.body}, nil
			})
			a, err := c.Call(context.Background(), awsapi.Request{Op: "example send", Method: http.MethodPost, Path: "/", ContentType: "text/plain"})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("Call: got error %q, want %q", gotErr, tt.wantErr)
			}
			if got, want := string(a.Body), tt.wantBody; got != want {
				t.Errorf("body: got %d bytes %.20q, want %d bytes %.20q", len(got), got, len(want), want)
			}
		})
	}
}

func TestCallFailures(t *testing.T) {
	creds := staticCreds("")
	tests := []struct {
		name         string
		cfg          aws.Config
		endpoint     string
		client       aws.HTTPClient
		wantErr      string
		wantAttempts int
	}{
		{name: "no region", cfg: aws.Config{Credentials: creds}, wantErr: "example send: no region"},
		{name: "no credentials", cfg: aws.Config{Region: awsapitest.Region}, wantErr: "example send: no credentials"},
		{
			name: "credentials not retrieved",
			cfg: aws.Config{Region: awsapitest.Region, Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{}, errors.New("no role")
			})},
			wantErr: "example send: retrieve credentials: no role",
		},
		{name: "bad endpoint", cfg: aws.Config{Region: awsapitest.Region, Credentials: creds}, endpoint: "http://[::1", wantErr: `example send: parse "http://[::1/things": missing ']' in host`},
		{
			name: "not sent",
			cfg:  aws.Config{Region: awsapitest.Region, Credentials: creds},
			client: doFunc(func(r *http.Request) (*http.Response, error) {
				return nil, errors.New("dial tcp: connection refused")
			}),
			wantErr: "example send: dial tcp: connection refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, okAnswer)
			c := awsapi.New(tt.cfg, service, "", "example")
			c.Endpoint = srv.URL
			if tt.endpoint != "" {
				c.Endpoint = tt.endpoint
			}
			if tt.client != nil {
				c.HTTPClient = tt.client
			}
			a, err := c.Call(context.Background(), awsapi.Request{Op: "example send", Method: http.MethodPost, Path: "/things", ContentType: "text/plain"})
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Call: got %v, want %q", err, tt.wantErr)
			}
			if got, want := a.Status, 0; got != want {
				t.Errorf("status: got %d, want %d", got, want)
			}
			if got, want := len(srv.Received()), 0; got != want {
				t.Errorf("requests: got %d, want %d", got, want)
			}
		})
	}
}

func TestCallContext(t *testing.T) {
	tests := []struct {
		name         string
		before       bool // cancel before the call, else once the server has the request (or the client its answer)
		status       int  // the answer, none: the server waits for the cancel
		wantText     string
		wantStatus   int
		wantAttempts int
	}{
		{name: "cancelled before", before: true, wantText: `example send: Post "URL/": context canceled`, wantAttempts: 0},
		{name: "cancelled while waiting for the answer", wantText: `example send: Post "URL/": context canceled`, wantAttempts: 1},
		{name: "cancelled before the retry", status: 503, wantText: "example send: context canceled (after example send: 503)", wantStatus: 503, wantAttempts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			attempts := 0
			reached := make(chan struct{}, 1)
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				attempts++
				mu.Unlock()
				if tt.status != 0 {
					w.WriteHeader(tt.status)
					return
				}
				reached <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(release) })
			c := newCaller(srv.URL, staticCreds(""))
			c.Backoff = time.Hour
			// An answer is reached when the client has it, so that the
			// cancel comes after it.
			c.HTTPClient = doFunc(func(r *http.Request) (*http.Response, error) {
				resp, err := http.DefaultClient.Do(r)
				if err == nil && tt.status != 0 {
					reached <- struct{}{}
				}
				return resp, err
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.before {
				cancel()
			} else {
				go func() {
					<-reached
					cancel()
				}()
			}
			a, err := c.Call(ctx, awsapi.Request{Op: "example send", Method: http.MethodPost, Path: "/", ContentType: "text/plain"})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Call: got %v, want context.Canceled", err)
			}
			if err != nil {
				if got, want := strings.ReplaceAll(err.Error(), srv.URL, "URL"), tt.wantText; got != want {
					t.Errorf("error text: got %q, want %q", got, want)
				}
			}
			if got, want := a.Status, tt.wantStatus; got != want {
				t.Errorf("status: got %d, want %d", got, want)
			}
			mu.Lock()
			defer mu.Unlock()
			if got, want := attempts, tt.wantAttempts; got != want {
				t.Errorf("attempts: got %d, want %d", got, want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	c := awsapi.New(aws.Config{Region: "eu-west-1", Credentials: staticCreds("")}, service, "", "example")
	if got, want := c.Region, "eu-west-1"; got != want {
		t.Errorf("Region: got %q, want %q", got, want)
	}
	if got, want := c.Service, service; got != want {
		t.Errorf("Service: got %q, want %q", got, want)
	}
	if got, want := c.Backoff, 200*time.Millisecond; got != want {
		t.Errorf("Backoff: got %v, want %v", got, want)
	}
	if c.Credentials == nil || c.Now == nil || c.HTTPClient == nil {
		t.Errorf("Credentials %v, Now set %v, HTTPClient %v: want all set", c.Credentials, c.Now != nil, c.HTTPClient)
	}
}

func TestNewEndpoint(t *testing.T) {
	awsapitest.CheckEndpoints(t, "EXAMPLE", "example", func(region string) string {
		return awsapi.New(aws.Config{Region: region}, service, ddb.Endpoint("EXAMPLE"), "example").Endpoint
	})
	if got, want := awsapi.RegionalEndpoint("email", "cn-north-1"), "https://email.cn-north-1.amazonaws.com.cn"; got != want {
		t.Errorf("RegionalEndpoint: got %q, want %q", got, want)
	}
}

func TestNewHTTPClient(t *testing.T) {
	srv := awsapitest.NewServer(t, okAnswer)
	var calls int
	client := doFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		return http.DefaultClient.Do(r)
	})
	c := awsapi.New(aws.Config{Region: awsapitest.Region, Credentials: staticCreds(""), HTTPClient: client}, service, "", "example")
	c.Endpoint = srv.URL
	if _, err := c.Call(context.Background(), awsapi.Request{Op: "example send", Method: http.MethodPost, Path: "/", ContentType: "text/plain"}); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if got, want := calls, 1; got != want {
		t.Errorf("calls through the configuration's client: got %d, want %d", got, want)
	}
}

// TestZeroCaller checks that a Caller made without New (no signer, clock
// or HTTP client) signs with the current time and calls through the
// default client.
func TestZeroCaller(t *testing.T) {
	srv := awsapitest.NewServer(t, okAnswer)
	c := awsapi.Caller{Endpoint: srv.URL, Region: awsapitest.Region, Service: service, Credentials: staticCreds("")}
	before := time.Now().UTC().Add(-time.Second)
	if _, err := c.Call(context.Background(), awsapi.Request{Op: "example send", Method: http.MethodPost, Path: "/", ContentType: "text/plain"}); err != nil {
		t.Fatalf("Call: %v", err)
	}
	reqs := srv.Received()
	if got, want := len(reqs), 1; got != want {
		t.Fatalf("requests: got %d, want %d", got, want)
	}
	signed, err := time.Parse("20060102T150405Z", reqs[0].Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatal(err)
	}
	if signed.Before(before.Truncate(time.Second)) {
		t.Errorf("X-Amz-Date: got %v, want the current time (after %v)", signed, before)
	}
}

func TestRefusalText(t *testing.T) {
	tests := []struct {
		name         string
		status       int
		typ, message string
		want         string
	}{
		{name: "type and message", status: 400, typ: "MessageRejected", message: "not verified", want: "example send: 400 MessageRejected: not verified"},
		{name: "type alone", status: 404, typ: "NotFound", want: "example send: 404 NotFound"},
		{name: "message alone", status: 500, message: "Internal Failure", want: "example send: 500: Internal Failure"},
		{name: "status alone", status: 503, want: "example send: 503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := awsapi.RefusalText("example send", tt.status, tt.typ, tt.message); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{name: "empty", body: "", want: ""},
		{name: "trimmed", body: "\n <html>Internal Failure</html>\n", want: "<html>Internal Failure</html>"},
		{name: "cut at 200 bytes", body: strings.Repeat("a", 250), want: strings.Repeat("a", 200)},
		{name: "character cut at the bound dropped", body: strings.Repeat("a", 199) + "é and more", want: strings.Repeat("a", 199)},
		{name: "invalid utf-8 dropped", body: "bad \xff byte", want: "bad  byte"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := awsapi.Excerpt([]byte(tt.body)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
