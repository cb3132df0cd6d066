package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/loyalty-platform/platform/localstack/stack"
	"github.com/loyalty-platform/platform/shared/aws/awsapi"
	"github.com/loyalty-platform/platform/shared/aws/sqsapi"
	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/stdwebhook"
)

// The webhooks section's references, with the same number of events of
// the same size as the burst, at the same concurrency, to the same
// receiver:
//
//   - raw POSTs: each event signed and POSTed straight to the receiver;
//   - raw SQS: each event sent to a FIFO queue of the local stack's SQS
//     stand-in (SendMessageBatch of one message, group = the user, as the
//     fan-out sends), received by as many pollers (ReceiveMessage of up
//     to 10), POSTed as the sender does (the groups of a batch at once,
//     a group's messages in order) and deleted (DeleteMessageBatch). The
//     stand-in serves only the template's queues: the events go through
//     the delivery queue's dead-letter queue, which nothing reads
//     locally.

// scratchQueue is the template queue the raw SQS reference uses.
const scratchQueue = "WebhookDeadLetterQueue"

// rawRun is what a reference's receiver sink got.
type rawRun struct {
	Start time.Time
	Stats hookStats
}

// rawPosts POSTs n signed events of size bytes to sink s from workers
// workers, each on users of its own, and returns what s received.
func rawPosts(ctx context.Context, e *env, s *sink, users []string, n, workers, size int) (rawRun, error) {
	secret, err := stdwebhook.NewSecret()
	if err != nil {
		return rawRun{}, err
	}
	s.setSecret(secret)
	evs := newRawEvents(e.tenant, users, size)
	start := time.Now()
	r := load{workers: workers, requests: n, seq: []string{"POST"}, users: len(users), do: func(ctx context.Context, _ string, u int) error {
		id, body, err := evs.next(u)
		if err != nil {
			return err
		}
		return post(ctx, e.http, s.url, secret, id, body)
	}}.run(ctx)
	if r.Errors > 0 {
		return rawRun{}, fmt.Errorf("raw POSTs: %v", r.FirstErrors[0])
	}
	return e.rawResult(ctx, s, start, r.Requests)
}

// rawResult waits until s received n events (or none came for
// webhookStall) and returns them.
func (e *env) rawResult(ctx context.Context, s *sink, start time.Time, n int) (rawRun, error) {
	got := func() int { return s.received(rawType) }
	waitFor(ctx, time.Now().Add(webhookWait), webhookStall, got, func() bool { return got() >= n })
	hooks, refused, first := s.got(nil)
	if refused > 0 {
		return rawRun{}, fmt.Errorf("the receiver refused %d of the reference's requests: %v", refused, first)
	}
	st := analyse(hooks, true)
	if st.Events != n {
		return rawRun{}, fmt.Errorf("the receiver got %d of the reference's %d events", st.Events, n)
	}
	return rawRun{Start: start, Stats: st}, nil
}

// post sends one signed event to url.
func post(ctx context.Context, client *http.Client, url, secret, id string, body []byte) error {
	h, err := stdwebhook.Headers([]string{secret}, id, time.Now(), body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %w %d", url, errStatus, resp.StatusCode)
	}
	return nil
}

// sqsQueue calls the stand-in's queue url for the raw SQS reference.
type sqsQueue struct {
	client *sqsapi.Client
	url    string
}

// call makes SQS call action with in and decodes the answer into out.
func (q *sqsQueue) call(ctx context.Context, action string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	a, err := q.client.Call(ctx, awsapi.Request{Op: "sqs " + action, Method: http.MethodPost, Path: "/",
		ContentType: "application/x-amz-json-1.0", Header: map[string]string{"X-Amz-Target": "AmazonSQS." + action}, Body: body})
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

// openScratchQueue returns the template's scratchQueue on the stand-in.
func (e *env) openScratchQueue(ctx context.Context, root string) (*sqsQueue, error) {
	if e.sqsEndpoint == "" {
		return nil, errors.New("raw SQS: the local stack names no SQS endpoint")
	}
	t, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, err
	}
	tq, ok := t.Queue(scratchQueue)
	if !ok {
		return nil, fmt.Errorf("raw SQS: the template has no queue %s", scratchQueue)
	}
	cfg := aws.Config{Region: stack.DefaultRegion, Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), HTTPClient: e.http}
	q := &sqsQueue{client: &sqsapi.Client{Caller: awsapi.New(cfg, "sqs", e.sqsEndpoint, "sqs")}}
	var out struct {
		QueueURL string `json:"QueueUrl"`
	}
	if err := q.call(ctx, "GetQueueUrl", map[string]string{"QueueName": stack.QueueName(tq)}, &out); err != nil {
		return nil, err
	}
	q.url = out.QueueURL
	return q, nil
}

// rawSQS sends n events of size bytes through the scratch queue from
// workers workers, each on users of its own, receives them with as many
// pollers that POST them to sink s, and returns what s received.
func rawSQS(ctx context.Context, e *env, root string, s *sink, users []string, n, workers, size int) (rawRun, error) {
	q, err := e.openScratchQueue(ctx, root)
	if err != nil {
		return rawRun{}, err
	}
	secret, err := stdwebhook.NewSecret()
	if err != nil {
		return rawRun{}, err
	}
	s.setSecret(secret)
	pctx, stop := context.WithCancel(ctx)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := q.poll(pctx, e.http, s.url, secret); err != nil && pctx.Err() == nil {
				mu.Lock()
				first = cmpErr(first, err)
				mu.Unlock()
				stop()
			}
		}()
	}
	evs := newRawEvents(e.tenant, users, size)
	start := time.Now()
	r := load{workers: workers, requests: n, seq: []string{"SendMessageBatch"}, users: len(users), do: func(ctx context.Context, _ string, u int) error {
		id, body, err := evs.next(u)
		if err != nil {
			return err
		}
		return q.client.SendBatch(ctx, q.url, []sqsapi.Message{{Body: string(body), GroupID: "raw:" + users[u], DeduplicationID: id}})
	}}.run(pctx)
	var res rawRun
	if r.Errors == 0 {
		res, err = e.rawResult(pctx, s, start, r.Requests)
	}
	stop()
	wg.Wait()
	switch {
	case first != nil:
		return rawRun{}, fmt.Errorf("raw SQS: %w", first)
	case r.Errors > 0:
		return rawRun{}, fmt.Errorf("raw SQS: %v", r.FirstErrors[0])
	case err != nil:
		return rawRun{}, fmt.Errorf("raw SQS: %w", err)
	}
	return res, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// poll receives batches of the queue until ctx ends, POSTs each batch's
// messages to url (its groups at once, a group's messages in order) and
// deletes them.
func (q *sqsQueue) poll(ctx context.Context, client *http.Client, url, secret string) error {
	for ctx.Err() == nil {
		var got struct {
			Messages []struct {
				ReceiptHandle string `json:"ReceiptHandle"`
				Body          string `json:"Body"`
			} `json:"Messages"`
		}
		if err := q.call(ctx, "ReceiveMessage", map[string]any{"QueueUrl": q.url, "MaxNumberOfMessages": 10, "WaitTimeSeconds": 1}, &got); err != nil {
			return err
		}
		if len(got.Messages) == 0 {
			continue
		}
		var order []string
		groups := map[string][]int{}
		ids := make([]string, len(got.Messages))
		for i, m := range got.Messages {
			var ev event
			if err := json.Unmarshal([]byte(m.Body), &ev); err != nil {
				return fmt.Errorf("a message that is not an event: %w", err)
			}
			ids[i] = ev.ID
			if _, ok := groups[ev.UserID]; !ok {
				order = append(order, ev.UserID)
			}
			groups[ev.UserID] = append(groups[ev.UserID], i)
		}
		errs := make([]error, len(order))
		var wg sync.WaitGroup
		for g, user := range order {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, i := range groups[user] {
					if err := post(ctx, client, url, secret, ids[i], []byte(got.Messages[i].Body)); err != nil {
						errs[g] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		type entry struct {
			ID            string `json:"Id"`
			ReceiptHandle string `json:"ReceiptHandle"`
		}
		entries := make([]entry, len(got.Messages))
		for i, m := range got.Messages {
			entries[i] = entry{ID: strconv.Itoa(i), ReceiptHandle: m.ReceiptHandle}
		}
		var del struct {
			Failed []json.RawMessage `json:"Failed"`
		}
		if err := q.call(ctx, "DeleteMessageBatch", map[string]any{"QueueUrl": q.url, "Entries": entries}, &del); err != nil {
			return err
		}
		if len(del.Failed) > 0 {
			return fmt.Errorf("sqs DeleteMessageBatch: %d of %d entries failed: %s", len(del.Failed), len(entries), del.Failed[0])
		}
	}
	return nil
}
