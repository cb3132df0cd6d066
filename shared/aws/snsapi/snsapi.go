// Package snsapi makes the platform's three Amazon SNS calls (Publish of an
// SMS, CreatePlatformEndpoint, DeleteEndpoint) as plain HTTPS requests in
// SNS's Query protocol, signed with Signature Version 4. It stands in for
// the SNS SDK client, which adds its XML decoders and every operation's
// code to a function binary, for the three calls the platform makes.
package snsapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/loyalty-platform/platform/shared/aws/awsapi"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// version is the SNS API version every request names.
const version = "2010-03-31"

// contentType is the type of every request body.
const contentType = "application/x-www-form-urlencoded; charset=utf-8"

// Client calls SNS in one region: its Caller holds the endpoint, the
// region, the credentials, the HTTP client, the signing clock and the wait
// before the one retry.
type Client struct {
	awsapi.Caller
}

// New returns a Client for cfg: its region, credentials and HTTP client.
// The endpoint is the one the environment names for SNS
// (AWS_ENDPOINT_URL_SNS, else AWS_ENDPOINT_URL), else AWS's regional
// endpoint https://sns.<region>.amazonaws.com.
func New(cfg aws.Config) *Client {
	return &Client{Caller: awsapi.New(cfg, "sns", ddb.Endpoint("SNS"), "sns")}
}

// RegionalEndpoint returns AWS's SNS endpoint in region.
func RegionalEndpoint(region string) string {
	return awsapi.RegionalEndpoint("sns", region)
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
	return awsapi.RefusalText("sns "+e.Action, e.Status, e.Type, e.Message)
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
// its 2xx answer, read up to awsapi.MaxAnswer. A throttled (429, or
// Throttled, Throttling, KMSThrottling whatever the status) or failed
// (5xx) call is tried once more. SNS's refusal is an *Error; a cancelled
// or expired ctx ends the call with ctx's error.
func (c *Client) call(ctx context.Context, action string, params url.Values) ([]byte, error) {
	params.Set("Action", action)
	params.Set("Version", version)
	a, err := c.Call(ctx, awsapi.Request{
		Op:          "sns " + action,
		Method:      http.MethodPost,
		Path:        "/",
		ContentType: contentType,
		// Encode sorts the keys and escapes as the SDK's Query encoder does.
		Body: []byte(params.Encode()),
		Refused: func(a awsapi.Answer) error {
			return parseError(action, a.Status, a.Body)
		},
		Retry: func(a awsapi.Answer, refusal error) bool {
			var e *Error
			return a.Status >= 500 || errors.As(refusal, &e) && e.Throttled()
		},
	})
	if err != nil {
		return nil, err
	}
	return a.Body, nil
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
	e.Message = awsapi.Excerpt(answer)
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
