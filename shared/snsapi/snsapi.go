// Package snsapi makes the platform's three Amazon SNS calls (Publish of an
// SMS, CreatePlatformEndpoint, DeleteEndpoint) as plain HTTPS requests in
// SNS's Query protocol, signed with Signature Version 4. It stands in for
// the SNS SDK client, which adds its XML decoders and every operation's
// code to a function binary, for the three calls the platform makes.
package snsapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/loyalty-platform/platform/shared/ddb"
)

// version is the SNS API version every request names.
const version = "2010-03-31"

// contentType is the type of every request body.
const contentType = "application/x-www-form-urlencoded; charset=utf-8"

// maxResponse bounds how much of an answer is read.
const maxResponse = 64 << 10

// defaultClient is the HTTP client when the configuration names none. Its
// timeout bounds one attempt; the caller's context bounds the whole call.
var defaultClient = &http.Client{Timeout: 10 * time.Second}

// Client calls SNS in one region.
type Client struct {
	// Endpoint is the service's base URL, without a trailing slash.
	Endpoint string
	// Region is the signing region.
	Region string
	// Credentials signs each request; its credentials are retrieved per
	// call (a cache, as the SDK's configuration holds, keeps that cheap).
	Credentials aws.CredentialsProvider
	// HTTPClient makes the requests.
	HTTPClient aws.HTTPClient
	// Now is the signing clock.
	Now func() time.Time
	// Backoff is the wait before the one retry of a throttled or failed
	// (5xx) call.
	Backoff time.Duration

	signer *v4.Signer // safe for concurrent use
}

// New returns a Client for cfg: its region, credentials and HTTP client.
// The endpoint is the one the environment names for SNS
// (AWS_ENDPOINT_URL_SNS, else AWS_ENDPOINT_URL), else AWS's regional
// endpoint https://sns.<region>.amazonaws.com.
func New(cfg aws.Config) *Client {
	endpoint := strings.TrimSuffix(ddb.Endpoint("SNS"), "/")
	if endpoint == "" {
		endpoint = RegionalEndpoint(cfg.Region)
	}
	var client aws.HTTPClient = defaultClient
	if cfg.HTTPClient != nil {
		client = cfg.HTTPClient
	}
	return &Client{
		Endpoint:    endpoint,
		Region:      cfg.Region,
		Credentials: cfg.Credentials,
		HTTPClient:  client,
		Now:         time.Now,
		Backoff:     200 * time.Millisecond,
		signer:      v4.NewSigner(),
	}
}

// RegionalEndpoint returns AWS's SNS endpoint in region.
func RegionalEndpoint(region string) string {
	suffix := "amazonaws.com"
	if strings.HasPrefix(region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	return "https://sns." + region + "." + suffix
}

// Error is SNS's refusal of a call: the action, the HTTP status and, when
// SNS names them, its error code (InvalidParameter, Throttled, NotFound,
// ...) as Type and its message.
type Error struct {
	Action  string
	Status  int
	Type    string
	Message string
}

// Error returns "sns <action>: <status> <type>: <message>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("sns ")
	b.WriteString(e.Action)
	b.WriteString(": ")
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

// Throttled reports whether SNS refused the call for its rate (status 429,
// or the codes Throttled, Throttling, KMSThrottling), so that a later try
// may succeed.
func (e *Error) Throttled() bool {
	switch e.Type {
	case "Throttled", "Throttling", "KMSThrottling":
		return true
	}
	return e.Status == http.StatusTooManyRequests
}

// PublishSMS sends text as a transactional SMS to phone (E.164). A
// throttled or failed (5xx) call is tried once more after Backoff, as the
// SDK client would; after a 5xx SNS may have sent the first, so the
// recipient can get the message twice.
func (c *Client) PublishSMS(ctx context.Context, phone, text string) error {
	_, err := c.call(ctx, "Publish", url.Values{
		"PhoneNumber":                    {phone},
		"Message":                        {text},
		"MessageAttributes.entry.1.Name": {"AWS.SNS.SMS.SMSType"},
		"MessageAttributes.entry.1.Value.DataType":    {"String"},
		"MessageAttributes.entry.1.Value.StringValue": {"Transactional"},
	})
	return err
}

// CreatePlatformEndpoint creates (or, for the same token and user data,
// finds) the endpoint of a device token in the platform application appARN
// and returns its ARN.
func (c *Client) CreatePlatformEndpoint(ctx context.Context, appARN, token, userData string) (string, error) {
	const action = "CreatePlatformEndpoint"
	answer, err := c.call(ctx, action, url.Values{
		"PlatformApplicationArn": {appARN},
		"Token":                  {token},
		"CustomUserData":         {userData},
	})
	if err != nil {
		return "", err
	}
	arn, ok := element(answer, "EndpointArn")
	if !ok || arn == "" {
		return "", fmt.Errorf("sns %s: the answer names no EndpointArn", action)
	}
	return arn, nil
}

// DeleteEndpoint deletes the platform endpoint arn; deleting one that is
// gone succeeds.
func (c *Client) DeleteEndpoint(ctx context.Context, arn string) error {
	_, err := c.call(ctx, "DeleteEndpoint", url.Values{"EndpointArn": {arn}})
	return err
}

// call makes the Query request action with params and returns the body of
// its 2xx answer, read up to maxResponse. SNS's refusal is an *Error; a
// cancelled or expired ctx ends the call with ctx's error.
func (c *Client) call(ctx context.Context, action string, params url.Values) ([]byte, error) {
	if c.Region == "" {
		return nil, fmt.Errorf("sns %s: no region", action)
	}
	if c.Credentials == nil {
		return nil, fmt.Errorf("sns %s: no credentials", action)
	}
	params.Set("Action", action)
	params.Set("Version", version)
	// Encode sorts the keys and escapes as the SDK's Query encoder does.
	payload := []byte(params.Encode())
	sum := sha256.Sum256(payload)
	hash := hex.EncodeToString(sum[:])
	answer, err := c.attempt(ctx, action, payload, hash)
	var e *Error
	if !errors.As(err, &e) || (e.Status < 500 && !e.Throttled()) {
		return answer, err
	}
	t := time.NewTimer(c.Backoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("sns %s: %w (after %w)", action, ctx.Err(), err)
	case <-t.C:
	}
	return c.attempt(ctx, action, payload, hash)
}

// attempt signs and makes one request.
func (c *Client) attempt(ctx context.Context, action string, payload []byte, hash string) ([]byte, error) {
	creds, err := c.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("sns %s: retrieve credentials: %w", action, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Endpoint+"/", bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("sns %s: %w", action, err)
	}
	req.Header.Set("Content-Type", contentType)
	signer := c.signer
	if signer == nil {
		signer = v4.NewSigner()
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if err := signer.SignHTTP(ctx, creds, req, hash, "sns", c.Region, now()); err != nil {
		return nil, fmt.Errorf("sns %s: sign: %w", action, err)
	}
	client := c.HTTPClient
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// The URL in the error names only the endpoint; the request carries
		// the credentials in headers, which the error does not show.
		return nil, fmt.Errorf("sns %s: %w", action, err)
	}
	defer resp.Body.Close()
	// A 2xx status means SNS did the call, whatever follows it (a caller
	// that needs the answer's content finds it missing); an error answer
	// that breaks off is read as far as it came.
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 == 2 {
		return answer, nil
	}
	return nil, parseError(action, resp.StatusCode, answer)
}

// parseError reads SNS's error answer,
// <ErrorResponse><Error><Type>Sender</Type><Code>..</Code><Message>..</Message></Error>..:
// Code becomes the Type (Type there only says whose fault it is). A body
// that is not such XML becomes the message, cut to 200 bytes.
func parseError(action string, status int, answer []byte) *Error {
	e := &Error{Action: action, Status: status}
	code, ok := element(answer, "Code")
	if ok {
		e.Type = code
		e.Message, _ = element(answer, "Message")
		return e
	}
	e.Message = strings.ToValidUTF8(strings.TrimSpace(string(answer[:min(len(answer), 200)])), "")
	return e
}

// element returns the text of the first element named name in the XML
// document b, unescaped, and whether there is one. It knows only what SNS
// answers hold: elements without attributes whose text has no CDATA
// section or nested element.
func element(b []byte, name string) (string, bool) {
	open, end := "<"+name+">", "</"+name+">"
	s := string(b)
	i := strings.Index(s, open)
	if i < 0 {
		if strings.Contains(s, "<"+name+"/>") {
			return "", true
		}
		return "", false
	}
	s = s[i+len(open):]
	j := strings.Index(s, end)
	if j < 0 {
		return "", false
	}
	return unescape(s[:j]), true
}

// unescape replaces XML's predefined entities and character references in
// s; any other "&" stays as it is.
func unescape(s string) string {
	if !strings.Contains(s, "&") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '&')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s = s[i:]
		j := strings.IndexByte(s, ';')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		if r, ok := entity(s[1:j]); ok {
			b.WriteString(r)
		} else {
			b.WriteString(s[:j+1])
		}
		s = s[j+1:]
	}
}

// entity returns the text of the entity or character reference ref (the
// part between "&" and ";").
func entity(ref string) (string, bool) {
	switch ref {
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "amp":
		return "&", true
	case "quot":
		return `"`, true
	case "apos":
		return "'", true
	}
	if num, ok := strings.CutPrefix(ref, "#"); ok {
		base := 10
		if hexa, ok := strings.CutPrefix(num, "x"); ok {
			num, base = hexa, 16
		}
		n, err := strconv.ParseUint(num, base, 32)
		if err == nil && n > 0 && n <= 0x10FFFF {
			return string(rune(n)), true
		}
	}
	return "", false
}
