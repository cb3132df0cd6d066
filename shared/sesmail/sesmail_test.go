package sesmail_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/loyalty-platform/platform/shared/sesmail"
)

const (
	region = "eu-west-1"
	key    = "AKIDEXAMPLE"
	secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// signedAt is the fixed signing time of every test request.
var signedAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// received is one request as the server saw it.
type received struct {
	method, path, host string
	header             http.Header
	body               []byte
}

// answer is a scripted response.
type answer struct {
	status int
	header map[string]string
	body   string
}

// server is an SES stand-in that records requests and answers each attempt
// with the next scripted answer (the last one repeats).
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []received
	answers  []answer
}

func newServer(t *testing.T, answers ...answer) *server {
	t.Helper()
	s := &server{answers: answers}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, received{method: r.Method, path: r.URL.RequestURI(), host: r.Host, header: r.Header.Clone(), body: b})
		a := answer{status: http.StatusOK, body: `{"MessageId":"m-1"}`}
		if len(s.answers) > 0 {
			a = s.answers[min(n, len(s.answers)-1)]
		}
		s.mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		io.WriteString(w, a.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) received() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.requests...)
}

// newSender returns a Sender pointed at url with a fixed clock and no wait
// before its retry.
func newSender(url string, creds aws.CredentialsProvider) *sesmail.Sender {
	s := sesmail.New(aws.Config{Region: region, Credentials: creds})
	s.Endpoint = url
	s.Now = func() time.Time { return signedAt }
	s.Backoff = 0
	return s
}

// resign signs a copy of the received request (its signed headers only)
// with the same credentials and time and returns its Authorization header.
func resign(t *testing.T, r received, creds aws.Credentials) string {
	t.Helper()
	auth := r.header.Get("Authorization")
	_, signed, ok := strings.Cut(auth, "SignedHeaders=")
	if !ok {
		t.Fatalf("Authorization %q names no signed headers", auth)
	}
	signed, _, _ = strings.Cut(signed, ",")
	req, err := http.NewRequest(r.method, "http://"+r.host+r.path, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range strings.Split(signed, ";") {
		if h != "host" && h != "content-length" {
			req.Header[http.CanonicalHeaderKey(h)] = r.header.Values(h)
		}
	}
	sum := sha256.Sum256(r.body)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "ses", region, signedAt); err != nil {
		t.Fatal(err)
	}
	return req.Header.Get("Authorization")
}

// sdkBody returns the body the SES v2 SDK client sends for the same
// message (with the charset set), to compare with Send's.
func sdkBody(t *testing.T, from, to, subject, text string) []byte {
	t.Helper()
	srv := newServer(t)
	c := sesv2.NewFromConfig(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")}, func(o *sesv2.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
	})
	_, err := c.SendEmail(context.Background(), &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(from),
		Destination:      &sestypes.Destination{ToAddresses: []string{to}},
		Content: &sestypes.EmailContent{Simple: &sestypes.Message{
			Subject: &sestypes.Content{Data: aws.String(subject), Charset: aws.String("UTF-8")},
			Body:    &sestypes.Body{Text: &sestypes.Content{Data: aws.String(text), Charset: aws.String("UTF-8")}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv.received()[0].body
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return v
}

func TestSendRequest(t *testing.T) {
	tests := []struct {
		name          string
		token         string
		subject, text string
	}{
		{name: "long-term key", subject: "Your code", text: "Your activation code is 123456."},
		{name: "session token", token: "IQoJb3JpZ2luX2VjEXAMPLETOKEN", subject: "Your code", text: "Your code is 654321."},
		{name: "non-ascii and markup", subject: "Código <b>&</b> ✓", text: "Ünïcode \"quoted\"\nline 2 <a href=\"x\">"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			creds := aws.Credentials{AccessKeyID: key, SecretAccessKey: secret, SessionToken: tt.token}
			s := newSender(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, tt.token))
			from, to := "no-reply@example.com", "ana@example.org"
			if err := s.Send(context.Background(), from, to, tt.subject, tt.text); err != nil {
				t.Fatalf("Send: %v", err)
			}
			reqs := srv.received()
			if got, want := len(reqs), 1; got != want {
				t.Fatalf("requests: got %d, want %d", got, want)
			}
			r := reqs[0]
			if got, want := r.method+" "+r.path, "POST /v2/email/outbound-emails"; got != want {
				t.Errorf("request: got %q, want %q", got, want)
			}
			if got, want := r.header.Get("Content-Type"), "application/json"; got != want {
				t.Errorf("Content-Type: got %q, want %q", got, want)
			}
			wantBody := map[string]any{
				"FromEmailAddress": from,
				"Destination":      map[string]any{"ToAddresses": []any{to}},
				"Content": map[string]any{"Simple": map[string]any{
					"Subject": map[string]any{"Data": tt.subject, "Charset": "UTF-8"},
					"Body":    map[string]any{"Text": map[string]any{"Data": tt.text, "Charset": "UTF-8"}},
				}},
			}
			if got := decode(t, r.body); !reflect.DeepEqual(got, any(wantBody)) {
				t.Errorf("body: got %v, want %v", got, wantBody)
			}
			if got, want := decode(t, r.body), decode(t, sdkBody(t, from, to, tt.subject, tt.text)); !reflect.DeepEqual(got, want) {
				t.Errorf("body: got %v, the SDK client sends %v", got, want)
			}
			if got, want := r.header.Get("X-Amz-Date"), "20260102T030405Z"; got != want {
				t.Errorf("X-Amz-Date: got %q, want %q", got, want)
			}
			if got, want := r.header.Get("X-Amz-Security-Token"), tt.token; got != want {
				t.Errorf("X-Amz-Security-Token: got %q, want %q", got, want)
			}
			signed := "content-length;content-type;host;x-amz-date"
			if tt.token != "" {
				signed += ";x-amz-security-token"
			}
			auth := r.header.Get("Authorization")
			wantPrefix := "AWS4-HMAC-SHA256 Credential=" + key + "/20260102/" + region + "/ses/aws4_request, SignedHeaders=" + signed + ", Signature="
			if !strings.HasPrefix(auth, wantPrefix) {
				t.Errorf("Authorization: got %q, want prefix %q", auth, wantPrefix)
			}
			if got, want := auth, resign(t, r, creds); got != want {
				t.Errorf("Authorization: got %q, re-signed %q", got, want)
			}
			if strings.Contains(auth, secret) {
				t.Errorf("Authorization %q holds the secret key", auth)
			}
		})
	}
}

func TestSendErrors(t *testing.T) {
	tests := []struct {
		name          string
		answers       []answer
		wantErr       *sesmail.Error
		wantText      string
		wantThrottled bool
		wantAttempts  int
	}{
		{
			name: "message rejected",
			answers: []answer{{status: 400, header: map[string]string{"X-Amzn-ErrorType": "MessageRejected:http://internal.amazon.com/coral/com.amazonaws.sesv2/"},
				body: `{"message":"Email address is not verified. The following identities failed the check in region EU-WEST-1: ana@example.org"}`}},
			wantErr:      &sesmail.Error{Status: 400, Type: "MessageRejected", Message: "Email address is not verified. The following identities failed the check in region EU-WEST-1: ana@example.org"},
			wantText:     "ses send: 400 MessageRejected: Email address is not verified. The following identities failed the check in region EU-WEST-1: ana@example.org",
			wantAttempts: 1,
		},
		{
			name:         "type in the body",
			answers:      []answer{{status: 400, body: `{"__type":"com.amazonaws.sesv2#AccountSuspendedException","Message":"suspended"}`}},
			wantErr:      &sesmail.Error{Status: 400, Type: "AccountSuspendedException", Message: "suspended"},
			wantText:     "ses send: 400 AccountSuspendedException: suspended",
			wantAttempts: 1,
		},
		{
			name: "too many requests twice",
			answers: []answer{{status: 429, header: map[string]string{"X-Amzn-ErrorType": "TooManyRequestsException"},
				body: `{"message":"Maximum sending rate exceeded."}`}},
			wantErr:       &sesmail.Error{Status: 429, Type: "TooManyRequestsException", Message: "Maximum sending rate exceeded."},
			wantText:      "ses send: 429 TooManyRequestsException: Maximum sending rate exceeded.",
			wantThrottled: true,
			wantAttempts:  2,
		},
		{
			name:         "server error with a body that is not json twice",
			answers:      []answer{{status: 500, body: "<html>Internal Failure</html>\n"}},
			wantErr:      &sesmail.Error{Status: 500, Message: "<html>Internal Failure</html>"},
			wantText:     "ses send: 500: <html>Internal Failure</html>",
			wantAttempts: 2,
		},
		{
			name:         "server error without a body twice",
			answers:      []answer{{status: 503}},
			wantErr:      &sesmail.Error{Status: 503},
			wantText:     "ses send: 503",
			wantAttempts: 2,
		},
		{
			name:         "server error then sent",
			answers:      []answer{{status: 500, body: "oops"}, {status: 200, body: `{"MessageId":"m-2"}`}},
			wantAttempts: 2,
		},
		{
			name:         "throttled then sent",
			answers:      []answer{{status: 429, header: map[string]string{"X-Amzn-ErrorType": "TooManyRequestsException"}}, {status: 200}},
			wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.answers...)
			s := newSender(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, "token"))
			err := s.Send(context.Background(), "no-reply@example.com", "ana@example.org", "Subject", "Text")
			if got, want := len(srv.received()), tt.wantAttempts; got != want {
				t.Errorf("attempts: got %d, want %d", got, want)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Send: got %v, want no error", err)
				}
				return
			}
			var got *sesmail.Error
			if !errors.As(err, &got) {
				t.Fatalf("Send: got %v (%T), want a *sesmail.Error", err, err)
			}
			if !reflect.DeepEqual(got, tt.wantErr) {
				t.Errorf("error: got %+v, want %+v", got, tt.wantErr)
			}
			if got, want := err.Error(), tt.wantText; got != want {
				t.Errorf("error text: got %q, want %q", got, want)
			}
			if got, want := got.Throttled(), tt.wantThrottled; got != want {
				t.Errorf("Throttled: got %v, want %v", got, want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), key) {
				t.Errorf("error %q holds credentials", err)
			}
		})
	}
}

func TestSendContext(t *testing.T) {
	tests := []struct {
		name         string
		run          func(t *testing.T, s *sesmail.Sender, reached <-chan struct{}) error
		answer       answer
		wantAttempts int
	}{
		{
			name: "cancelled before",
			run: func(t *testing.T, s *sesmail.Sender, _ <-chan struct{}) error {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return s.Send(ctx, "a@example.com", "b@example.com", "s", "t")
			},
			wantAttempts: 0,
		},
		{
			name: "cancelled while waiting for the answer",
			run: func(t *testing.T, s *sesmail.Sender, reached <-chan struct{}) error {
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					<-reached
					cancel()
				}()
				return s.Send(ctx, "a@example.com", "b@example.com", "s", "t")
			},
			wantAttempts: 1,
		},
		{
			name: "cancelled before the retry",
			run: func(t *testing.T, s *sesmail.Sender, reached <-chan struct{}) error {
				ctx, cancel := context.WithCancel(context.Background())
				s.Backoff = time.Hour
				go func() {
					<-reached
					cancel()
				}()
				return s.Send(ctx, "a@example.com", "b@example.com", "s", "t")
			},
			answer:       answer{status: 503},
			wantAttempts: 1,
		},
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
				if tt.answer.status != 0 {
					w.WriteHeader(tt.answer.status)
					w.(http.Flusher).Flush()
					reached <- struct{}{}
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
			s := newSender(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, ""))
			err := tt.run(t, s, reached)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Send: got %v, want context.Canceled", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if got, want := attempts, tt.wantAttempts; got != want {
				t.Errorf("attempts: got %d, want %d", got, want)
			}
		})
	}
}

func TestNewEndpoint(t *testing.T) {
	tests := []struct {
		name            string
		region          string
		sesv2, anything string
		want            string
	}{
		{name: "regional", region: "eu-west-1", want: "https://email.eu-west-1.amazonaws.com"},
		{name: "china", region: "cn-northwest-1", want: "https://email.cn-northwest-1.amazonaws.com.cn"},
		{name: "every service", region: "eu-west-1", anything: "http://localhost:4566", want: "http://localhost:4566"},
		{name: "ses v2", region: "eu-west-1", sesv2: "http://127.0.0.1:9000/", anything: "http://localhost:4566", want: "http://127.0.0.1:9000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_ENDPOINT_URL_SESV2", tt.sesv2)
			t.Setenv("AWS_ENDPOINT_URL", tt.anything)
			if got, want := sesmail.New(aws.Config{Region: tt.region}).Endpoint, tt.want; got != want {
				t.Errorf("Endpoint: got %q, want %q", got, want)
			}
		})
	}
}

func TestNewHTTPClient(t *testing.T) {
	srv := newServer(t)
	var calls int
	client := doFunc(func(r *http.Request) (*http.Response, error) {
		calls++
		return http.DefaultClient.Do(r)
	})
	s := sesmail.New(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""), HTTPClient: client})
	s.Endpoint = srv.URL
	if err := s.Send(context.Background(), "a@example.com", "b@example.com", "s", "t"); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got, want := calls, 1; got != want {
		t.Errorf("calls through the configuration's client: got %d, want %d", got, want)
	}
}

// doFunc is an aws.HTTPClient made of a function.
type doFunc func(*http.Request) (*http.Response, error)

func (f doFunc) Do(r *http.Request) (*http.Response, error) { return f(r) }
