package snsapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"
	"github.com/loyalty-platform/platform/shared/aws/awsapi/awsapitest"
	"github.com/loyalty-platform/platform/shared/aws/snsapi"
)

const (
	region = awsapitest.Region
	key    = awsapitest.Key
	secret = awsapitest.Secret

	appARN      = "arn:aws:sns:eu-west-1:123456789012:app/GCM/loyalty"
	endpointARN = "arn:aws:sns:eu-west-1:123456789012:endpoint/GCM/loyalty/5e3e9847-3183-3f18-a7e8-671c3a57d4b3"
)

// answer is a scripted response; newServer gives it SNS's Content-Type.
type answer struct {
	status int
	body   string
}

// ok returns SNS's answer to a successful action, as SNS writes it.
func ok(action string) string {
	result := ""
	switch action {
	case "Publish":
		result = "\n  <PublishResult>\n    <MessageId>567910cd-659e-55d4-8ccb-5aaf14679dc0</MessageId>\n  </PublishResult>"
	case "CreatePlatformEndpoint":
		result = "\n  <CreatePlatformEndpointResult>\n    <EndpointArn>" + endpointARN + "</EndpointArn>\n  </CreatePlatformEndpointResult>"
	}
	return `<` + action + `Response xmlns="http://sns.amazonaws.com/doc/2010-03-31/">` + result + `
  <ResponseMetadata>
    <RequestId>d74b8436-ae13-5ab4-a9ff-ce54dfea72a0</RequestId>
  </ResponseMetadata>
</` + action + `Response>
`
}

// errorXML returns SNS's error answer with code and message (escaped as
// given).
func errorXML(fault, code, message string) string {
	return `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
  <Error>
    <Type>` + fault + `</Type>
    <Code>` + code + `</Code>
    <Message>` + message + `</Message>
  </Error>
  <RequestId>9f5d3e4a-1c2b-5d6e-8f90-a1b2c3d4e5f6</RequestId>
</ErrorResponse>
`
}

// newServer starts an SNS stand-in that answers each attempt with the
// next scripted answer (the last one repeats); without a script it answers
// every action with its success.
func newServer(t *testing.T, answers ...answer) *awsapitest.Server {
	t.Helper()
	xml := map[string]string{"Content-Type": "text/xml"}
	script := make([]awsapitest.Answer, len(answers))
	for i, a := range answers {
		script[i] = awsapitest.Answer{Status: a.status, Header: xml, Body: a.body}
	}
	return awsapitest.NewServer(t, func(r awsapitest.Received) awsapitest.Answer {
		form, _ := url.ParseQuery(string(r.Body))
		return awsapitest.Answer{Status: http.StatusOK, Header: xml, Body: ok(form.Get("Action"))}
	}, script...)
}

// newClient returns a Client pointed at url with a fixed clock and no wait
// before its retry.
func newClient(url string, creds aws.CredentialsProvider) *snsapi.Client {
	c := snsapi.New(aws.Config{Region: region, Credentials: creds})
	c.Endpoint = url
	c.Now = func() time.Time { return awsapitest.SignedAt }
	c.Backoff = 0
	return c
}

// sdkClient returns the SNS SDK client pointed at url, without retries.
func sdkClient(url string) *sns.Client {
	return sns.NewFromConfig(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")}, func(o *sns.Options) {
		o.BaseEndpoint = aws.String(url)
		o.RetryMaxAttempts = 1
	})
}

func form(t *testing.T, b []byte) url.Values {
	t.Helper()
	v, err := url.ParseQuery(string(b))
	if err != nil {
		t.Fatalf("body %q: %v", b, err)
	}
	return v
}

// call is one of the Client's calls, made through snsapi and through the
// SDK client with the same input.
type call struct {
	name     string
	run      func(ctx context.Context, c *snsapi.Client) (string, error)
	sdk      func(ctx context.Context, c *sns.Client) (string, error)
	wantForm url.Values
	want     string
}

// calls returns the three calls with arguments drawn from text.
func calls(phone, text, token, userData string) []call {
	return []call{
		{
			name: "publish sms",
			run: func(ctx context.Context, c *snsapi.Client) (string, error) {
				return "", c.PublishSMS(ctx, phone, text)
			},
			sdk: func(ctx context.Context, c *sns.Client) (string, error) {
				_, err := c.Publish(ctx, &sns.PublishInput{
					PhoneNumber: aws.String(phone),
					Message:     aws.String(text),
					MessageAttributes: map[string]snstypes.MessageAttributeValue{
						"AWS.SNS.SMS.SMSType": {DataType: aws.String("String"), StringValue: aws.String("Transactional")},
					},
				})
				return "", err
			},
			wantForm: url.Values{
				"Action":                         {"Publish"},
				"Version":                        {"2010-03-31"},
				"PhoneNumber":                    {phone},
				"Message":                        {text},
				"MessageAttributes.entry.1.Name": {"AWS.SNS.SMS.SMSType"},
				"MessageAttributes.entry.1.Value.DataType":    {"String"},
				"MessageAttributes.entry.1.Value.StringValue": {"Transactional"},
			},
		},
		{
			name: "create platform endpoint",
			run: func(ctx context.Context, c *snsapi.Client) (string, error) {
				return c.CreatePlatformEndpoint(ctx, appARN, token, userData)
			},
			sdk: func(ctx context.Context, c *sns.Client) (string, error) {
				out, err := c.CreatePlatformEndpoint(ctx, &sns.CreatePlatformEndpointInput{
					PlatformApplicationArn: aws.String(appARN),
					Token:                  aws.String(token),
					CustomUserData:         aws.String(userData),
				})
				if err != nil {
					return "", err
				}
				return aws.ToString(out.EndpointArn), nil
			},
			wantForm: url.Values{
				"Action":                 {"CreatePlatformEndpoint"},
				"Version":                {"2010-03-31"},
				"PlatformApplicationArn": {appARN},
				"Token":                  {token},
				"CustomUserData":         {userData},
			},
			want: endpointARN,
		},
		{
			name: "delete endpoint",
			run: func(ctx context.Context, c *snsapi.Client) (string, error) {
				return "", c.DeleteEndpoint(ctx, endpointARN)
			},
			sdk: func(ctx context.Context, c *sns.Client) (string, error) {
				_, err := c.DeleteEndpoint(ctx, &sns.DeleteEndpointInput{EndpointArn: aws.String(endpointARN)})
				return "", err
			},
			wantForm: url.Values{
				"Action":      {"DeleteEndpoint"},
				"Version":     {"2010-03-31"},
				"EndpointArn": {endpointARN},
			},
		},
	}
}

func TestRequest(t *testing.T) {
	tests := []struct {
		name                        string
		token                       string
		phone, text, push, userData string
	}{
		{name: "long-term key", phone: "+351912345678", text: "Your activation code is 123456.", push: "fcm-token:APA91b", userData: "t-1/u-1"},
		{name: "session token", token: "IQoJb3JpZ2luX2VjEXAMPLETOKEN", phone: "+14155550100", text: "Your code is 654321.", push: "0123abcd", userData: "t-2/u-2"},
		{name: "reserved and non-ascii characters", phone: "+33 6 12 34 56 78", text: "Código: 1 & 2 = 3 + 4 % ✓ <b>\"x\"</b>\nline 2 ~*'()!", push: "a/b+c=d&e f", userData: "t é/ü&=+"},
	}
	for _, tt := range tests {
		for _, c := range calls(tt.phone, tt.text, tt.push, tt.userData) {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				srv := newServer(t)
				got, err := c.run(context.Background(), newClient(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, tt.token)))
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				if got != c.want {
					t.Errorf("result: got %q, want %q", got, c.want)
				}
				reqs := srv.Received()
				if got, want := len(reqs), 1; got != want {
					t.Fatalf("requests: got %d, want %d", got, want)
				}
				r := reqs[0]
				if got, want := r.Method+" "+r.Path, "POST /"; got != want {
					t.Errorf("request: got %q, want %q", got, want)
				}
				if got, want := r.Header.Get("Content-Type"), "application/x-www-form-urlencoded; charset=utf-8"; got != want {
					t.Errorf("Content-Type: got %q, want %q", got, want)
				}
				if got := form(t, r.Body); !reflect.DeepEqual(got, c.wantForm) {
					t.Errorf("form: got %v, want %v", got, c.wantForm)
				}

				sdkSrv := newServer(t)
				sdkGot, err := c.sdk(context.Background(), sdkClient(sdkSrv.URL))
				if err != nil {
					t.Fatalf("SDK call: %v", err)
				}
				sdkReq := sdkSrv.Received()[0]
				if got, want := form(t, r.Body), form(t, sdkReq.Body); !reflect.DeepEqual(got, want) {
					t.Errorf("form: got %v, the SDK client sends %v", got, want)
				}
				if got, want := r.Method+" "+r.Path, sdkReq.Method+" "+sdkReq.Path; got != want {
					t.Errorf("request: got %q, the SDK client sends %q", got, want)
				}
				if got, want := got, sdkGot; got != want {
					t.Errorf("result: got %q, the SDK client reads %q", got, want)
				}

				awsapitest.CheckSigned(t, r, tt.token, "sns")
			})
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name          string
		answers       []answer
		wantErr       *snsapi.Error
		wantText      string
		wantThrottled bool
		wantAttempts  int
		notXML        bool // the answer is not XML the SDK client reads
	}{
		{
			name:         "invalid parameter",
			answers:      []answer{{status: 400, body: errorXML("Sender", "InvalidParameter", "Invalid parameter: PhoneNumber Reason: +351 is not valid to publish to")}},
			wantErr:      &snsapi.Error{Status: 400, Type: "InvalidParameter", Message: "Invalid parameter: PhoneNumber Reason: +351 is not valid to publish to"},
			wantText:     ": 400 InvalidParameter: Invalid parameter: PhoneNumber Reason: +351 is not valid to publish to",
			wantAttempts: 1,
		},
		{
			name:         "escaped message",
			answers:      []answer{{status: 400, body: errorXML("Sender", "InvalidParameter", "Token &lt;a&amp;b&gt; is &quot;bad&quot; &apos;here&apos; &#233;&#x2713;")}},
			wantErr:      &snsapi.Error{Status: 400, Type: "InvalidParameter", Message: "Token <a&b> is \"bad\" 'here' é✓"},
			wantText:     ": 400 InvalidParameter: Token <a&b> is \"bad\" 'here' é✓",
			wantAttempts: 1,
		},
		{
			name:         "malformed references kept",
			answers:      []answer{{status: 400, body: errorXML("Sender", "InvalidParameter", "&unknown; &#xZZ; &#0; &#1114112; & &amp")}},
			wantErr:      &snsapi.Error{Status: 400, Type: "InvalidParameter", Message: "&unknown; &#xZZ; &#0; &#1114112; & &amp"},
			wantText:     ": 400 InvalidParameter: &unknown; &#xZZ; &#0; &#1114112; & &amp",
			notXML:       true,
			wantAttempts: 1,
		},
		{
			name:         "not authorized",
			answers:      []answer{{status: 403, body: errorXML("Sender", "AuthorizationError", "User: arn:aws:sts::123456789012:assumed-role/fn is not authorized to perform: SNS:Publish")}},
			wantErr:      &snsapi.Error{Status: 403, Type: "AuthorizationError", Message: "User: arn:aws:sts::123456789012:assumed-role/fn is not authorized to perform: SNS:Publish"},
			wantText:     ": 403 AuthorizationError: User: arn:aws:sts::123456789012:assumed-role/fn is not authorized to perform: SNS:Publish",
			wantAttempts: 1,
		},
		{
			name:         "empty message",
			answers:      []answer{{status: 404, body: `<ErrorResponse><Error><Type>Sender</Type><Code>NotFound</Code><Message/></Error></ErrorResponse>`}},
			wantErr:      &snsapi.Error{Status: 404, Type: "NotFound"},
			wantText:     ": 404 NotFound",
			wantAttempts: 1,
		},
		{
			name:          "throttled twice",
			answers:       []answer{{status: 429, body: errorXML("Sender", "Throttled", "Rate exceeded")}},
			wantErr:       &snsapi.Error{Status: 429, Type: "Throttled", Message: "Rate exceeded"},
			wantText:      ": 429 Throttled: Rate exceeded",
			wantThrottled: true,
			wantAttempts:  2,
		},
		{
			name:          "throttling with status 400 twice",
			answers:       []answer{{status: 400, body: errorXML("Sender", "Throttling", "Rate exceeded")}},
			wantErr:       &snsapi.Error{Status: 400, Type: "Throttling", Message: "Rate exceeded"},
			wantText:      ": 400 Throttling: Rate exceeded",
			wantThrottled: true,
			wantAttempts:  2,
		},
		{
			name:         "server error with a body that is not xml twice",
			answers:      []answer{{status: 500, body: "Internal Failure\n"}},
			wantErr:      &snsapi.Error{Status: 500, Message: "Internal Failure"},
			wantText:     ": 500: Internal Failure",
			wantAttempts: 2,
		},
		{
			name:         "server error without a body twice",
			answers:      []answer{{status: 503}},
			wantErr:      &snsapi.Error{Status: 503},
			wantText:     ": 503",
			wantAttempts: 2,
		},
		{
			name:         "server error then done",
			answers:      []answer{{status: 500, body: errorXML("Receiver", "InternalError", "oops")}, {status: 200}},
			wantAttempts: 2,
		},
		{
			name:         "throttled then done",
			answers:      []answer{{status: 429}, {status: 200}},
			wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		for _, c := range calls("+351912345678", "Your code is 123456.", "token", "t/u") {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				answers := append([]answer(nil), tt.answers...)
				if last := &answers[len(answers)-1]; last.status == 200 {
					last.body = ok(c.wantForm.Get("Action"))
				}
				srv := newServer(t, answers...)
				_, err := c.run(context.Background(), newClient(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, "token")))
				if got, want := len(srv.Received()), tt.wantAttempts; got != want {
					t.Errorf("attempts: got %d, want %d", got, want)
				}
				if tt.wantErr == nil {
					if err != nil {
						t.Fatalf("call: got %v, want no error", err)
					}
					return
				}
				want := *tt.wantErr
				want.Action = c.wantForm.Get("Action")
				got := awsapitest.CheckRefusal(t, err, &want, "sns "+want.Action+tt.wantText, tt.wantThrottled)
				if got.Type == "" || tt.notXML {
					return
				}
				// The SDK client reads the same code and, when there is one,
				// message (without one it makes up "UnknownError").
				_, err = c.sdk(context.Background(), sdkClient(newServer(t, answers[0]).URL))
				var api smithy.APIError
				if !errors.As(err, &api) {
					t.Fatalf("SDK call: got %v, want a smithy.APIError", err)
				}
				message := got.Message
				if message == "" {
					message = api.ErrorMessage()
				}
				if got, want := got.Type+": "+message, api.ErrorCode()+": "+api.ErrorMessage(); got != want {
					t.Errorf("error: got %q, the SDK client reads %q", got, want)
				}
			})
		}
	}
}

func TestCreatePlatformEndpointAnswer(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    string
		wantErr string
	}{
		{name: "compact", body: `<CreatePlatformEndpointResponse><CreatePlatformEndpointResult><EndpointArn>arn:aws:sns:eu-west-1:1:endpoint/APNS/a/b</EndpointArn></CreatePlatformEndpointResult></CreatePlatformEndpointResponse>`, want: "arn:aws:sns:eu-west-1:1:endpoint/APNS/a/b"},
		{name: "no endpoint", body: `<CreatePlatformEndpointResponse><CreatePlatformEndpointResult/></CreatePlatformEndpointResponse>`, wantErr: "sns CreatePlatformEndpoint: the answer names no EndpointArn"},
		{name: "empty endpoint", body: `<CreatePlatformEndpointResponse><CreatePlatformEndpointResult><EndpointArn></EndpointArn></CreatePlatformEndpointResult></CreatePlatformEndpointResponse>`, wantErr: "sns CreatePlatformEndpoint: the answer names no EndpointArn"},
		{name: "broken off", body: `<CreatePlatformEndpointResponse><CreatePlatformEndpointResult><EndpointArn>arn:aws:sns:eu-we`, wantErr: "sns CreatePlatformEndpoint: the answer names no EndpointArn"},
		{name: "empty", wantErr: "sns CreatePlatformEndpoint: the answer names no EndpointArn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, answer{status: 200, body: tt.body})
			c := newClient(srv.URL, credentials.NewStaticCredentialsProvider(key, secret, ""))
			got, err := c.CreatePlatformEndpoint(context.Background(), appARN, "token", "t/u")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tt.want || gotErr != tt.wantErr {
				t.Errorf("got %q, %q; want %q, %q", got, gotErr, tt.want, tt.wantErr)
			}
			if got, want := len(srv.Received()), 1; got != want {
				t.Errorf("attempts: got %d, want %d", got, want)
			}
		})
	}
}

func TestConfigurationErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     aws.Config
		wantErr string
	}{
		{name: "no region", cfg: aws.Config{Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")}, wantErr: "sns DeleteEndpoint: no region"},
		{name: "no credentials", cfg: aws.Config{Region: region}, wantErr: "sns DeleteEndpoint: no credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t)
			c := snsapi.New(tt.cfg)
			c.Endpoint = srv.URL
			err := c.DeleteEndpoint(context.Background(), endpointARN)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("DeleteEndpoint: got %v, want %q", err, tt.wantErr)
			}
			if got, want := len(srv.Received()), 0; got != want {
				t.Errorf("requests: got %d, want %d", got, want)
			}
		})
	}
}

func TestNewEndpoint(t *testing.T) {
	awsapitest.CheckEndpoints(t, "SNS", "sns", func(region string) string {
		return snsapi.New(aws.Config{Region: region}).Endpoint
	})
	if got, want := snsapi.RegionalEndpoint("cn-north-1"), "https://sns.cn-north-1.amazonaws.com.cn"; got != want {
		t.Errorf("RegionalEndpoint: got %q, want %q", got, want)
	}
}
