package sqsapi_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/loyalty-platform/platform/shared/aws/awsapi/awsapitest"
	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
)

const (
	region   = awsapitest.Region
	key      = awsapitest.Key
	secret   = awsapitest.Secret
	queueURL = "https://sqs.eu-west-1.amazonaws.com/123456789012/deliveries.fifo"
)

// jsonHeader is the Content-Type of SQS's answers.
var jsonHeader = map[string]string{"Content-Type": "application/x-amz-json-1.0"}

// md5Hex returns the MD5 of s in hex, as SQS answers it.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// entry is one entry of a received SendMessageBatch request.
type entry struct {
	ID                     string `json:"Id"`
	MessageBody            string `json:"MessageBody"`
	MessageGroupID         string `json:"MessageGroupId"`
	MessageDeduplicationID string `json:"MessageDeduplicationId"`
}

// batchRequest is a received SendMessageBatch request.
type batchRequest struct {
	QueueURL string  `json:"QueueUrl"`
	Entries  []entry `json:"Entries"`
}

func decodeBatch(t *testing.T, r awsapitest.Received) batchRequest {
	t.Helper()
	var b batchRequest
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	return b
}

// accept answers a SendMessageBatch request with every entry sent, except
// those refuse names (by body), which it refuses with code.
func accept(refuse map[string]string) func(awsapitest.Received) awsapitest.Answer {
	return func(r awsapitest.Received) awsapitest.Answer {
		var b batchRequest
		_ = json.Unmarshal(r.Body, &b)
		type ok struct {
			ID               string `json:"Id"`
			MessageID        string `json:"MessageId"`
			MD5OfMessageBody string `json:"MD5OfMessageBody"`
			SequenceNumber   string `json:"SequenceNumber,omitempty"`
		}
		type failed struct {
			ID          string `json:"Id"`
			SenderFault bool   `json:"SenderFault"`
			Code        string `json:"Code"`
			Message     string `json:"Message"`
		}
		out := struct {
			Successful []ok     `json:"Successful"`
			Failed     []failed `json:"Failed,omitempty"`
		}{Successful: []ok{}}
		for i, e := range b.Entries {
			if code, no := refuse[e.MessageBody]; no {
				out.Failed = append(out.Failed, failed{ID: e.ID, SenderFault: code != "InternalError", Code: code, Message: "refused " + e.MessageBody})
				continue
			}
			out.Successful = append(out.Successful, ok{ID: e.ID, MessageID: "m-" + e.ID, MD5OfMessageBody: md5Hex(e.MessageBody), SequenceNumber: strconv.Itoa(1000 + i)})
		}
		j, _ := json.Marshal(out)
		return awsapitest.Answer{Status: http.StatusOK, Header: jsonHeader, Body: string(j)}
	}
}

// newClient returns a Client pointed at url with a fixed clock and no wait
// before its retry.
func newClient(url, token string) *sqsapi.Client {
	c := sqsapi.New(aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, secret, token)})
	c.Endpoint = url
	c.Now = func() time.Time { return awsapitest.SignedAt }
	c.Backoff = 0
	return c
}

func TestSendBatchRequest(t *testing.T) {
	tests := []struct {
		name  string
		token string
		msgs  []sqsapi.Message
		want  []entry
	}{
		{
			name: "fifo",
			msgs: []sqsapi.Message{
				{ID: "e-1", Body: `{"event":"ORDER_COMPLETED"}`, GroupID: "ep-1#u-1", DeduplicationID: "ep-1#a-1"},
				{Body: "second", GroupID: "ep-2#u-1", DeduplicationID: "ep-2#a-1"},
			},
			want: []entry{
				{ID: "e-1", MessageBody: `{"event":"ORDER_COMPLETED"}`, MessageGroupID: "ep-1#u-1", MessageDeduplicationID: "ep-1#a-1"},
				{ID: "1", MessageBody: "second", MessageGroupID: "ep-2#u-1", MessageDeduplicationID: "ep-2#a-1"},
			},
		},
		{
			name:  "session token and non-ascii characters",
			token: "IQoJb3JpZ2luX2VjEXAMPLETOKEN",
			msgs:  []sqsapi.Message{{Body: "Código: 1 & 2 = 3 + 4 % ✓ <b>\"x\"</b>\nline 2 ~*'()!\t\u2028"}},
			want:  []entry{{ID: "0", MessageBody: "Código: 1 & 2 = 3 + 4 % ✓ <b>\"x\"</b>\nline 2 ~*'()!\t\u2028"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, accept(nil))
			if err := newClient(srv.URL, tt.token).SendBatch(context.Background(), queueURL, tt.msgs); err != nil {
				t.Fatalf("SendBatch: %v", err)
			}
			reqs := srv.Received()
			if got, want := len(reqs), 1; got != want {
				t.Fatalf("requests: got %d, want %d", got, want)
			}
			r := reqs[0]
			if got, want := r.Method+" "+r.Path, "POST /"; got != want {
				t.Errorf("request: got %q, want %q", got, want)
			}
			for h, want := range map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.SendMessageBatch"} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("%s: got %q, want %q", h, got, want)
				}
			}
			b := decodeBatch(t, r)
			if got, want := b, (batchRequest{QueueURL: queueURL, Entries: tt.want}); !reflect.DeepEqual(got, want) {
				t.Errorf("body: got %+v, want %+v", got, want)
			}
			// Empty group and deduplication ids are left out, as SQS
			// refuses them on a standard queue.
			if tt.want[0].MessageGroupID == "" && strings.Contains(string(r.Body), "MessageGroupId") {
				t.Errorf("body %s names a group", r.Body)
			}
			awsapitest.CheckSigned(t, r, tt.token, "sqs", "x-amz-target")
		})
	}
}

func TestSendBatchCalls(t *testing.T) {
	numbered := func(n int, group func(i int) string) []sqsapi.Message {
		msgs := make([]sqsapi.Message, n)
		for i := range msgs {
			msgs[i] = sqsapi.Message{Body: "m" + strconv.Itoa(i), GroupID: group(i)}
			if msgs[i].GroupID != "" {
				msgs[i].DeduplicationID = msgs[i].Body
			}
		}
		return msgs
	}
	none := func(int) string { return "" }
	tests := []struct {
		name string
		msgs []sqsapi.Message
		want [][]string // the bodies of each call
	}{
		{name: "none", msgs: nil, want: nil},
		{name: "ten in one", msgs: numbered(10, none), want: [][]string{{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"}}},
		{name: "twenty-three in three", msgs: numbered(23, none), want: [][]string{
			{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"},
			{"m10", "m11", "m12", "m13", "m14", "m15", "m16", "m17", "m18", "m19"},
			{"m20", "m21", "m22"},
		}},
		{name: "a group's second message starts a call", msgs: numbered(7, func(i int) string { return []string{"a", "b", "c", "a", "d", "a", "e"}[i] }), want: [][]string{
			{"m0", "m1", "m2"}, {"m3", "m4"}, {"m5", "m6"},
		}},
		{name: "one group", msgs: numbered(3, func(int) string { return "g" }), want: [][]string{{"m0"}, {"m1"}, {"m2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, accept(nil))
			if err := newClient(srv.URL, "").SendBatch(context.Background(), queueURL, tt.msgs); err != nil {
				t.Fatalf("SendBatch: %v", err)
			}
			var got [][]string
			for _, r := range srv.Received() {
				var bodies []string
				for _, e := range decodeBatch(t, r).Entries {
					bodies = append(bodies, e.MessageBody)
				}
				got = append(got, bodies)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("calls: got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSendBatchRefusedEntries(t *testing.T) {
	msgs := []sqsapi.Message{{Body: "a"}, {Body: "b"}, {Body: "c"}, {Body: "d"}}
	tests := []struct {
		name    string
		answers []func(awsapitest.Received) awsapitest.Answer // per call; the last repeats
		want    [][]string                                    // the bodies of each call
		wantErr *sqsapi.EntryError
	}{
		{
			name:    "refused once",
			answers: []func(awsapitest.Received) awsapitest.Answer{accept(map[string]string{"b": "InternalError", "d": "InternalError"}), accept(nil)},
			want:    [][]string{{"a", "b", "c", "d"}, {"b", "d"}},
		},
		{
			name:    "refused twice",
			answers: []func(awsapitest.Received) awsapitest.Answer{accept(map[string]string{"c": "InvalidParameterValue"})},
			want:    [][]string{{"a", "b", "c", "d"}, {"c"}},
			wantErr: &sqsapi.EntryError{ID: "2", Code: "InvalidParameterValue", Message: "refused c", SenderFault: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			srv := awsapitest.NewServer(t, func(r awsapitest.Received) awsapitest.Answer {
				a := tt.answers[min(calls, len(tt.answers)-1)]
				calls++
				return a(r)
			})
			err := newClient(srv.URL, "").SendBatch(context.Background(), queueURL, msgs)
			var got [][]string
			for _, r := range srv.Received() {
				var bodies []string
				for _, e := range decodeBatch(t, r).Entries {
					bodies = append(bodies, e.MessageBody)
				}
				got = append(got, bodies)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("calls: got %v, want %v", got, tt.want)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("SendBatch: %v", err)
				}
				return
			}
			gotErr, ok := err.(*sqsapi.EntryError)
			if !ok || !reflect.DeepEqual(gotErr, tt.wantErr) {
				t.Fatalf("SendBatch: got %v (%T), want %+v", err, err, tt.wantErr)
			}
			if got, want := err.Error(), `sqs SendMessageBatch: entry "2" refused: InvalidParameterValue: refused c`; got != want {
				t.Errorf("error text: got %q, want %q", got, want)
			}
		})
	}
}

func TestSendBatchAnswers(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
	}{
		{name: "md5 of another body", body: `{"Successful":[{"Id":"0","MessageId":"m","MD5OfMessageBody":"00000000000000000000000000000000"}]}`,
			wantErr: `sqs SendMessageBatch: entry "0": SQS answered the MD5 "00000000000000000000000000000000" of a body, not "` + md5Hex("x") + `" of the one sent`},
		{name: "entry not sent", body: `{"Successful":[{"Id":"0","MessageId":"m","MD5OfMessageBody":"` + md5Hex("x") + `"},{"Id":"9","MessageId":"m","MD5OfMessageBody":"x"}]}`,
			wantErr: `sqs SendMessageBatch: the answer names entry "9", which was not sent`},
		{name: "entry left out", body: `{"Successful":[]}`, wantErr: `sqs SendMessageBatch: the answer says nothing of entry "0"`},
		{name: "not json", body: `<html>`, wantErr: "sqs SendMessageBatch: read the answer: invalid character '<' looking for beginning of value"},
		{name: "upper-case md5", body: `{"Successful":[{"Id":"0","MessageId":"m","MD5OfMessageBody":"` + strings.ToUpper(md5Hex("x")) + `"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, nil, awsapitest.Answer{Status: 200, Header: jsonHeader, Body: tt.body})
			err := newClient(srv.URL, "").SendBatch(context.Background(), queueURL, []sqsapi.Message{{Body: "x"}})
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("SendBatch: got %q, want %q", gotErr, tt.wantErr)
			}
		})
	}
}

func TestChangeVisibility(t *testing.T) {
	tests := []struct {
		name     string
		timeout  time.Duration
		wantSecs int64 // -1: no request
		wantErr  string
	}{
		{name: "zero", timeout: 0, wantSecs: 0},
		{name: "a minute", timeout: time.Minute, wantSecs: 60},
		{name: "rounded up", timeout: 1500 * time.Millisecond, wantSecs: 2},
		{name: "twelve hours", timeout: 12 * time.Hour, wantSecs: 43200},
		{name: "past twelve hours", timeout: 12*time.Hour + time.Nanosecond, wantSecs: -1, wantErr: "sqs ChangeMessageVisibility: timeout 12h0m0.000000001s is not between 0 and 12h0m0s"},
		{name: "negative", timeout: -time.Second, wantSecs: -1, wantErr: "sqs ChangeMessageVisibility: timeout -1s is not between 0 and 12h0m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, nil, awsapitest.Answer{Status: 200, Header: jsonHeader})
			err := newClient(srv.URL, "").ChangeVisibility(context.Background(), queueURL, "AQEB+rh/x==", tt.timeout)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("ChangeVisibility: got %q, want %q", gotErr, tt.wantErr)
			}
			reqs := srv.Received()
			if tt.wantSecs < 0 {
				if len(reqs) != 0 {
					t.Errorf("requests: got %d, want none", len(reqs))
				}
				return
			}
			if got, want := len(reqs), 1; got != want {
				t.Fatalf("requests: got %d, want %d", got, want)
			}
			r := reqs[0]
			if got, want := r.Header.Get("X-Amz-Target"), "AmazonSQS.ChangeMessageVisibility"; got != want {
				t.Errorf("X-Amz-Target: got %q, want %q", got, want)
			}
			var body map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"QueueUrl": queueURL, "ReceiptHandle": "AQEB+rh/x==", "VisibilityTimeout": float64(tt.wantSecs)}
			if !reflect.DeepEqual(body, want) {
				t.Errorf("body: got %v, want %v", body, want)
			}
			awsapitest.CheckSigned(t, r, "", "sqs", "x-amz-target")
		})
	}
}

func TestErrors(t *testing.T) {
	errJSON := func(typ, message string) string {
		j, _ := json.Marshal(map[string]string{"__type": typ, "message": message})
		return string(j)
	}
	query := func(code string) map[string]string {
		return map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amzn-Query-Error": code + ";Sender"}
	}
	tests := []struct {
		name          string
		answers       []awsapitest.Answer
		wantErr       *sqsapi.Error
		wantText      string
		wantThrottled bool
		wantAttempts  int
	}{
		{
			name:         "no such queue",
			answers:      []awsapitest.Answer{{Status: 400, Header: query("AWS.SimpleQueueService.NonExistentQueue"), Body: errJSON("com.amazonaws.sqs#QueueDoesNotExist", "The specified queue does not exist.")}},
			wantErr:      &sqsapi.Error{Status: 400, Type: "QueueDoesNotExist", Message: "The specified queue does not exist."},
			wantText:     ": 400 QueueDoesNotExist: The specified queue does not exist.",
			wantAttempts: 1,
		},
		{
			name:         "code in the header alone",
			answers:      []awsapitest.Answer{{Status: 400, Header: query("InvalidParameterValue"), Body: `{"Message":"Value 43201 for parameter VisibilityTimeout is invalid."}`}},
			wantErr:      &sqsapi.Error{Status: 400, Type: "InvalidParameterValue", Message: "Value 43201 for parameter VisibilityTimeout is invalid."},
			wantText:     ": 400 InvalidParameterValue: Value 43201 for parameter VisibilityTimeout is invalid.",
			wantAttempts: 1,
		},
		{
			name:          "throttled twice",
			answers:       []awsapitest.Answer{{Status: 400, Header: query("RequestThrottled"), Body: errJSON("com.amazonaws.sqs#RequestThrottled", "Rate exceeded")}},
			wantErr:       &sqsapi.Error{Status: 400, Type: "RequestThrottled", Message: "Rate exceeded"},
			wantText:      ": 400 RequestThrottled: Rate exceeded",
			wantThrottled: true,
			wantAttempts:  2,
		},
		{
			name:          "status 429 twice",
			answers:       []awsapitest.Answer{{Status: 429}},
			wantErr:       &sqsapi.Error{Status: 429},
			wantText:      ": 429",
			wantThrottled: true,
			wantAttempts:  2,
		},
		{
			name:         "server error with a body that is not json twice",
			answers:      []awsapitest.Answer{{Status: 500, Body: "Internal Failure\n"}},
			wantErr:      &sqsapi.Error{Status: 500, Message: "Internal Failure"},
			wantText:     ": 500: Internal Failure",
			wantAttempts: 2,
		},
		{
			name:         "server error then done",
			answers:      []awsapitest.Answer{{Status: 500, Body: errJSON("com.amazonaws.sqs#InternalError", "oops")}, {Status: 200, Header: jsonHeader, Body: "{}"}},
			wantAttempts: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, nil, tt.answers...)
			err := newClient(srv.URL, "").ChangeVisibility(context.Background(), queueURL, "rh", time.Minute)
			if got, want := len(srv.Received()), tt.wantAttempts; got != want {
				t.Errorf("attempts: got %d, want %d", got, want)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("ChangeVisibility: got %v, want no error", err)
				}
				return
			}
			want := *tt.wantErr
			want.Action = "ChangeMessageVisibility"
			awsapitest.CheckRefusal(t, err, &want, "sqs ChangeMessageVisibility"+tt.wantText, tt.wantThrottled)
		})
	}
}

func TestConfigurationErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     aws.Config
		wantErr string
	}{
		{name: "no region", cfg: aws.Config{Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")}, wantErr: "sqs SendMessageBatch: no region"},
		{name: "no credentials", cfg: aws.Config{Region: region}, wantErr: "sqs SendMessageBatch: no credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := awsapitest.NewServer(t, accept(nil))
			c := sqsapi.New(tt.cfg)
			c.Endpoint = srv.URL
			err := c.SendBatch(context.Background(), queueURL, []sqsapi.Message{{Body: "x"}})
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("SendBatch: got %v, want %q", err, tt.wantErr)
			}
			if got := len(srv.Received()); got != 0 {
				t.Errorf("requests: got %d, want none", got)
			}
		})
	}
}

func TestNewEndpoint(t *testing.T) {
	awsapitest.CheckEndpoints(t, "SQS", "sqs", func(region string) string {
		return sqsapi.New(aws.Config{Region: region}).Endpoint
	})
	if got, want := sqsapi.RegionalEndpoint("cn-north-1"), "https://sqs.cn-north-1.amazonaws.com.cn"; got != want {
		t.Errorf("RegionalEndpoint: got %q, want %q", got, want)
	}
}
