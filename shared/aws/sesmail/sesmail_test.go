package sesmail_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	sestypes "github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/loyalty-platform/platform/shared/aws/awsapi/awsapitest"
	"github.com/loyalty-platform/platform/shared/aws/sesmail"
)

const (
	region = awsapitest.Region
	key    = awsapitest.Key
	secret = awsapitest.Secret
)

// answer is a scripted response.
type answer = awsapitest.Answer

// newServer starts an SES stand-in that answers from answers, or, without
// any, with a sent message.
func newServer(t *testing.T, answers ...answer) *awsapitest.Server {
	t.Helper()
	return awsapitest.NewServer(t, func(awsapitest.Received) answer {
		return answer{Status: http.StatusOK, Body: `{"MessageId":"m-1"}`}
	}, answers...)
}

// newSender returns a Sender pointed at url with a fixed clock and no wait
// before its retry.
func newSender(url string, creds aws.CredentialsProvider) *sesmail.Sender {
	s := sesmail.New(aws.Config{Region: region, Credentials: creds})
	s.Endpoint = url
	s.Now = func() time.Time { return awsapitest.SignedAt }
	s.Backoff = 0
	return s
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
	return srv.Received()[0].Body
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
			s := newSender(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, tt.token))
			from, to := "no-reply@example.com", "ana@example.org"
			if err := s.Send(context.Background(), from, to, tt.subject, tt.text); err != nil {
				t.Fatalf("Send: %v", err)
			}
			reqs := srv.Received()
			if got, want := len(reqs), 1; got != want {
				t.Fatalf("requests: got %d, want %d", got, want)
			}
			r := reqs[0]
			if got, want := r.Method+" "+r.Path, "POST /v2/email/outbound-emails"; got != want {
				t.Errorf("request: got %q, want %q", got, want)
			}
			if got, want := r.Header.Get("Content-Type"), "application/json"; got != want {
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
			if got := decode(t, r.Body); !reflect.DeepEqual(got, any(wantBody)) {
				t.Errorf("body: got %v, want %v", got, wantBody)
			}
			if got, want := decode(t, r.Body), decode(t, sdkBody(t, from, to, tt.subject, tt.text)); !reflect.DeepEqual(got, want) {
				t.Errorf("body: got %v, the SDK client sends %v", got, want)
			}
			awsapitest.CheckSigned(t, r, tt.token, "ses")
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
			answers: []answer{{Status: 400, Header: map[string]string{"X-Amzn-ErrorType": "MessageRejected:http://internal.amazon.com/coral/com.amazonaws.sesv2/"},
				Body: `{"message":"Email address is not verified. The following identities failed the check in region EU-WEST-1: ana@example.org"}`}},
			wantErr:      &sesmail.Error{Status: 400, Type: "MessageRejected", Message: "Email address is not verified. The following identities failed the check in region EU-WEST-1: ana@example.org"},
			wantText:     "ses send: 400 MessageRejected: Email address is not verified. The following identities failed the check in region EU-WEST-1: ana@example.org",
			wantAttempts: 1,
		},
		{
			name:         "type in the body",
			answers:      []answer{{Status: 400, Body: `{"__type":"com.amazonaws.sesv2#AccountSuspendedException","Message":"suspended"}`}},
			wantErr:      &sesmail.Error{Status: 400, Type: "AccountSuspendedException", Message: "suspended"},
			wantText:     "ses send: 400 AccountSuspendedException: suspended",
			wantAttempts: 1,
		},
		{
			name: "too many requests twice",
			answers: []answer{{Status: 429, Header: map[string]string{"X-Amzn-ErrorType": "TooManyRequestsException"},
				Body: `{"message":"Maximum sending rate exceeded."}`}},
			wantErr:       &sesmail.Error{Status: 429, Type: "TooManyRequestsException", Message: "Maximum sending rate exceeded."},
			wantText:      "ses send: 429 TooManyRequestsException: Maximum sending rate exceeded.",
			wantThrottled: true,
			wantAttempts:  2,
		},
		{
			name:         "server error with a body that is not json twice",
			answers:      []answer{{Status: 500, Body: "<html>Internal Failure</html>\n"}},
			wantErr:      &sesmail.Error{Status: 500, Message: "<html>Internal Failure</html>"},
			wantText:     "ses send: 500: <html>Internal Failure</html>",
			wantAttempts: 2,
		},
		{
			name:         "server error without a body twice",
			answers:      []answer{{Status: 503}},
			wantErr:      &sesmail.Error{Status: 503},
			wantText:     "ses send: 503",
			wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, tt.answers...)
			s := newSender(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, "token"))
			err := s.Send(context.Background(), "no-reply@example.com", "ana@example.org", "Subject", "Text")
			if got, want := len(srv.Received()), tt.wantAttempts; got != want {
				t.Errorf("attempts: got %d, want %d", got, want)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Send: got %v, want no error", err)
				}
				return
			}
			awsapitest.CheckRefusal(t, err, tt.wantErr, tt.wantText, tt.wantThrottled)
		})
	}
}

func TestNewEndpoint(t *testing.T) {
	awsapitest.CheckEndpoints(t, "SESV2", "email", func(region string) string {
		return sesmail.New(aws.Config{Region: region}).Endpoint
	})
	if got, want := sesmail.RegionalEndpoint("cn-northwest-1"), "https://email.cn-northwest-1.amazonaws.com.cn"; got != want {
		t.Errorf("RegionalEndpoint: got %q, want %q", got, want)
	}
}
