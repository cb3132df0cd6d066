package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/idempotency"
	"github.com/loyalty-platform/platform/shared/platform/web"
	ts "github.com/loyalty-platform/platform/shared/testkit"
	"github.com/loyalty-platform/platform/shared/wire/loyalty"
	"github.com/loyalty-platform/platform/shared/wire/parts/files"
)

// faultDB is the DynamoDB of a function under fault injection: it fails
// the writes that store a key's response or release it (DynamoDB stalled,
// the function timed out or crashed before they were made), can hold a
// transaction of a key's request before it is sent (the function is
// paused while a retry takes the key over), and can lose the answer of a
// transaction that committed (a timeout after DynamoDB applied it).
type faultDB struct {
	ddb.API
	// failRecordWrites fails the UpdateItem and DeleteItem of key records
	// (the response stored, the key released).
	failRecordWrites atomic.Bool
	// hold, when set, is closed by the test to let the next fenced
	// transaction go; held is told when it waits.
	hold chan struct{}
	held chan struct{}
	// loseTxAnswer makes the next fenced transaction commit but answer an
	// error.
	loseTxAnswer atomic.Bool
}

var errInjected = errors.New("injected: DynamoDB did not answer")

func isRecord(key map[string]types.AttributeValue) bool {
	sk, ok := key["sk"].(*types.AttributeValueMemberS)
	return ok && sk.Value == "IDEM"
}

func fenced(in *dynamodb.TransactWriteItemsInput) bool {
	for _, it := range in.TransactItems {
		if it.Update != nil && isRecord(it.Update.Key) {
			return true
		}
	}
	return false
}

func (f *faultDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if f.failRecordWrites.Load() && isRecord(in.Key) {
		return nil, errInjected
	}
	return f.API.UpdateItem(ctx, in, o...)
}

func (f *faultDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if f.failRecordWrites.Load() && isRecord(in.Key) {
		return nil, errInjected
	}
	return f.API.DeleteItem(ctx, in, o...)
}

func (f *faultDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if !fenced(in) {
		return f.API.TransactWriteItems(ctx, in, o...)
	}
	if f.hold != nil {
		hold := f.hold
		f.hold = nil
		f.held <- struct{}{}
		<-hold
	}
	out, err := f.API.TransactWriteItems(ctx, in, o...)
	if err == nil && f.loseTxAnswer.CompareAndSwap(true, false) {
		return nil, errInjected
	}
	return out, err
}

// faultyLoyalty serves the loyalty function (its routes and their
// domains, with the idempotency wrapper) on a faultDB over the harness's
// DynamoDB, as the function's wiring builds it.
func faultyLoyalty(t *testing.T, h *ts.Harness) (*faultDB, *httptest.Server) {
	t.Helper()
	f := &faultDB{API: h.Deps.DB, held: make(chan struct{}, 1)}
	base := *h.Deps.Base
	base.DB = f
	fn := loyalty.New(&base, files.Jobs(&base, files.Of(h.Deps.S3)))
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	srv := httptest.NewServer(web.Handler(base.Idempotency().Decorate(fn.Routes()), base.Auth(), log))
	t.Cleanup(srv.Close)
	return f, srv
}

// post sends a request to srv as the tenant's service key.
func post(t *testing.T, h *ts.Harness, srv *httptest.Server, path, key string, body string) answer {
	t.Helper()
	req, err := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(h.Admin()); i += 2 {
		req.Header.Set(h.Admin()[i], h.Admin()[i+1])
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(idempotency.Header, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// grantBody is a grant of one point of perk to uid.
func grantBody(uid string) string { return fmt.Sprintf(`{"userId":%q,"points":1}`, uid) }

// TestFenceResponseLostGrantsOnce is the fault injection that found the
// defect, made deterministic: 8 workers grant with fresh keys while every
// write of a key's response (or release) fails, so each key stays
// IN_FLIGHT; every request is retried with its key once InFlightTimeout
// has passed. Each key's grant is applied exactly once: a retry of a
// request whose grant committed is 409
// IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE, never a second grant.
func TestFenceResponseLostGrantsOnce(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := pointsPerk(t, h)
	users := []string{h.AdminUser(t, "Fence", "One"), h.AdminUser(t, "Fence", "Two")}
	f, srv := faultyLoyalty(t, h)
	f.failRecordWrites.Store(true)

	const workers, perWorker = 8, 2
	type sent struct {
		key, user string
		first     answer
	}
	results := make(chan sent, workers*perWorker)
	done := make(chan struct{})
	for w := 0; w < workers; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < perWorker; i++ {
				s := sent{key: fmt.Sprintf("lost-%d-%d", w, i), user: users[(w+i)%2]}
				s.first = post(t, h, srv, "/pointperks/"+perk+"/awards", s.key, grantBody(s.user))
				results <- s
			}
		}()
	}
	for w := 0; w < workers; w++ {
		<-done
	}
	close(results)
	f.failRecordWrites.Store(false)

	var all []sent
	for s := range results {
		all = append(all, s)
	}
	// Before InFlightTimeout the key is still held.
	if a := h.Do("POST", "/pointperks/"+perk+"/awards", grantBody(all[0].user), h.Admin(), key(all[0].key)); a.Status != 409 || !strings.Contains(string(a.Body), "IDEMPOTENCY_IN_PROGRESS") {
		t.Fatalf("retry within InFlightTimeout = %d %s, want 409 IDEMPOTENCY_IN_PROGRESS", a.Status, a.Body)
	}
	h.Clock.Advance(idempotency.InFlightTimeout + 10*time.Second)
	for _, s := range all {
		for attempt := 0; attempt < 2; attempt++ {
			a := h.Do("POST", "/pointperks/"+perk+"/awards", grantBody(s.user), h.Admin(), key(s.key))
			if s.first.status == 200 && (a.Status != 409 || !strings.Contains(string(a.Body), "IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE") || a.Header.Get(idempotency.ReplayedHeader) != "true") {
				t.Errorf("retry %d of %s (first %d) = %d %s, want 409 IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE, replayed", attempt, s.key, s.first.status, a.Status, a.Body)
			}
		}
	}
	got := points(t, h, users[0])[perk] + points(t, h, users[1])[perk]
	if got != len(all) {
		t.Errorf("points granted = %d for %d keys, want one grant per key", got, len(all))
	}
}

// TestFenceTakenOverCommitsNothing: a request paused before its
// transaction (a stalled function) past InFlightTimeout loses its key to a
// retry, which grants; when the paused request's transaction reaches
// DynamoDB it fails on the key's fence, so nothing is applied twice, and
// it answers 409 IDEMPOTENCY_IN_PROGRESS. A repeat then replays the
// retry's answer.
func TestFenceTakenOverCommitsNothing(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := pointsPerk(t, h)
	uid := h.AdminUser(t, "Taken", "Over")
	f, srv := faultyLoyalty(t, h)
	f.hold = make(chan struct{})
	hold := f.hold

	first := make(chan answer, 1)
	go func() { first <- post(t, h, srv, "/pointperks/"+perk+"/awards", "over-1", grantBody(uid)) }()
	<-f.held

	h.Clock.Advance(idempotency.InFlightTimeout + time.Second)
	retry := h.Do("POST", "/pointperks/"+perk+"/awards", grantBody(uid), h.Admin(), key("over-1")).Expect(t, 200, "")
	if retry.Header.Get(idempotency.ReplayedHeader) != "" {
		t.Fatalf("the retry was replayed: %s", retry.Body)
	}
	close(hold)
	a := <-first
	if a.status != 409 || a.code() != "IDEMPOTENCY_IN_PROGRESS" || a.header.Get("Retry-After") != "1" {
		t.Errorf("the overtaken request = %d %s, want 409 IDEMPOTENCY_IN_PROGRESS with Retry-After 1", a.status, a.body)
	}
	if got := points(t, h, uid)[perk]; got != 1 {
		t.Errorf("points = %d, want 1 (one grant for the key)", got)
	}
	again := h.Do("POST", "/pointperks/"+perk+"/awards", grantBody(uid), h.Admin(), key("over-1")).Expect(t, 200, "")
	if again.Header.Get(idempotency.ReplayedHeader) != "true" || string(again.Body) != string(retry.Body) {
		t.Errorf("repeat = %s (replayed %q), want the retry's answer replayed", again.Body, again.Header.Get(idempotency.ReplayedHeader))
	}
	if got := points(t, h, uid)[perk]; got != 1 {
		t.Errorf("points after the repeat = %d, want 1", got)
	}
}

// TestFenceTransactionAnswerLost: the grant's transaction commits but its
// answer is lost (a timeout), so the request answers 500 and tries to
// release its key: the release refuses a committed record, so the key is
// held (409 IDEMPOTENCY_IN_PROGRESS) and, after InFlightTimeout, is 409
// IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE; the grant is applied once.
func TestFenceTransactionAnswerLost(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := pointsPerk(t, h)
	uid := h.AdminUser(t, "Answer", "Lost")
	f, srv := faultyLoyalty(t, h)
	f.loseTxAnswer.Store(true)

	if a := post(t, h, srv, "/pointperks/"+perk+"/awards", "lost-answer", grantBody(uid)); a.status != 500 {
		t.Fatalf("first = %d %s, want 500 (its transaction's answer was lost)", a.status, a.body)
	}
	if a := h.Do("POST", "/pointperks/"+perk+"/awards", grantBody(uid), h.Admin(), key("lost-answer")); a.Status != 409 || !strings.Contains(string(a.Body), "IDEMPOTENCY_IN_PROGRESS") {
		t.Fatalf("retry = %d %s, want 409 IDEMPOTENCY_IN_PROGRESS", a.Status, a.Body)
	}
	h.Clock.Advance(idempotency.InFlightTimeout + time.Second)
	if a := h.Do("POST", "/pointperks/"+perk+"/awards", grantBody(uid), h.Admin(), key("lost-answer")); a.Status != 409 || !strings.Contains(string(a.Body), "IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE") {
		t.Fatalf("retry after InFlightTimeout = %d %s, want 409 IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE", a.Status, a.Body)
	}
	if got := points(t, h, uid)[perk]; got != 1 {
		t.Errorf("points = %d, want 1", got)
	}
}
