package stack

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The local SQS's HTTP side: SQS's AWS JSON 1.0 protocol (POST, the action
// in X-Amz-Target: AmazonSQS.<Action>, a JSON body), for SendMessage,
// SendMessageBatch, ReceiveMessage (with long polling), DeleteMessage,
// DeleteMessageBatch, ChangeMessageVisibility, GetQueueUrl and
// GetQueueAttributes. A refusal is SQS's: status 400, the body
// {"__type":"com.amazonaws.sqs#<Code>","message":"..."} and the header
// x-amzn-query-error: <Query code>;Sender.

// maxRequestBytes bounds a request body (ten messages of 256 KiB and their
// JSON).
const maxRequestBytes = 4 << 20

// batchEntryID is what SQS takes as a batch entry id.
var batchEntryID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func (s *SQS) serveHTTP(w http.ResponseWriter, r *http.Request) {
	action, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
	if r.Method != http.MethodPost || !ok {
		writeSQSError(w, sqsErr("UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation",
			"The local SQS stand-in speaks SQS's JSON protocol only: POST with X-Amz-Target: AmazonSQS.<Action>."))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		writeSQSError(w, sqsErr("SerializationException", "SerializationException", "read the request: %v", err))
		return
	}
	if len(body) > maxRequestBytes {
		writeSQSError(w, sqsErr("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", "Batch requested message too long."))
		return
	}
	decode := func(v any) *sqsError {
		if len(body) == 0 {
			body = []byte("{}")
		}
		if err := json.Unmarshal(body, v); err != nil {
			return sqsErr("SerializationException", "SerializationException", "%v", err)
		}
		return nil
	}
	var out any
	var e *sqsError
	switch action {
	case "SendMessage":
		out, e = s.sendMessage(decode)
	case "SendMessageBatch":
		out, e = s.sendMessageBatch(decode)
	case "ReceiveMessage":
		out, e = s.receiveMessage(r, decode)
	case "DeleteMessage":
		out, e = s.deleteMessage(decode)
	case "DeleteMessageBatch":
		out, e = s.deleteMessageBatch(decode)
	case "ChangeMessageVisibility":
		out, e = s.changeMessageVisibility(decode)
	case "GetQueueUrl":
		out, e = s.getQueueURL(decode)
	case "GetQueueAttributes":
		out, e = s.getQueueAttributes(decode)
	default:
		e = sqsErr("UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", "The local SQS stand-in does not serve %s.", action)
	}
	if e != nil {
		writeSQSError(w, e)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeSQSError(w, &sqsError{status: http.StatusInternalServerError, code: "InternalError", query: "InternalError", msg: "encode the answer"})
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-RequestId", randomID())
	_, _ = w.Write(b)
}

func writeSQSError(w http.ResponseWriter, e *sqsError) {
	fault := "Sender"
	if !e.sender {
		fault = "Receiver"
	}
	b, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.sqs#" + e.code, "message": e.msg})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-RequestId", randomID())
	w.Header().Set("x-amzn-query-error", e.query+";"+fault)
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// messageFields are a message's fields in SendMessage and its batch.
type messageFields struct {
	MessageBody             string                     `json:"MessageBody"`
	DelaySeconds            *int64                     `json:"DelaySeconds"`
	MessageGroupID          string                     `json:"MessageGroupId"`
	MessageDeduplicationID  string                     `json:"MessageDeduplicationId"`
	MessageAttributes       map[string]json.RawMessage `json:"MessageAttributes"`
	MessageSystemAttributes map[string]json.RawMessage `json:"MessageSystemAttributes"`
}

func (f messageFields) input() sendInput {
	return sendInput{
		body: f.MessageBody, group: f.MessageGroupID, dedupID: f.MessageDeduplicationID, delay: f.DelaySeconds,
		attributes: len(f.MessageAttributes) > 0 || len(f.MessageSystemAttributes) > 0,
	}
}

type sendResultJSON struct {
	ID               string `json:"Id,omitempty"`
	MessageID        string `json:"MessageId"`
	MD5OfMessageBody string `json:"MD5OfMessageBody"`
	SequenceNumber   string `json:"SequenceNumber,omitempty"`
}

type failedJSON struct {
	ID          string `json:"Id"`
	SenderFault bool   `json:"SenderFault"`
	Code        string `json:"Code"`
	Message     string `json:"Message"`
}

func failed(id string, e *sqsError) failedJSON {
	return failedJSON{ID: id, SenderFault: e.sender, Code: e.code, Message: e.msg}
}

func (s *SQS) sendMessage(decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueURL string `json:"QueueUrl"`
		messageFields
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.queueByURL(in.QueueURL)
	if e != nil {
		return nil, e
	}
	now := s.now()
	q.sweep(now)
	res, e := q.send(now, in.input())
	if e != nil {
		return nil, e
	}
	s.notify()
	return sendResultJSON{MessageID: res.id, MD5OfMessageBody: res.md5, SequenceNumber: res.seq}, nil
}

// checkBatch applies SQS's rules on a batch's entry ids.
func checkBatch(ids []string) *sqsError {
	if len(ids) == 0 {
		return sqsErr("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "There should be at least one entry in the request.")
	}
	if len(ids) > maxBatchEntries {
		return sqsErr("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
			"Maximum number of entries per request are %d. You have sent %d.", maxBatchEntries, len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !batchEntryID.MatchString(id) {
			return sqsErr("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId",
				"A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if seen[id] {
			return sqsErr("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Id %s repeated.", id)
		}
		seen[id] = true
	}
	return nil
}

func (s *SQS) sendMessageBatch(decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueURL string `json:"QueueUrl"`
		Entries  []struct {
			ID string `json:"Id"`
			messageFields
		} `json:"Entries"`
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	ids := make([]string, len(in.Entries))
	size := 0
	for i, en := range in.Entries {
		ids[i] = en.ID
		size += len(en.MessageBody)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.queueByURL(in.QueueURL)
	if e != nil {
		return nil, e
	}
	if e := checkBatch(ids); e != nil {
		return nil, e
	}
	if size > maxBodyBytes {
		return nil, sqsErr("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", "Batch requested message too long.")
	}
	now := s.now()
	q.sweep(now)
	out := struct {
		Successful []sendResultJSON `json:"Successful"`
		Failed     []failedJSON     `json:"Failed"`
	}{Successful: []sendResultJSON{}, Failed: []failedJSON{}}
	for _, en := range in.Entries {
		res, e := q.send(now, en.input())
		if e != nil {
			out.Failed = append(out.Failed, failed(en.ID, e))
			continue
		}
		out.Successful = append(out.Successful, sendResultJSON{ID: en.ID, MessageID: res.id, MD5OfMessageBody: res.md5, SequenceNumber: res.seq})
	}
	s.notify()
	return out, nil
}

type receivedJSON struct {
	MessageID     string            `json:"MessageId"`
	ReceiptHandle string            `json:"ReceiptHandle"`
	MD5OfBody     string            `json:"MD5OfBody"`
	Body          string            `json:"Body"`
	Attributes    map[string]string `json:"Attributes,omitempty"`
}

func (s *SQS) receiveMessage(r *http.Request, decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueURL                    string   `json:"QueueUrl"`
		MaxNumberOfMessages         *int64   `json:"MaxNumberOfMessages"`
		VisibilityTimeout           *int64   `json:"VisibilityTimeout"`
		WaitTimeSeconds             *int64   `json:"WaitTimeSeconds"`
		AttributeNames              []string `json:"AttributeNames"`
		MessageSystemAttributeNames []string `json:"MessageSystemAttributeNames"`
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	max, wait := int64(1), int64(0)
	if in.MaxNumberOfMessages != nil {
		max = *in.MaxNumberOfMessages
		if max < 1 || max > maxReceiveMessages {
			return nil, invalidValue("Value %d for parameter MaxNumberOfMessages is invalid. Reason: Must be between 1 and 10, if provided.", max)
		}
	}
	if in.WaitTimeSeconds != nil {
		wait = *in.WaitTimeSeconds
		if wait < 0 || wait > maxWaitSeconds {
			return nil, invalidValue("Value %d for parameter WaitTimeSeconds is invalid. Reason: Must be >= 0 and <= 20, if provided.", wait)
		}
	}
	if in.VisibilityTimeout != nil {
		if v := *in.VisibilityTimeout; v < 0 || time.Duration(v)*time.Second > maxVisibility {
			return nil, invalidValue("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.", v)
		}
	}
	wanted := map[string]bool{}
	for _, n := range append(in.AttributeNames, in.MessageSystemAttributeNames...) {
		wanted[n] = true
	}
	deadline := time.Now().Add(time.Duration(wait) * time.Second)
	for {
		s.mu.Lock()
		q, e := s.queueByURL(in.QueueURL)
		if e != nil {
			s.mu.Unlock()
			return nil, e
		}
		visibility := q.visibility
		if in.VisibilityTimeout != nil {
			visibility = time.Duration(*in.VisibilityTimeout) * time.Second
		}
		got := q.receive(s.now(), int(max), visibility)
		changed, closed := s.changed, s.closed
		if len(got) > 0 {
			s.notify()
		}
		s.mu.Unlock()
		if len(got) > 0 {
			msgs := make([]receivedJSON, 0, len(got))
			for _, d := range got {
				m := receivedJSON{MessageID: d.id, ReceiptHandle: d.handle, MD5OfBody: d.md5, Body: d.body}
				for k, v := range d.attributes {
					if wanted["All"] || wanted[k] {
						if m.Attributes == nil {
							m.Attributes = map[string]string{}
						}
						m.Attributes[k] = v
					}
				}
				msgs = append(msgs, m)
			}
			return struct {
				Messages []receivedJSON `json:"Messages"`
			}{msgs}, nil
		}
		left := time.Until(deadline)
		if left <= 0 || closed {
			return struct{}{}, nil
		}
		t := time.NewTimer(min(left, QueuePollInterval))
		select {
		case <-r.Context().Done():
			t.Stop()
			return struct{}{}, nil
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

func (s *SQS) deleteMessage(decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueURL      string `json:"QueueUrl"`
		ReceiptHandle string `json:"ReceiptHandle"`
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.queueByURL(in.QueueURL)
	if e != nil {
		return nil, e
	}
	if e := q.deleteMessage(in.ReceiptHandle); e != nil {
		return nil, e
	}
	s.notify()
	return struct{}{}, nil
}

func (s *SQS) deleteMessageBatch(decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueURL string `json:"QueueUrl"`
		Entries  []struct {
			ID            string `json:"Id"`
			ReceiptHandle string `json:"ReceiptHandle"`
		} `json:"Entries"`
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	ids := make([]string, len(in.Entries))
	for i, en := range in.Entries {
		ids[i] = en.ID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.queueByURL(in.QueueURL)
	if e != nil {
		return nil, e
	}
	if e := checkBatch(ids); e != nil {
		return nil, e
	}
	type okJSON struct {
		ID string `json:"Id"`
	}
	out := struct {
		Successful []okJSON     `json:"Successful"`
		Failed     []failedJSON `json:"Failed"`
	}{Successful: []okJSON{}, Failed: []failedJSON{}}
	for _, en := range in.Entries {
		if e := q.deleteMessage(en.ReceiptHandle); e != nil {
			out.Failed = append(out.Failed, failed(en.ID, e))
			continue
		}
		out.Successful = append(out.Successful, okJSON{ID: en.ID})
	}
	s.notify()
	return out, nil
}

func (s *SQS) changeMessageVisibility(decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueURL          string `json:"QueueUrl"`
		ReceiptHandle     string `json:"ReceiptHandle"`
		VisibilityTimeout *int64 `json:"VisibilityTimeout"`
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	if in.VisibilityTimeout == nil {
		return nil, missingParameter("VisibilityTimeout")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.queueByURL(in.QueueURL)
	if e != nil {
		return nil, e
	}
	if e := q.changeVisibility(s.now(), in.ReceiptHandle, *in.VisibilityTimeout); e != nil {
		return nil, e
	}
	s.notify()
	return struct{}{}, nil
}

func (s *SQS) getQueueURL(decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueName              string `json:"QueueName"`
		QueueOwnerAWSAccountID string `json:"QueueOwnerAWSAccountId"`
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	if in.QueueName == "" {
		return nil, missingParameter("QueueName")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queues[in.QueueName]
	if q == nil || in.QueueOwnerAWSAccountID != "" && in.QueueOwnerAWSAccountID != queueAccount {
		return nil, errNoQueue
	}
	return struct {
		QueueURL string `json:"QueueUrl"`
	}{q.url}, nil
}

func (s *SQS) getQueueAttributes(decode func(any) *sqsError) (any, *sqsError) {
	var in struct {
		QueueURL       string   `json:"QueueUrl"`
		AttributeNames []string `json:"AttributeNames"`
	}
	if e := decode(&in); e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	q, e := s.queueByURL(in.QueueURL)
	if e != nil {
		return nil, e
	}
	now := s.now()
	q.sweep(now)
	visible, inFlight, delayed := q.counts(now)
	secs := func(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }
	all := map[string]string{
		"ApproximateNumberOfMessages":           strconv.Itoa(visible),
		"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(inFlight),
		"ApproximateNumberOfMessagesDelayed":    strconv.Itoa(delayed),
		"QueueArn":                              q.arn,
		"VisibilityTimeout":                     secs(q.visibility),
		"MessageRetentionPeriod":                secs(q.retention),
		"DelaySeconds":                          secs(q.delay),
		"MaximumMessageSize":                    strconv.Itoa(maxBodyBytes),
	}
	if q.fifo {
		all["FifoQueue"] = "true"
		all["ContentBasedDeduplication"] = strconv.FormatBool(q.contentDedup)
		all["DeduplicationScope"] = "queue"
		if q.groupScope {
			all["DeduplicationScope"] = "messageGroup"
		}
	}
	if q.dlq != nil {
		b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": q.dlq.arn, "maxReceiveCount": q.maxReceive})
		all["RedrivePolicy"] = string(b)
	}
	out := map[string]string{}
	for _, n := range in.AttributeNames {
		if n == "All" {
			out = all
			break
		}
		v, ok := all[n]
		if !ok {
			if _, known := knownQueueAttributes[n]; !known {
				return nil, sqsErr("InvalidAttributeName", "InvalidAttributeName", "Unknown Attribute %s.", n)
			}
			continue
		}
		out[n] = v
	}
	if len(out) == 0 {
		return struct{}{}, nil
	}
	return struct {
		Attributes map[string]string `json:"Attributes"`
	}{out}, nil
}

// knownQueueAttributes are SQS's queue attributes the stand-in answers
// nothing for (the queue has none of them, or does not keep them).
var knownQueueAttributes = map[string]struct{}{
	"FifoQueue": {}, "ContentBasedDeduplication": {}, "DeduplicationScope": {}, "RedrivePolicy": {},
	"Policy": {}, "CreatedTimestamp": {}, "LastModifiedTimestamp": {}, "ReceiveMessageWaitTimeSeconds": {},
	"KmsMasterKeyId": {}, "KmsDataKeyReusePeriodSeconds": {}, "SqsManagedSseEnabled": {},
	"FifoThroughputLimit": {}, "RedriveAllowPolicy": {},
}
