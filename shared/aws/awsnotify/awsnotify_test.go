package awsnotify_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/loyalty-platform/platform/shared/aws/awsnotify"
	"github.com/loyalty-platform/platform/shared/aws/sesmail"
	"github.com/loyalty-platform/platform/shared/aws/snsapi"
	"github.com/loyalty-platform/platform/shared/platform/notify"
)

const (
	appARN      = "arn:aws:sns:eu-west-1:123456789012:app/APNS/loyalty"
	endpointARN = "arn:aws:sns:eu-west-1:123456789012:endpoint/APNS/loyalty/0b1c"
)

// request is one request as the stand-in saw it: its path and, for SNS,
// its form.
type request struct {
	path string
	form url.Values
}

// stub stands in for SNS and SES: it records requests and answers each
// with status and, for CreatePlatformEndpoint, the endpoint's ARN.
type stub struct {
	mu       sync.Mutex
	requests []request
	status   int
}

func newAWS(t *testing.T, status int) (*awsnotify.AWS, *stub) {
	t.Helper()
	s := &stub{status: status}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var form url.Values
		if r.URL.Path == "/" {
			form, _ = url.ParseQuery(string(b))
		}
		s.mu.Lock()
		s.requests = append(s.requests, request{path: r.URL.Path, form: form})
		s.mu.Unlock()
		w.WriteHeader(s.status)
		switch {
		case s.status != http.StatusOK:
			io.WriteString(w, `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameter</Code><Message>Invalid parameter: Token</Message></Error></ErrorResponse>`)
		case form.Get("Action") == "CreatePlatformEndpoint":
			io.WriteString(w, `<CreatePlatformEndpointResponse><CreatePlatformEndpointResult><EndpointArn>`+endpointARN+`</EndpointArn></CreatePlatformEndpointResult></CreatePlatformEndpointResponse>`)
		case form != nil:
			io.WriteString(w, `<`+form.Get("Action")+`Response/>`)
		default:
			io.WriteString(w, `{"MessageId":"m-1"}`)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	sns := snsapi.New(cfg)
	sns.Endpoint = srv.URL
	sns.Backoff = 0
	ses := sesmail.New(cfg)
	ses.Endpoint = srv.URL
	ses.Backoff = 0
	return &awsnotify.AWS{
		Push: &awsnotify.Push{SNS: sns, PlatformApps: map[string]string{"IOS": appARN, "ANDROID": ""}},
		SES:  ses,
		From: "no-reply@example.com",
	}, s
}

func (s *stub) received() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.requests...)
}

// sns returns an SNS request's form: Action, Version and params.
func sns(action string, params map[string]string) request {
	form := url.Values{"Action": {action}, "Version": {"2010-03-31"}}
	for k, v := range params {
		form.Set(k, v)
	}
	return request{path: "/", form: form}
}

func TestAWS(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		run     func(ctx context.Context, a *awsnotify.AWS) (string, error)
		want    string
		wantErr string
		wantReq []request
	}{
		{
			name: "register",
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return a.RegisterDevice(ctx, "t-1", "u-1", "IOS", "device-token")
			},
			want: endpointARN,
			wantReq: []request{sns("CreatePlatformEndpoint", map[string]string{
				"PlatformApplicationArn": appARN, "Token": "device-token", "CustomUserData": "t-1/u-1",
			})},
		},
		{
			name: "register without a platform application",
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return a.RegisterDevice(ctx, "t-1", "u-1", "ANDROID", "device-token")
			},
		},
		{
			name:   "register refused",
			status: http.StatusBadRequest,
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return a.RegisterDevice(ctx, "t-1", "u-1", "IOS", "device-token")
			},
			wantErr: "register push endpoint: sns CreatePlatformEndpoint: 400 InvalidParameter: Invalid parameter: Token",
			wantReq: []request{sns("CreatePlatformEndpoint", map[string]string{
				"PlatformApplicationArn": appARN, "Token": "device-token", "CustomUserData": "t-1/u-1",
			})},
		},
		{
			name: "unregister",
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return "", a.UnregisterDevice(ctx, endpointARN)
			},
			wantReq: []request{sns("DeleteEndpoint", map[string]string{"EndpointArn": endpointARN})},
		},
		{
			name: "unregister an endpoint that is not an arn",
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return "", a.UnregisterDevice(ctx, "local-endpoint")
			},
		},
		{
			name: "sms",
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return "", a.Send(ctx, notify.Message{TenantID: "t-1", Channel: notify.SMS, To: "+351912345678", Text: "Your code is 123456."})
			},
			wantReq: []request{sns("Publish", map[string]string{
				"PhoneNumber": "+351912345678", "Message": "Your code is 123456.",
				"MessageAttributes.entry.1.Name":              "AWS.SNS.SMS.SMSType",
				"MessageAttributes.entry.1.Value.DataType":    "String",
				"MessageAttributes.entry.1.Value.StringValue": "Transactional",
			})},
		},
		{
			name:   "sms refused",
			status: http.StatusBadRequest,
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return "", a.Send(ctx, notify.Message{TenantID: "t-1", Channel: notify.SMS, To: "+351", Text: "Your code is 123456."})
			},
			wantErr: "send sms: sns Publish: 400 InvalidParameter: Invalid parameter: Token",
			wantReq: []request{sns("Publish", map[string]string{
				"PhoneNumber": "+351", "Message": "Your code is 123456.",
				"MessageAttributes.entry.1.Name":              "AWS.SNS.SMS.SMSType",
				"MessageAttributes.entry.1.Value.DataType":    "String",
				"MessageAttributes.entry.1.Value.StringValue": "Transactional",
			})},
		},
		{
			name: "e-mail",
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return "", a.Send(ctx, notify.Message{TenantID: "t-1", Channel: notify.Email, To: "ana@example.org", Subject: "Code", Text: "123456"})
			},
			wantReq: []request{{path: "/v2/email/outbound-emails"}},
		},
		{
			name: "unknown channel",
			run: func(ctx context.Context, a *awsnotify.AWS) (string, error) {
				return "", a.Send(ctx, notify.Message{TenantID: "t-1", Channel: "PIGEON", To: "x"})
			},
			wantErr: `send: unknown channel "PIGEON"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status := tt.status
			if status == 0 {
				status = http.StatusOK
			}
			a, s := newAWS(t, status)
			got, err := tt.run(context.Background(), a)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("got %q, %q; want %q, %q", got, gotErr, tt.want, tt.wantErr)
			}
			if tt.status != 0 {
				var e *snsapi.Error
				if !errors.As(err, &e) || e.Status != tt.status {
					t.Errorf("error %v: want a *snsapi.Error with status %d", err, tt.status)
				}
			}
			if got, want := s.received(), tt.wantReq; !reflect.DeepEqual(got, want) {
				t.Errorf("requests: got %v, want %v", got, want)
			}
		})
	}
}
