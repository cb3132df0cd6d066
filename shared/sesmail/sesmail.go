// Package sesmail sends an e-mail through the Amazon SES API v2 SendEmail
// operation with a plain HTTPS request signed with Signature Version 4. It
// stands in for the SES v2 SDK client, which adds about 650 KB and a costly
// package initialisation to a function binary, for the one call the
// platform makes.
package sesmail

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/loyalty-platform/platform/shared/ddb"
)

// path is the SendEmail operation's path.
const path = "/v2/email/outbound-emails"

// maxResponse bounds how much of an answer is read.
const maxResponse = 64 << 10

// defaultClient is the HTTP client when the configuration names none. Its
// timeout bounds one attempt; the caller's context bounds the whole send.
var defaultClient = &http.Client{Timeout: 10 * time.Second}

// Sender sends e-mails through SES v2 in one region.
type Sender struct {
	// Endpoint is the service's base URL, without a trailing slash.
	Endpoint string
	// Region is the signing region.
	Region string
	// Credentials signs each request; its credentials are retrieved per
	// send (a cache, as the SDK's configuration holds, keeps that cheap).
	Credentials aws.CredentialsProvider
	// HTTPClient makes the requests.
	HTTPClient aws.HTTPClient
	// Now is the signing clock.
	Now func() time.Time
	// Backoff is the wait before the one retry of a throttled (429) or
	// failed (5xx) send.
	Backoff time.Duration

	signer *v4.Signer // safe for concurrent use
}

// New returns a Sender for cfg: its region, credentials and HTTP client. The
// endpoint is the one the environment names for SES v2
// (AWS_ENDPOINT_URL_SESV2, else AWS_ENDPOINT_URL), else AWS's regional
// endpoint https://email.<region>.amazonaws.com.
func New(cfg aws.Config) *Sender {
	endpoint := strings.TrimSuffix(ddb.Endpoint("SESV2"), "/")
	if endpoint == "" {
		endpoint = RegionalEndpoint(cfg.Region)
	}
	var client aws.HTTPClient = defaultClient
	if cfg.HTTPClient != nil {
		client = cfg.HTTPClient
	}
	return &Sender{
		Endpoint:    endpoint,
		Region:      cfg.Region,
		Credentials: cfg.Credentials,
		HTTPClient:  client,
		Now:         time.Now,
		Backoff:     200 * time.Millisecond,
		signer:      v4.NewSigner(),
	}
}

// RegionalEndpoint returns AWS's SES v2 endpoint in region.
func RegionalEndpoint(region string) string {
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://email." + region + "." + suffix
}

// Error is SES's refusal of a send: the HTTP status and, when SES names
// them, its error type (MessageRejected, TooManyRequestsException, ...) and
// message.
type Error struct {
	Status  int
	Type    string
	Message string
}

// Error returns "ses send: <status> <type>: <message>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("ses send: ")
	b.WriteString(strconv.Itoa(e.Status))
	if e.Type != "" {
		b.WriteString(" ")
		b.WriteString(e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Throttled reports whether SES refused the send for its rate or quota
// (status 429, TooManyRequestsException, LimitExceededException), so
// that a later try may succeed.
func (e *Error) Throttled() bool {
	return e.Status == http.StatusTooManyRequests || e.Type == "TooManyRequestsException" || e.Type == "LimitExceededException"
}

// content is the SendEmail request's Content.Simple.{Subject,Body.Text}.
type content struct {
	Data    string `json:"Data"`
	Charset string `json:"Charset"`
}

// request is the SendEmail request body.
type request struct {
	FromEmailAddress string `json:"FromEmailAddress"`
	Destination      struct {
		ToAddresses []string `json:"ToAddresses"`
	} `json:"Destination"`
	Content struct {
		Simple struct {
			Subject content `json:"Subject"`
			Body    struct {
				Text content `json:"Text"`
			} `json:"Body"`
		} `json:"Simple"`
	} `json:"Content"`
}

// body returns the SendEmail request body: a plain-text message in UTF-8
// from from to to.
func body(from, to, subject, text string) ([]byte, error) {
	var r request
	r.FromEmailAddress = from
	r.Destination.ToAddresses = []string{to}
	r.Content.Simple.Subject = content{Data: subject, Charset: "UTF-8"}
	r.Content.Simple.Body.Text = content{Data: text, Charset: "UTF-8"}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("ses send: encode request: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Send sends a plain-text e-mail from from to to. The subject and the body
// are marked UTF-8 (without a charset SES takes them for 7-bit ASCII). A
// throttled (429) or failed (5xx) send is tried once more after Backoff, as
// the SDK client would; after a 5xx SES may have sent the first, so the
// recipient can get the message twice. SES's refusal is an *Error; a
// cancelled or expired ctx ends the send with ctx's error.
func (s *Sender) Send(ctx context.Context, from, to, subject, text string) error {
	if s.Region == "" {
		return errors.New("ses send: no region")
	}
	if s.Credentials == nil {
		return errors.New("ses send: no credentials")
	}
	payload, err := body(from, to, subject, text)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(payload)
	hash := hex.EncodeToString(sum[:])
	err = s.attempt(ctx, payload, hash)
	var e *Error
	if !errors.As(err, &e) || (e.Status != http.StatusTooManyRequests && e.Status < 500) {
		return err
	}
	t := time.NewTimer(s.Backoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("ses send: %w (after %w)", ctx.Err(), err)
	case <-t.C:
	}
	return s.attempt(ctx, payload, hash)
}

// attempt signs and makes one SendEmail request.
func (s *Sender) attempt(ctx context.Context, payload []byte, hash string) error {
	creds, err := s.Credentials.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("ses send: retrieve credentials: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint+path, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("ses send: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	signer := s.signer
	if signer == nil {
		signer = v4.NewSigner()
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	if err := signer.SignHTTP(ctx, creds, req, hash, "ses", s.Region, now()); err != nil {
		return fmt.Errorf("ses send: sign: %w", err)
	}
	client := s.HTTPClient
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// The URL in the error names only the endpoint; the request carries
		// the credentials in headers, which the error does not show.
		return fmt.Errorf("ses send: %w", err)
	}
	defer resp.Body.Close()
	// A 2xx status means SES took the message, whatever follows it; an
	// error answer that breaks off is read as far as it came.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	return parseError(resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), answer)
}

// parseError reads SES's error answer: the type from the X-Amzn-ErrorType
// header, else the body's "code" or "__type"; the body's "message". The
// type is stripped of its namespace ("ns#Type") and trailing URL
// ("Type:http://..."). A body that is not JSON becomes the message, cut to
// 200 bytes.
func parseError(status int, header string, answer []byte) *Error {
	var b struct {
		Code     string `json:"code"`
		Type     string `json:"__type"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	e := &Error{Status: status}
	if err := json.Unmarshal(answer, &b); err == nil {
		e.Message = b.Message
		if e.Message == "" {
			e.Message = b.MessageU
		}
	} else {
		e.Message = strings.ToValidUTF8(strings.TrimSpace(string(answer[:min(len(answer), 200)])), "")
	}
	e.Type = header
	if e.Type == "" {
		e.Type = b.Code
	}
	if e.Type == "" {
		e.Type = b.Type
	}
	if i := strings.IndexByte(e.Type, ':'); i >= 0 {
		e.Type = e.Type[:i]
	}
	if i := strings.LastIndexByte(e.Type, '#'); i >= 0 {
		e.Type = e.Type[i+1:]
	}
	return e
}
