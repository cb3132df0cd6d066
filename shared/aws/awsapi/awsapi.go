// Package awsapi makes a signed HTTPS call to an AWS API: one request
// signed with Signature Version 4 by the SDK's signer, tried once more
// when the service throttles or fails, its answer read up to MaxAnswer
// bytes. It lets a package call one or two operations of a service without
// linking the SDK's client for it (shared/aws/sesmail, shared/aws/snsapi,
// shared/aws/sqsapi).
package awsapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// MaxAnswer bounds how much of an answer is read.
const MaxAnswer = 64 << 10

// defaultClient is the HTTP client when the configuration names none. Its
// timeout bounds one attempt; the caller's context bounds the whole call.
var defaultClient = &http.Client{Timeout: 10 * time.Second}

// Caller calls one AWS API in one region.
type Caller struct {
	// Endpoint is the service's base URL, without a trailing slash.
	Endpoint string
	// Region is the signing region.
	Region string
	// Service is the signing name ("ses", "sns").
	Service string
	// Credentials signs each request; its credentials are retrieved per
	// call (a cache, as the SDK's configuration holds, keeps that cheap).
	Credentials aws.CredentialsProvider
	// HTTPClient makes the requests.
	HTTPClient aws.HTTPClient
	// Now is the signing clock.
	Now func() time.Time
	// Backoff is the wait before the one retry of a throttled or failed
	// call.
	Backoff time.Duration

	signer *v4.Signer // safe for concurrent use
}

// New returns a Caller of the API signed as service, for cfg: its region,
// credentials and HTTP client. The endpoint is endpoint, the one the
// environment names for the API (ddb.Endpoint, which reads
// AWS_ENDPOINT_URL_<id>, else AWS_ENDPOINT_URL), without a trailing slash;
// when it is empty, AWS's regional endpoint
// https://<host>.<region>.amazonaws.com.
func New(cfg aws.Config, service, endpoint, host string) Caller {
	endpoint = strings.TrimSuffix(endpoint, "/")
	if endpoint == "" {
		endpoint = RegionalEndpoint(host, cfg.Region)
	}
	var client aws.HTTPClient = defaultClient
	if cfg.HTTPClient != nil {
		client = cfg.HTTPClient
	}
	return Caller{
		Endpoint:    endpoint,
		Region:      cfg.Region,
		Service:     service,
		Credentials: cfg.Credentials,
		HTTPClient:  client,
		Now:         time.Now,
		Backoff:     200 * time.Millisecond,
		signer:      v4.NewSigner(),
	}
}

// RegionalEndpoint returns AWS's endpoint https://<host>.<region>.amazonaws.com
// (amazonaws.com.cn in the cn- regions).
func RegionalEndpoint(host, region string) string {
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://" + host + "." + region + "." + suffix
}

// Request is one call.
type Request struct {
	// Op names the call at the start of its errors ("ses send").
	Op string
	// Method, Path (from the endpoint, with its leading slash) and
	// ContentType of the request, and its Body.
	Method, Path, ContentType string
	// Header holds further headers to send and sign (SQS's X-Amz-Target).
	Header map[string]string
	Body   []byte
	// Refused turns an answer whose status is not 2xx into the call's
	// error; nil makes it a *StatusError.
	Refused func(Answer) error
	// Retry reports whether a refused answer, with the error Refused made
	// of it, is worth the one retry; nil retries a throttled (429) or
	// failed (5xx) call (Retryable).
	Retry func(a Answer, refusal error) bool
}

// Answer is what the service answered: the status, the headers and the
// body, read up to MaxAnswer bytes.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// Retryable reports whether a is a throttled (429) or failed (5xx) answer.
func Retryable(a Answer) bool {
	return a.Status == http.StatusTooManyRequests || a.Status >= 500
}

// StatusError is a refused answer of a Request without Refused.
type StatusError struct {
	Op string
	Answer
}

// Error returns "<op>: <status>".
func (e *StatusError) Error() string {
	return RefusalText(e.Op, e.Status, "", "")
}

// RefusalText returns the text of a service's refusal of the call op:
// "<op>: <status> <type>: <message>", without " <type>" or ": <message>"
// where they are empty.
func RefusalText(op string, status int, typ, message string) string {
	var b strings.Builder
	b.WriteString(op)
	b.WriteString(": ")
	b.WriteString(strconv.Itoa(status))
	if typ != "" {
		b.WriteString(" ")
		b.WriteString(typ)
	}
	if message != "" {
		b.WriteString(": ")
		b.WriteString(message)
	}
	return b.String()
}

// Excerpt returns, as an error message, the start of an answer that is not
// the service's error document: its first 200 bytes, trimmed, without
// invalid UTF-8 (a character cut at the 200th byte is dropped).
func Excerpt(body []byte) string {
	return strings.ToValidUTF8(strings.TrimSpace(string(body[:min(len(body), 200)])), "")
}

// Call signs and sends req and returns the answer: with no error when its
// status is 2xx (whatever follows it; an answer that breaks off is read as
// far as it came), else with req.Refused's error. A refused answer that
// req.Retry names is tried once more after Backoff, as the SDK clients
// would; after a 5xx the service may have done the first, so its effect
// can happen twice. A cancelled or expired ctx ends the call with ctx's
// error (after the refusal when it ends the wait for the retry); an error
// that is not the service's answer (no region, no credentials, the
// request not sent) is "<op>: ..." and comes with no Answer.
func (c *Caller) Call(ctx context.Context, req Request) (Answer, error) {
	if c.Region == "" {
		return Answer{}, errors.New(req.Op + ": no region")
	}
	if c.Credentials == nil {
		return Answer{}, errors.New(req.Op + ": no credentials")
	}
	sum := sha256.Sum256(req.Body)
	hash := hex.EncodeToString(sum[:])
	a, err := c.attempt(ctx, req, hash)
	if err == nil || a.Status == 0 || !retry(req, a, err) {
		return a, err
	}
	t := time.NewTimer(c.Backoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return a, fmt.Errorf("%s: %w (after %w)", req.Op, ctx.Err(), err)
	case <-t.C:
	}
	return c.attempt(ctx, req, hash)
}

// retry reports whether the refused answer a is worth the one retry.
func retry(req Request, a Answer, refusal error) bool {
	if req.Retry != nil {
		return req.Retry(a, refusal)
	}
	return Retryable(a)
}

// attempt signs and makes one request.
func (c *Caller) attempt(ctx context.Context, req Request, hash string) (Answer, error) {
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return Answer{}, fmt.Errorf("%s: retrieve credentials: %w", req.Op, err)
	}
	r, err := http.NewRequestWithContext(ctx, req.Method, c.Endpoint+req.Path, bytes.NewReader(req.Body))
	if err != nil {
		return Answer{}, fmt.Errorf("%s: %w", req.Op, err)
	}
	r.Header.Set("Content-Type", req.ContentType)
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	signer := c.signer
	if signer == nil {
		signer = v4.NewSigner()
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if err := signer.SignHTTP(ctx, creds, r, hash, c.Service, c.Region, now()); err != nil {
		return Answer{}, fmt.Errorf("%s: sign: %w", req.Op, err)
	}
	client := c.HTTPClient
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(r)
	if err != nil {
		// The URL in the error names only the endpoint; the request carries
		// the credentials in headers, which the error does not show.
		return Answer{}, fmt.Errorf("%s: %w", req.Op, err)
	}
	defer resp.Body.Close()
	// A 2xx status means the service did the call, whatever follows it (a
	// caller that needs the answer's content finds it missing); an error
	// answer that breaks off is read as far as it came.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxAnswer))
	a := Answer{Status: resp.StatusCode, Header: resp.Header, Body: body}
	if a.Status/100 == 2 {
		return a, nil
	}
	if req.Refused == nil {
		return a, &StatusError{Op: req.Op, Answer: a}
	}
	return a, req.Refused(a)
}
