// Package sesmail sends an e-mail through the Amazon SES API v2 SendEmail
// operation with a plain HTTPS request signed with Signature Version 4. It
// stands in for the SES v2 SDK client, which adds about 650 KB and a costly
// package initialisation to a function binary, for the one call the
// platform makes.
package sesmail

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/loyalty-platform/platform/shared/aws/awsapi"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// path is the SendEmail operation's path.
const path = "/v2/email/outbound-emails"

// Sender sends e-mails through SES v2 in one region: its Caller holds the
// endpoint, the region, the credentials, the HTTP client, the signing
// clock and the wait before the one retry.
type Sender struct {
	awsapi.Caller
}

// New returns a Sender for cfg: its region, credentials and HTTP client. The
// endpoint is the one the environment names for SES v2
// (AWS_ENDPOINT_URL_SESV2, else AWS_ENDPOINT_URL), else AWS's regional
// endpoint https://email.<region>.amazonaws.com.
func New(cfg aws.Config) *Sender {
	return &Sender{Caller: awsapi.New(cfg, "ses", ddb.Endpoint("SESV2"), "email")}
}

// RegionalEndpoint returns AWS's SES v2 endpoint in region.
func RegionalEndpoint(region string) string {
	return awsapi.RegionalEndpoint("email", region)
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
	return awsapi.RefusalText("ses send", e.Status, e.Type, e.Message)
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
	payload, err := body(from, to, subject, text)
	if err != nil {
		return err
	}
	_, err = s.Call(ctx, awsapi.Request{
		Op:          "ses send",
		Method:      http.MethodPost,
		Path:        path,
		ContentType: "application/json",
		Body:        payload,
		Refused:     parseError,
	})
	return err
}

// parseError reads SES's error answer: the type from the X-Amzn-ErrorType
// header, else the body's "code" or "__type"; the body's "message". The
// type is stripped of its namespace ("ns#Type") and trailing URL
// ("Type:http://..."). A body that is not JSON becomes the message, cut to
// 200 bytes.
func parseError(a awsapi.Answer) error {
	status, header, answer := a.Status, a.Header.Get("X-Amzn-ErrorType"), a.Body
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
		e.Message = awsapi.Excerpt(answer)
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
