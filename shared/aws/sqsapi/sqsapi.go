// Package sqsapi makes the platform's Amazon SQS calls (SendMessageBatch,
// ChangeMessageVisibility) as plain HTTPS requests in SQS's AWS JSON 1.0
// protocol, signed with Signature Version 4. It stands in for the SQS SDK
// client, which adds its serializers and every operation's code to a
// function binary, for the two calls the platform makes.
package sqsapi

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/loyalty-platform/platform/shared/aws/awsapi"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// contentType is the type of every request body.
const contentType = "application/x-amz-json-1.0"

// targetPrefix precedes the action in the X-Amz-Target header.
const targetPrefix = "AmazonSQS."

// MaxBatch is the most messages one SendMessageBatch call carries.
const MaxBatch = 10

// MaxVisibility is the longest visibility timeout SQS sets.
const MaxVisibility = 12 * time.Hour

// Client calls SQS in one region: its Caller holds the endpoint, the
// region, the credentials, the HTTP client, the signing clock and the wait
// before the one retry.
type Client struct {
	awsapi.Caller
}

// New returns a Client for cfg: its region, credentials and HTTP client.
// The endpoint is the one the environment names for SQS
// (AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL), else AWS's regional
// endpoint https://sqs.<region>.amazonaws.com.
func New(cfg aws.Config) *Client {
	return &Client{Caller: awsapi.New(cfg, "sqs", ddb.Endpoint("SQS"), "sqs")}
}

// RegionalEndpoint returns AWS's SQS endpoint in region.
func RegionalEndpoint(region string) string {
	return awsapi.RegionalEndpoint("sqs", region)
}

// Message is one message to send.
type Message struct {
	// ID names the message's entry in its SendMessageBatch call (and in
	// the errors); "" is the message's index in the list sent.
	ID   string
	Body string
	// GroupID is the message group of a FIFO queue's message: SQS
	// delivers a group's messages in order, one at a time.
	GroupID string
	// DeduplicationID is a FIFO queue's deduplication id: a message sent
	// again with the same id within 5 minutes is accepted and dropped
	// (at most 128 characters: letters, digits and
	// !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~).
	DeduplicationID string
}

// Error is SQS's refusal of a call: the action, the HTTP status and, when
// SQS names them, its error code (QueueDoesNotExist, InvalidParameterValue,
// RequestThrottled, ...) as Type and its message.
type Error struct {
	Action  string
	Status  int
	Type    string
	Message string
}

// Error returns "sqs <action>: <status> <type>: <message>".
func (e *Error) Error() string {
	return awsapi.RefusalText("sqs "+e.Action, e.Status, e.Type, e.Message)
}

// Throttled reports whether SQS refused the call for its rate (status 429,
// or the codes RequestThrottled, ThrottlingException, KmsThrottled,
// KMS.ThrottlingException whatever the status), so that a later try may
// succeed.
func (e *Error) Throttled() bool {
	switch e.Type {
	case "RequestThrottled", "ThrottlingException", "Throttling", "KmsThrottled", "KMS.ThrottlingException":
		return true
	}
	return e.Status == http.StatusTooManyRequests
}

// EntryError is SQS's refusal of one entry of a SendMessageBatch call that
// it refused again when sent once more.
type EntryError struct {
	// ID is the entry's Message.ID (or its index).
	ID          string
	Code        string
	Message     string
	SenderFault bool
}

// Error returns "sqs SendMessageBatch: entry <id> refused: <code>: <message>".
func (e *EntryError) Error() string {
	return "sqs SendMessageBatch: entry " + strconv.Quote(e.ID) + " refused: " + e.Code + ": " + e.Message
}

// SendBatch sends msgs in order, at most MaxBatch per SendMessageBatch
// call; an entry SQS refuses is sent once more (with the others it refused
// in that call), and when SQS refuses it again the call ends with an
// *EntryError naming it, the messages after it not sent. Order within a
// FIFO group is the order of msgs: a call holds at most one message of a
// group (a group's next message starts the next call), so that an entry
// sent again cannot land behind a later message of its group. A call SQS
// refuses whole ends SendBatch with an *Error, the messages of the calls
// before it sent. With deduplication ids (FIFO), sending the same messages
// again within 5 minutes after a failure adds none twice.
func (c *Client) SendBatch(ctx context.Context, queueURL string, msgs []Message) error {
	for start := 0; start < len(msgs); {
		end := batchEnd(msgs, start)
		entries := make([]sendEntry, 0, end-start)
		for i := start; i < end; i++ {
			m := msgs[i]
			id := m.ID
			if id == "" {
				id = strconv.Itoa(i)
			}
			entries = append(entries, sendEntry{ID: id, MessageBody: m.Body, MessageGroupID: m.GroupID, MessageDeduplicationID: m.DeduplicationID})
		}
		failed, err := c.sendBatch(ctx, queueURL, entries)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			again := make([]sendEntry, 0, len(failed))
			for _, e := range entries {
				if _, ok := failed[e.ID]; ok {
					again = append(again, e)
				}
			}
			if failed, err = c.sendBatch(ctx, queueURL, again); err != nil {
				return err
			}
			for _, e := range again {
				if f, ok := failed[e.ID]; ok {
					return &EntryError{ID: e.ID, Code: f.Code, Message: f.Message, SenderFault: f.SenderFault}
				}
			}
		}
		start = end
	}
	return nil
}

// batchEnd returns the end of the call that starts at msgs[start]: at most
// MaxBatch messages, ending before a FIFO group's second message.
func batchEnd(msgs []Message, start int) int {
	groups := map[string]bool{}
	end := start
	for end < len(msgs) && end-start < MaxBatch {
		if g := msgs[end].GroupID; g != "" {
			if groups[g] {
				break
			}
			groups[g] = true
		}
		end++
	}
	return end
}

// sendEntry is one entry of a SendMessageBatch request.
type sendEntry struct {
	ID                     string `json:"Id"`
	MessageBody            string `json:"MessageBody"`
	MessageGroupID         string `json:"MessageGroupId,omitempty"`
	MessageDeduplicationID string `json:"MessageDeduplicationId,omitempty"`
}

// failedEntry is SQS's refusal of one entry of a batch.
type failedEntry struct {
	ID          string `json:"Id"`
	Code        string `json:"Code"`
	Message     string `json:"Message"`
	SenderFault bool   `json:"SenderFault"`
}

// sendBatch makes one SendMessageBatch call and returns the entries SQS
// refused, by id. An answer that names an entry neither sent nor refused,
// or whose MD5 of a body differs from the one sent (as the SDK client
// checks), is an error.
func (c *Client) sendBatch(ctx context.Context, queueURL string, entries []sendEntry) (map[string]failedEntry, error) {
	const action = "SendMessageBatch"
	var answer struct {
		Successful []struct {
			ID               string `json:"Id"`
			MessageID        string `json:"MessageId"`
			MD5OfMessageBody string `json:"MD5OfMessageBody"`
		} `json:"Successful"`
		Failed []failedEntry `json:"Failed"`
	}
	err := c.call(ctx, action, struct {
		QueueURL string      `json:"QueueUrl"`
		Entries  []sendEntry `json:"Entries"`
	}{queueURL, entries}, &answer)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]sendEntry, len(entries))
	for _, e := range entries {
		byID[e.ID] = e
	}
	done := make(map[string]bool, len(entries))
	for _, s := range answer.Successful {
		e, ok := byID[s.ID]
		if !ok {
			return nil, fmt.Errorf("sqs %s: the answer names entry %q, which was not sent", action, s.ID)
		}
		sum := md5.Sum([]byte(e.MessageBody))
		if want := hex.EncodeToString(sum[:]); !strings.EqualFold(s.MD5OfMessageBody, want) {
			return nil, fmt.Errorf("sqs %s: entry %q: SQS answered the MD5 %q of a body, not %q of the one sent", action, s.ID, s.MD5OfMessageBody, want)
		}
		done[s.ID] = true
	}
	failed := make(map[string]failedEntry, len(answer.Failed))
	for _, f := range answer.Failed {
		if _, ok := byID[f.ID]; !ok {
			return nil, fmt.Errorf("sqs %s: the answer names entry %q, which was not sent", action, f.ID)
		}
		failed[f.ID] = f
		done[f.ID] = true
	}
	for _, e := range entries {
		if !done[e.ID] {
			return nil, fmt.Errorf("sqs %s: the answer says nothing of entry %q", action, e.ID)
		}
	}
	return failed, nil
}

// ChangeVisibility sets the visibility timeout of a received message (its
// receiptHandle) to timeout from now, in whole seconds rounded up, from 0
// (visible again at once) to MaxVisibility. SQS refuses a timeout that
// would keep the message invisible more than 12 hours after it was
// received.
func (c *Client) ChangeVisibility(ctx context.Context, queueURL, receiptHandle string, timeout time.Duration) error {
	const action = "ChangeMessageVisibility"
	if timeout < 0 || timeout > MaxVisibility {
		return fmt.Errorf("sqs %s: timeout %s is not between 0 and %s", action, timeout, MaxVisibility)
	}
	secs := int64((timeout + time.Second - 1) / time.Second)
	return c.call(ctx, action, struct {
		QueueURL          string `json:"QueueUrl"`
		ReceiptHandle     string `json:"ReceiptHandle"`
		VisibilityTimeout int64  `json:"VisibilityTimeout"`
	}{queueURL, receiptHandle, secs}, nil)
}

// Delete deletes a received message: a consumer that finished a FIFO
// group's messages early frees the group at once, rather than when the
// whole batch returns to Lambda (which deletes what it handled again; a
// second delete of a message is not an error).
func (c *Client) Delete(ctx context.Context, queueURL, receiptHandle string) error {
	return c.call(ctx, "DeleteMessage", struct {
		QueueURL      string `json:"QueueUrl"`
		ReceiptHandle string `json:"ReceiptHandle"`
	}{queueURL, receiptHandle}, nil)
}

// call makes the JSON request action with in and decodes its 2xx answer
// into out (nil: the answer is not read). A throttled or failed (5xx) call
// is tried once more. SQS's refusal is an *Error; a cancelled or expired
// ctx ends the call with ctx's error.
func (c *Client) call(ctx context.Context, action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("sqs %s: %w", action, err)
	}
	a, err := c.Call(ctx, awsapi.Request{
		Op:          "sqs " + action,
		Method:      http.MethodPost,
		Path:        "/",
		ContentType: contentType,
		Header:      map[string]string{"X-Amz-Target": targetPrefix + action},
		Body:        body,
		Refused: func(a awsapi.Answer) error {
			return parseError(action, a)
		},
		Retry: func(a awsapi.Answer, refusal error) bool {
			var e *Error
			return a.Status >= 500 || errors.As(refusal, &e) && e.Throttled()
		},
	})
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(a.Body, out); err != nil {
		return fmt.Errorf("sqs %s: read the answer: %w", action, err)
	}
	return nil
}

// parseError reads SQS's error answer, {"__type":"com.amazonaws.sqs#Code",
// "message":".."} with the header x-amzn-query-error: "<code>;Sender": the
// part of __type after "#" becomes the Type, else the code of the header.
// A body that is not such JSON becomes the message, cut to 200 bytes.
func parseError(action string, a awsapi.Answer) *Error {
	e := &Error{Action: action, Status: a.Status}
	var doc struct {
		Type         string `json:"__type"`
		Message      string `json:"message"`
		MessageUpper string `json:"Message"`
	}
	if err := json.Unmarshal(a.Body, &doc); err == nil && (doc.Type != "" || doc.Message != "" || doc.MessageUpper != "") {
		if i := strings.LastIndexByte(doc.Type, '#'); i >= 0 {
			doc.Type = doc.Type[i+1:]
		}
		e.Type = doc.Type
		e.Message = doc.Message
		if e.Message == "" {
			e.Message = doc.MessageUpper
		}
	} else {
		e.Message = awsapi.Excerpt(a.Body)
	}
	if e.Type == "" {
		if q := a.Header.Get("X-Amzn-Query-Error"); q != "" {
			e.Type, _, _ = strings.Cut(q, ";")
		}
	}
	return e
}
