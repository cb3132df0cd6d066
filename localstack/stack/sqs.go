package stack

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// The local SQS: an in-process stand-in for Amazon SQS, not ElasticMQ
// (a Docker image, a downloaded jar or a Maven build; the stack installs
// nothing beyond its pinned npm package). Every
// AWS::SQS::Queue of the template is a queue in memory, served in SQS's
// AWS JSON 1.0 protocol on a port of 127.0.0.1 (sqsserver.go) and
// delivered to the functions' SQS events as Lambda's event source mapping
// does (sqsevents.go).
//
//   - Queues: the name is the template's QueueName, else the logical id
//     (and ".fifo" for a FIFO queue); the URL is
//     http://127.0.0.1:<port>/000000000000/<name>, the ARN
//     arn:aws:sqs:<region>:000000000000:<name>. FifoQueue,
//     ContentBasedDeduplication, DeduplicationScope, VisibilityTimeout,
//     MessageRetentionPeriod, DelaySeconds and RedrivePolicy (to a queue of
//     the template) apply; other properties (KMS, policies, the maximum
//     message size, long-poll defaults) do not.
//   - FIFO queues deliver each message group in order, one batch at a
//     time: while a message of a group is in flight (received, not
//     deleted, its visibility timeout not over) the group yields nothing;
//     when the message becomes visible again it comes first. A receive
//     takes as many messages of one group as it can, then goes on with
//     the next group (a batch may mix groups). A message sent again with
//     the same deduplication id (the SHA-256 of the body with
//     ContentBasedDeduplication; per group with DeduplicationScope
//     messageGroup) within 5 minutes is accepted with the first one's
//     MessageId and dropped. A per-message DelaySeconds is refused.
//   - Standard queues deliver in send order, which SQS does not promise,
//     and refuse group and deduplication ids.
//   - ApproximateReceiveCount counts the receives; a message received
//     maxReceiveCount times moves to the dead-letter queue at its next
//     receive, with its MessageId, body and group.
//   - Time: visibility timeouts, delays, the deduplication window and
//     retention follow the stack's queue clock (Options.Clock,
//     SetQueueClock), which a test moves forward (clock.Manual); the clock
//     is read when a queue is used and every QueuePollInterval by the
//     waiters, so a message becomes visible within that interval of the
//     clock passing its time.
//   - Not implemented: message attributes (refused), CreateQueue and the
//     other queue management calls, PurgeQueue, ReceiveRequestAttemptId
//     (ignored), signature checks (any credentials do), the Query (XML)
//     protocol.

// QueuePollInterval is how often waiters (event source pollers, long
// polls, QueueIdle) look at the queues again when nothing changed them: a
// message whose visibility timeout or delay the clock passed is seen
// within it.
const QueuePollInterval = 25 * time.Millisecond

// queueAccount is the account id of the local queues' URLs and ARNs.
const queueAccount = "000000000000"

// SQS limits the stand-in applies.
const (
	maxBodyBytes       = 256 << 10
	maxBatchEntries    = 10
	maxVisibility      = 12 * time.Hour
	maxDelay           = 15 * time.Minute
	dedupWindow        = 5 * time.Minute
	maxWaitSeconds     = 20
	maxReceiveMessages = 10
)

// SQS is the in-process SQS server.
type SQS struct {
	// Endpoint is the base URL of the server (http://127.0.0.1:PORT).
	Endpoint string

	template *sam.Template
	region   string
	clock    atomic.Pointer[clockBox]
	fallback clock.Clock // the clock SetQueueClock(nil) goes back to

	mu      sync.Mutex
	queues  map[string]*queue // by name
	logical map[string]*queue // by logical id
	changed chan struct{}     // closed (and replaced) when a queue changes
	subs    map[string][]*queueSub
	closed  bool
	wg      sync.WaitGroup // the pollers
	// env is what points the functions at the queues: the template's
	// environment variables that name a queue, set to its URL, ARN or name.
	env []string

	srv  *http.Server
	done chan struct{}
}

// clockBox holds the queue clock for the atomic pointer.
type clockBox struct{ c clock.Clock }

// queue is one queue and its messages.
type queue struct {
	logicalID, name, arn, url string
	fifo, contentDedup        bool
	groupScope                bool // DeduplicationScope messageGroup
	visibility                time.Duration
	retention                 time.Duration
	delay                     time.Duration
	dlq                       *queue
	maxReceive                int

	msgs  []*message // in the order they were sent (moved)
	byID  map[string]*message
	dedup map[string]dedupEntry
	seq   uint64
	// subscribed counts the event source subscriptions reading the queue;
	// handling the batches they received and have not finished yet.
	subscribed, handling int
}

// message is one message of a queue.
type message struct {
	id, body, md5          string
	group, dedupID, seqNum string
	sent                   time.Time // SentTimestamp
	enqueued               time.Time // the start of its retention
	visibleAt              time.Time
	received               int
	firstReceive           time.Time
	receivedAt             time.Time // the last receive
	handle                 string    // the receipt handle of the last receive
}

// dedupEntry is a FIFO message's deduplication id seen within the window.
type dedupEntry struct {
	at      time.Time
	id, seq string
}

// sqsError is SQS's refusal: the HTTP status, the error's shape name (the
// JSON protocol's __type), the Query protocol's code (the
// x-amzn-query-error header) and the message.
type sqsError struct {
	status int
	code   string
	query  string
	msg    string
	sender bool
}

func (e *sqsError) Error() string { return e.code + ": " + e.msg }

func sqsErr(code, query, format string, args ...any) *sqsError {
	return &sqsError{status: http.StatusBadRequest, code: code, query: query, msg: fmt.Sprintf(format, args...), sender: true}
}

func invalidValue(format string, args ...any) *sqsError {
	return sqsErr("InvalidParameterValue", "InvalidParameterValue", format, args...)
}

func missingParameter(name string) *sqsError {
	return sqsErr("MissingParameter", "MissingParameter", "The request must contain the parameter %s.", name)
}

var errNoQueue = sqsErr("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.")

// StartSQS serves the queues of t (nil: none) on a free port of 127.0.0.1,
// on the clock c (nil: the system clock). It fails when a queue's redrive
// policy names no queue of its kind, or when two functions set one
// environment variable to different queues (the local stack serves every
// function in one process, with one environment).
func StartSQS(t *sam.Template, c clock.Clock) (*SQS, error) {
	if t == nil {
		t = &sam.Template{}
	}
	if c == nil {
		c = clock.System{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start sqs: %w", err)
	}
	s := &SQS{
		Endpoint: "http://" + ln.Addr().String(),
		template: t, region: region(), fallback: c,
		queues: map[string]*queue{}, logical: map[string]*queue{},
		changed: make(chan struct{}), subs: map[string][]*queueSub{},
		done: make(chan struct{}),
	}
	s.clock.Store(&clockBox{c})
	if err := s.createQueues(t); err != nil {
		ln.Close()
		return nil, fmt.Errorf("start sqs: %w", err)
	}
	if s.env, err = queueEnv(t, s.logical); err != nil {
		ln.Close()
		return nil, fmt.Errorf("start sqs: %w", err)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("sqs server stopped", "err", err)
		}
	}()
	return s, nil
}

// QueueName returns the local name of a template queue: its QueueName,
// else its logical id, with ".fifo" for a FIFO queue.
func QueueName(q sam.Queue) string {
	name := q.Name
	if name == "" {
		name = q.LogicalID
		if q.Fifo {
			name += ".fifo"
		}
	}
	return name
}

func (s *SQS) createQueues(t *sam.Template) error {
	for _, tq := range t.Queues {
		name := QueueName(tq)
		if tq.Fifo != strings.HasSuffix(name, ".fifo") {
			return fmt.Errorf("queue %s: the name %q of a FIFO queue ends in .fifo, and only then", tq.LogicalID, name)
		}
		if s.queues[name] != nil {
			return fmt.Errorf("queue %s: another queue is named %q", tq.LogicalID, name)
		}
		q := &queue{
			logicalID: tq.LogicalID, name: name,
			arn:  "arn:aws:sqs:" + s.region + ":" + queueAccount + ":" + name,
			url:  s.Endpoint + "/" + queueAccount + "/" + name,
			fifo: tq.Fifo, contentDedup: tq.ContentBasedDeduplication, groupScope: tq.DeduplicationScope == "messageGroup",
			visibility: tq.VisibilityTimeout, retention: tq.MessageRetentionPeriod, delay: tq.DelaySeconds,
			maxReceive: tq.MaxReceiveCount,
			byID:       map[string]*message{}, dedup: map[string]dedupEntry{},
		}
		s.queues[name] = q
		s.logical[tq.LogicalID] = q
	}
	for _, tq := range t.Queues {
		q := s.logical[tq.LogicalID]
		switch {
		case tq.MaxReceiveCount <= 0:
		case tq.DeadLetterQueue == "":
			slog.Warn("queue's dead-letter queue is no queue of the template: no redrive locally", "queue", tq.LogicalID)
		default:
			dlq := s.logical[tq.DeadLetterQueue]
			if dlq == nil || dlq == q || dlq.fifo != q.fifo {
				return fmt.Errorf("queue %s: the dead-letter queue %s is no other queue of its kind in the template", tq.LogicalID, tq.DeadLetterQueue)
			}
			q.dlq = dlq
		}
	}
	return nil
}

// queueEnv returns the environment (KEY=value) that gives the functions
// the queues their template environment names: a !Ref to a queue is its
// URL, a !GetAtt its Arn, QueueName or QueueUrl.
func queueEnv(t *sam.Template, queues map[string]*queue) ([]string, error) {
	values := map[string]string{}
	setBy := map[string]string{}
	add := func(who string, env map[string]any) error {
		names := make([]string, 0, len(env))
		for name := range env {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			v, ok := queueValue(env[name], queues)
			if !ok {
				continue
			}
			if old, set := values[name]; set && old != v {
				return fmt.Errorf("%s sets %s to %s, %s to %s: the local stack runs every function in one process, with one environment", setBy[name], name, old, who, v)
			}
			values[name], setBy[name] = v, who
		}
		return nil
	}
	if err := add("Globals", t.GlobalEnv); err != nil {
		return nil, err
	}
	for _, f := range t.Functions {
		if err := add(f.LogicalID, f.Env); err != nil {
			return nil, err
		}
	}
	env := make([]string, 0, len(values))
	for name, v := range values {
		env = append(env, name+"="+v)
	}
	sort.Strings(env)
	return env, nil
}

// queueValue returns what a template value names of a queue: !Ref Q (its
// URL) or !GetAtt Q.Arn, Q.QueueName, Q.QueueUrl.
func queueValue(v any, queues map[string]*queue) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	if id, ok := m["Ref"].(string); ok {
		if q := queues[id]; q != nil {
			return q.url, true
		}
		return "", false
	}
	var id, attr string
	switch att := m["Fn::GetAtt"].(type) {
	case string:
		id, attr, _ = strings.Cut(att, ".")
	case []any:
		if len(att) == 2 {
			id, _ = att[0].(string)
			attr, _ = att[1].(string)
		}
	}
	q := queues[id]
	if q == nil {
		return "", false
	}
	switch attr {
	case "Arn":
		return q.arn, true
	case "QueueName":
		return q.name, true
	case "QueueUrl":
		return q.url, true
	}
	return "", false
}

// SetClock makes c the queues' clock; nil goes back to the one StartSQS
// was given. A clock.Manual that starts now continues the system clock,
// so swapping them keeps every message's times.
func (s *SQS) SetClock(c clock.Clock) {
	if c == nil {
		c = s.fallback
	}
	s.clock.Store(&clockBox{c})
	s.mu.Lock()
	s.notify()
	s.mu.Unlock()
}

func (s *SQS) now() time.Time { return s.clock.Load().c.Now() }

// QueueURL returns the URL of the template queue logicalID.
func (s *SQS) QueueURL(logicalID string) (string, bool) {
	if q := s.logical[logicalID]; q != nil {
		return q.url, true
	}
	return "", false
}

// Close stops the pollers, then the server, letting requests in flight
// finish for a moment. It is safe to call more than once.
func (s *SQS) Close() error {
	if s == nil {
		return nil
	}
	s.stopPollers()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stop sqs: %w", err)
	}
	return nil
}

// notify wakes the waiters; s.mu is held.
func (s *SQS) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// queueByURL returns the queue a QueueUrl names: any host, the path
// /000000000000/<name>.
func (s *SQS) queueByURL(u string) (*queue, *sqsError) {
	if u == "" {
		return nil, missingParameter("QueueUrl")
	}
	path := u
	if i := strings.Index(u, "://"); i >= 0 {
		path = u[i+3:]
		if j := strings.IndexByte(path, '/'); j >= 0 {
			path = path[j:]
		} else {
			path = ""
		}
	}
	account, name, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || account != queueAccount {
		return nil, errNoQueue
	}
	q := s.queues[name]
	if q == nil {
		return nil, errNoQueue
	}
	return q, nil
}

// sendInput is one message to send.
type sendInput struct {
	body, group, dedupID string
	delay                *int64 // seconds; nil: the queue's
	attributes           bool   // message attributes were given
}

// sendResult is a message sent (or deduplicated).
type sendResult struct {
	id, md5, seq string
}

// send validates and enqueues in; s.mu is held.
func (q *queue) send(now time.Time, in sendInput) (sendResult, *sqsError) {
	if in.body == "" {
		return sendResult{}, missingParameter("MessageBody")
	}
	if len(in.body) > maxBodyBytes {
		return sendResult{}, invalidValue("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", maxBodyBytes)
	}
	if !validBody(in.body) {
		return sendResult{}, sqsErr("InvalidMessageContents", "InvalidMessageContents",
			"Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF")
	}
	if in.attributes {
		return sendResult{}, invalidValue("Message attributes are not supported by the local SQS stand-in.")
	}
	delay := q.delay
	if in.delay != nil {
		d := *in.delay
		switch {
		case q.fifo && d != 0:
			return sendResult{}, invalidValue("Value %d for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.", d)
		case d < 0 || time.Duration(d)*time.Second > maxDelay:
			return sendResult{}, invalidValue("Value %d for parameter DelaySeconds is invalid. Reason: DelaySeconds must be >= 0 and <= 900.", d)
		case !q.fifo:
			delay = time.Duration(d) * time.Second
		}
	}
	key := ""
	if q.fifo {
		if in.group == "" {
			return sendResult{}, missingParameter("MessageGroupId")
		}
		if !validFifoID(in.group) {
			return sendResult{}, invalidValue("Value %s for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.", in.group)
		}
		switch {
		case in.dedupID != "":
			if !validFifoID(in.dedupID) {
				return sendResult{}, invalidValue("Value %s for parameter MessageDeduplicationId is invalid. Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.", in.dedupID)
			}
			key = in.dedupID
		case q.contentDedup:
			sum := sha256.Sum256([]byte(in.body))
			key = hexString(sum[:])
		default:
			return sendResult{}, invalidValue("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
		}
		if q.groupScope {
			key = in.group + "\x00" + key
		}
		if d, ok := q.dedup[key]; ok && now.Sub(d.at) < dedupWindow {
			return sendResult{id: d.id, md5: hexString(md5Sum([]byte(in.body))), seq: d.seq}, nil
		}
	} else {
		if in.group != "" {
			return sendResult{}, invalidValue("Value %s for parameter MessageGroupId is invalid. Reason: The request include parameter that is not valid for this queue type.", in.group)
		}
		if in.dedupID != "" {
			return sendResult{}, invalidValue("Value %s for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.", in.dedupID)
		}
	}
	m := &message{
		id: randomID(), body: in.body, md5: hexString(md5Sum([]byte(in.body))),
		group: in.group, dedupID: in.dedupID,
		sent: now, enqueued: now, visibleAt: now.Add(delay),
	}
	if q.fifo {
		m.seqNum = q.nextSeq()
		q.dedup[key] = dedupEntry{at: now, id: m.id, seq: m.seqNum}
	}
	q.add(m)
	return sendResult{id: m.id, md5: m.md5, seq: m.seqNum}, nil
}

func (q *queue) nextSeq() string {
	q.seq++
	// Twenty digits, as SQS's sequence numbers have.
	return strconv.FormatUint(10_000_000_000_000_000_000+q.seq, 10)
}

func (q *queue) add(m *message) {
	q.msgs = append(q.msgs, m)
	q.byID[m.id] = m
}

// remove drops the messages drop names from the queue.
func (q *queue) remove(drop map[*message]bool) {
	if len(drop) == 0 {
		return
	}
	kept := q.msgs[:0]
	for _, m := range q.msgs {
		if drop[m] {
			delete(q.byID, m.id)
			continue
		}
		kept = append(kept, m)
	}
	clear(q.msgs[len(kept):])
	q.msgs = kept
}

// sweep drops the messages older than the retention period and the
// deduplication ids older than the window; it reports whether it dropped
// a message.
func (q *queue) sweep(now time.Time) bool {
	for k, d := range q.dedup {
		if now.Sub(d.at) >= dedupWindow {
			delete(q.dedup, k)
		}
	}
	var drop map[*message]bool
	for _, m := range q.msgs {
		if now.Sub(m.enqueued) >= q.retention {
			if drop == nil {
				drop = map[*message]bool{}
			}
			drop[m] = true
		}
	}
	q.remove(drop)
	return len(drop) > 0
}

// delivery is a received message as ReceiveMessage answers it and
// Lambda's event carries it.
type delivery struct {
	id, handle, body, md5 string
	attributes            map[string]string
}

// receive takes up to max messages visible at now, each invisible for
// visibility from now on, moving to the dead-letter queue those received
// maxReceiveCount times already; s.mu is held. A FIFO queue yields the
// messages of the groups with nothing in flight, a group's in order, as
// many of one group as it can before the next.
func (q *queue) receive(now time.Time, max int, visibility time.Duration) []delivery {
	q.sweep(now)
	var picked []*message
	moved := map[*message]bool{}
	take := func(m *message) bool { // false: m went to the dead-letter queue
		if q.dlq != nil && q.maxReceive > 0 && m.received >= q.maxReceive {
			q.redrive(now, m)
			moved[m] = true
			return false
		}
		picked = append(picked, m)
		return true
	}
	if q.fifo {
		var order []string
		groups := map[string][]*message{}
		blocked := q.inFlightGroups(now)
		for _, m := range q.msgs {
			if blocked[m.group] {
				continue
			}
			if _, seen := groups[m.group]; !seen {
				order = append(order, m.group)
			}
			groups[m.group] = append(groups[m.group], m)
		}
		for _, g := range order {
			for _, m := range groups[g] {
				if len(picked) == max || m.visibleAt.After(now) {
					break
				}
				take(m)
			}
			if len(picked) == max {
				break
			}
		}
	} else {
		for _, m := range q.msgs {
			if len(picked) == max {
				break
			}
			if !m.visibleAt.After(now) {
				take(m)
			}
		}
	}
	q.remove(moved)
	out := make([]delivery, 0, len(picked))
	for _, m := range picked {
		m.received++
		if m.received == 1 {
			m.firstReceive = now
		}
		m.receivedAt = now
		m.visibleAt = now.Add(visibility)
		m.handle = newHandle(q.name, m)
		out = append(out, q.delivery(m))
	}
	return out
}

// redrive moves m to the dead-letter queue, keeping its id, body, group,
// deduplication id and receive count; a FIFO dead-letter queue gives it a
// sequence number of its own and starts its retention again, as SQS does.
func (q *queue) redrive(now time.Time, m *message) {
	moved := *m
	moved.visibleAt, moved.handle = now, ""
	if q.dlq.fifo {
		moved.seqNum = q.dlq.nextSeq()
		moved.enqueued = now
	}
	q.dlq.add(&moved)
	slog.Debug("sqs message moved to the dead-letter queue", "queue", q.name, "dlq", q.dlq.name, "messageId", m.id, "receives", m.received)
}

func (q *queue) delivery(m *message) delivery {
	attrs := map[string]string{
		"SenderId":                         queueAccount,
		"SentTimestamp":                    strconv.FormatInt(m.sent.UnixMilli(), 10),
		"ApproximateReceiveCount":          strconv.Itoa(m.received),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceive.UnixMilli(), 10),
	}
	if q.fifo {
		attrs["MessageGroupId"] = m.group
		attrs["MessageDeduplicationId"] = m.dedupID
		if m.dedupID == "" {
			sum := sha256.Sum256([]byte(m.body))
			attrs["MessageDeduplicationId"] = hexString(sum[:])
		}
		attrs["SequenceNumber"] = m.seqNum
	}
	return delivery{id: m.id, handle: m.handle, body: m.body, md5: m.md5, attributes: attrs}
}

// inFlightGroups returns the groups of a FIFO queue with a message in
// flight at now: they yield nothing.
func (q *queue) inFlightGroups(now time.Time) map[string]bool {
	blocked := map[string]bool{}
	for _, m := range q.msgs {
		if m.received > 0 && m.visibleAt.After(now) {
			blocked[m.group] = true
		}
	}
	return blocked
}

// receivable reports whether a receive at now would yield a message.
func (q *queue) receivable(now time.Time) bool {
	var blocked map[string]bool
	heads := map[string]bool{}
	if q.fifo {
		blocked = q.inFlightGroups(now)
	}
	for _, m := range q.msgs {
		if q.fifo {
			if blocked[m.group] || heads[m.group] {
				continue
			}
			heads[m.group] = true
		}
		if !m.visibleAt.After(now) {
			return true
		}
	}
	return false
}

// newHandle returns a receipt handle naming the queue, the message and the
// receive.
func newHandle(queueName string, m *message) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	raw := queueName + "\n" + m.id + "\n" + strconv.Itoa(m.received) + "\n" + base64.RawStdEncoding.EncodeToString(b[:])
	return base64.StdEncoding.EncodeToString([]byte(raw))
}

// find returns the message a receipt handle names (nil when it is gone)
// and whether the handle is the one of its last receive.
func (q *queue) find(handle string) (*message, bool, *sqsError) {
	if handle == "" {
		return nil, false, missingParameter("ReceiptHandle")
	}
	raw, err := base64.StdEncoding.DecodeString(handle)
	parts := strings.Split(string(raw), "\n")
	if err != nil || len(parts) != 4 || parts[0] != q.name {
		return nil, false, sqsErr("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", "The input receipt handle %q is not a valid receipt handle.", handle)
	}
	m := q.byID[parts[1]]
	if m == nil {
		return nil, false, nil
	}
	return m, m.handle == handle, nil
}

// deleteMessage deletes the message a receipt handle names; s.mu is held.
// A message already gone is deleted; a FIFO queue refuses the handle of
// an earlier receive, a standard queue deletes the message with it.
func (q *queue) deleteMessage(handle string) *sqsError {
	m, current, e := q.find(handle)
	if e != nil || m == nil {
		return e
	}
	if !current && q.fifo {
		return invalidValue("Value %s for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", handle)
	}
	q.remove(map[*message]bool{m: true})
	return nil
}

// changeVisibility makes the message a receipt handle names visible secs
// seconds from now; s.mu is held.
func (q *queue) changeVisibility(now time.Time, handle string, secs int64) *sqsError {
	if secs < 0 || time.Duration(secs)*time.Second > maxVisibility {
		return invalidValue("Value %d for parameter VisibilityTimeout is invalid. Reason: Must be between 0 and 43200, if provided.", secs)
	}
	m, current, e := q.find(handle)
	if e != nil {
		return e
	}
	if m == nil || !current {
		return invalidValue("Value %s for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.", handle)
	}
	if !m.visibleAt.After(now) {
		return sqsErr("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", "The message referred to is not in flight.")
	}
	// Counted in whole seconds, as SQS counts the timeouts: a handler
	// that asks for 12 hours a moment after the receive gets them.
	until := now.Add(time.Duration(secs) * time.Second)
	if until.Sub(m.receivedAt).Truncate(time.Second) > maxVisibility {
		return invalidValue("Value %d for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [43200 seconds]", secs)
	}
	m.visibleAt = until
	return nil
}

// counts returns the messages visible, in flight and delayed at now.
func (q *queue) counts(now time.Time) (visible, inFlight, delayed int) {
	for _, m := range q.msgs {
		switch {
		case !m.visibleAt.After(now):
			visible++
		case m.received > 0:
			inFlight++
		default:
			delayed++
		}
	}
	return visible, inFlight, delayed
}

// validBody reports whether s holds only the characters SQS takes.
func validBody(s string) bool {
	for _, r := range s {
		switch {
		case r == 0x9 || r == 0xA || r == 0xD:
		case r >= 0x20 && r <= 0xD7FF:
		case r >= 0xE000 && r <= 0xFFFD:
		case r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

// validFifoID reports whether s is a valid group or deduplication id: 1 to
// 128 letters, digits and punctuation.
func validFifoID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7E {
			return false
		}
	}
	return true
}
