package idempotency

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Item layout in the Operations table (every key starts with the tenant id,
// as the operations' own items do):
//
//	pk = <t>#IDEM#<principal>#<METHOD /pattern>#<SHA-256 of the key>   sk = IDEM
//
// The key itself is stored hashed: it is the client's string, of any
// printable characters, and it never needs to be read back. The item
// carries expiresAt (epoch seconds, Lifetime after the claim) for DynamoDB
// TTL, and every condition and read treats an expired item as absent (TTL
// deletes late).
//
// The claim's fence: every transaction the request commits (ddb.Transact,
// ddb.Tx.Run) carries an Update of the record, `SET committed = true`
// conditional on the record being IN_FLIGHT with the claim's token (see
// newClaim and ddb.Claim). So a record with committed set is one whose
// request made its change: it is never claimed again (a repeat answers
// the stored response, or IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE when none
// will come), and a transaction of a request whose key was claimed again
// (it ran past InFlightTimeout) fails whole (ddb.ErrClaimLost).

const skIdem = "IDEM"

// Record statuses.
const (
	statusInFlight = "IN_FLIGHT"
	statusDone     = "DONE"
)

// recordID names a key's record: its scope and the key.
type recordID struct {
	tenantID  string
	principal string
	route     string
	key       string
}

func (id recordID) pk() string {
	sum := sha256.Sum256([]byte(id.key))
	return id.tenantID + "#IDEM#" + id.principal + "#" + id.route + "#" + hex.EncodeToString(sum[:])
}

func (id recordID) itemKey() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: id.pk()},
		"sk": &types.AttributeValueMemberS{Value: skIdem},
	}
}

// record is a key's record as stored.
type record struct {
	PK       string `dynamodbav:"pk"`
	SK       string `dynamodbav:"sk"`
	TenantID string `dynamodbav:"tenantId"`
	Route    string `dynamodbav:"route"`
	// RequestHash identifies the request that claimed the key (see
	// requestHash).
	RequestHash string `dynamodbav:"requestHash"`
	Status      string `dynamodbav:"status"`
	// Token is the claim's random id: only the request that claimed the
	// key completes or releases it.
	Token string `dynamodbav:"token"`
	// ClaimedAt (epoch ms) is when the key was claimed; an IN_FLIGHT
	// record older than InFlightTimeout is abandoned.
	ClaimedAt int64  `dynamodbav:"claimedAt"`
	CreatedAt string `dynamodbav:"createdAt"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
	// Committed is set by the first transaction the claim's request
	// committed (in that transaction): the request's change was made, so
	// the key is never claimed again.
	Committed bool `dynamodbav:"committed,omitempty"`
	// Unanswered (status DONE) marks a request that made its change but
	// answered what is not stored (a 5xx, 401, 409 or 429 after a
	// committed transaction, or a panic): a repeat answers
	// IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE.
	Unanswered bool `dynamodbav:"unanswered,omitempty"`

	// The stored response (status DONE).
	RespStatus  int               `dynamodbav:"respStatus,omitempty"`
	RespHeaders map[string]string `dynamodbav:"respHeaders,omitempty"`
	Body        []byte            `dynamodbav:"body,omitempty"`
	Gzip        bool              `dynamodbav:"gzip,omitempty"`
	TooLarge    bool              `dynamodbav:"tooLarge,omitempty"`
	CompletedAt string            `dynamodbav:"completedAt,omitempty"`
}

func (r *record) expired(now time.Time) bool { return r.ExpiresAt > 0 && r.ExpiresAt <= now.Unix() }

// claim is a key this request holds. fence rides in the request's
// context (ddb.WithClaim) into every transaction the request commits.
type claim struct {
	id    recordID
	token string
	fence *ddb.Claim
}

// newClaim returns the claim of the record id held with token, with its
// fence: an Update of the record marking it committed, conditional on the
// record still being this claim's and IN_FLIGHT.
func (s *Store) newClaim(id recordID, token string) *claim {
	return &claim{id: id, token: token, fence: ddb.NewClaim(types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.Table), Key: id.itemKey(),
		UpdateExpression:         aws.String("SET #committed = :true"),
		ConditionExpression:      aws.String("#token = :token AND #status = :inflight"),
		ExpressionAttributeNames: map[string]string{"#committed": "committed", "#token": "token", "#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":true": &types.AttributeValueMemberBOOL{Value: true}, ":token": str(token), ":inflight": str(statusInFlight),
		},
	}})}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// claim takes the key for a request identified by hash with one
// conditional PutItem: it succeeds when no live record exists, or the
// record expired, or it was left IN_FLIGHT by the same request longer than
// InFlightTimeout without committing anything. Otherwise the record the
// put found decides (see decide).
func (s *Store) claim(ctx context.Context, id recordID, hash string) (*claim, error) {
	for attempt := 0; ; attempt++ {
		now := s.Clock.Now()
		rec := record{
			PK: id.pk(), SK: skIdem, TenantID: id.tenantID, Route: id.route, RequestHash: hash,
			Status: statusInFlight, Token: newToken(), ClaimedAt: now.UnixMilli(),
			CreatedAt: clock.Stamp(now), ExpiresAt: now.Add(Lifetime).Unix(),
		}
		item, err := attributevalue.MarshalMap(rec)
		if err != nil {
			return nil, fmt.Errorf("claim idempotency key: %w", err)
		}
		_, err = s.DB.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.Table), Item: item,
			ConditionExpression: aws.String("attribute_not_exists(pk) OR expiresAt <= :now OR " +
				"(#status = :inflight AND claimedAt <= :abandoned AND requestHash = :hash AND attribute_not_exists(#committed))"),
			ExpressionAttributeNames: map[string]string{"#status": "status", "#committed": "committed"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":now": num(now.Unix()), ":inflight": str(statusInFlight),
				":abandoned": num(now.Add(-InFlightTimeout).UnixMilli()), ":hash": str(hash),
			},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if err == nil {
			return s.newClaim(id, rec.Token), nil
		}
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			if ddb.IsTransactionConflict(err) {
				// The record is being written by a transaction of the
				// request that holds the key (its fence): it is in
				// flight.
				return nil, ErrInProgress
			}
			return nil, fmt.Errorf("claim idempotency key: %w", err)
		}
		if ccf.Item == nil {
			// The record was released or deleted between the condition
			// and the answer (a store that does not return the old item
			// lands here too): try again.
			if attempt >= 3 {
				return nil, fmt.Errorf("claim idempotency key: the record was not returned")
			}
			continue
		}
		var old record
		if err := attributevalue.UnmarshalMap(ccf.Item, &old); err != nil {
			return nil, fmt.Errorf("claim idempotency key: %w", err)
		}
		return nil, decide(old, hash, now)
	}
}

// decide answers a request whose claim found the live record old (at
// now): another request is ErrKeyReused; an IN_FLIGHT record is
// ErrInProgress, unless it is abandoned (older than InFlightTimeout) with
// its change committed, which is ErrCommittedWithoutResponse (its request
// died before it stored its response: running again would apply the
// change twice); a DONE record is a *replay of its response, or
// ErrCommittedWithoutResponse when its request answered what is not kept.
func decide(old record, hash string, now time.Time) error {
	switch {
	case old.RequestHash != hash:
		return ErrKeyReused
	case old.Status != statusDone && old.Committed && old.ClaimedAt <= now.Add(-InFlightTimeout).UnixMilli():
		return ErrCommittedWithoutResponse
	case old.Status != statusDone:
		return ErrInProgress
	case old.Unanswered:
		return ErrCommittedWithoutResponse
	}
	body := old.Body
	if old.Gzip {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("replay idempotency key: %w", err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			return fmt.Errorf("replay idempotency key: %w", err)
		}
	}
	return &replay{status: old.RespStatus, header: old.RespHeaders, body: body, tooLarge: old.TooLarge}
}

// complete stores the response of a claimed key (one conditional
// UpdateItem: only the claim's own token may). A body larger than
// maxStoredBody (after compression) is recorded as too large: a repeat
// then answers errTooLarge rather than run again.
func (s *Store) complete(r *http.Request, c *claim, resp response) {
	ctx, cancel := detached(r.Context())
	defer cancel()
	body, gz := packBody(resp.body)
	tooLarge := resp.tooLarge || len(body) > maxStoredBody
	expr := "SET #status = :done, respStatus = :rs, completedAt = :at"
	values := map[string]types.AttributeValue{
		":done": str(statusDone), ":rs": num(int64(resp.status)),
		":at": str(clock.Stamp(s.Clock.Now())), ":token": str(c.token), ":inflight": str(statusInFlight),
	}
	if len(resp.header) > 0 {
		h, err := attributevalue.Marshal(resp.header)
		if err != nil {
			web.Logger(ctx).Error("idempotency: store response", "error", err.Error())
			s.settle(r, c, "the response headers could not be stored")
			return
		}
		expr += ", respHeaders = :h"
		values[":h"] = h
	}
	switch {
	case tooLarge:
		expr += ", tooLarge = :true"
		values[":true"] = &types.AttributeValueMemberBOOL{Value: true}
	case len(body) > 0:
		expr += ", body = :b"
		values[":b"] = &types.AttributeValueMemberB{Value: body}
		if gz {
			expr += ", gzip = :true"
			values[":true"] = &types.AttributeValueMemberBOOL{Value: true}
		}
	}
	_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: c.id.itemKey(),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("#status = :inflight AND #token = :token"),
		ExpressionAttributeNames:  map[string]string{"#status": "status", "#token": "token"},
		ExpressionAttributeValues: values,
	})
	switch {
	case ddb.IsConditionFailed(err):
		// Taken for abandoned and claimed again (the request ran longer
		// than InFlightTimeout and committed nothing): the later claim
		// owns the record.
		web.Logger(ctx).Warn("idempotency: the key was claimed again before the response was stored", "route", c.id.route)
	case err != nil:
		// The key stays IN_FLIGHT. When the request committed a change
		// (the record says so), a repeat after InFlightTimeout answers
		// IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE; when it committed
		// nothing, the repeat runs again. Logged for the operator.
		web.Logger(ctx).Error("idempotency: store response", "route", c.id.route, "committed", c.fence.Committed(), "error", err.Error())
	}
}

// settle ends a claim whose request answered what is not stored (or
// panicked): release when it committed nothing, unanswered when it did.
func (s *Store) settle(r *http.Request, c *claim, reason string) {
	if c.fence.Committed() {
		s.unanswered(r, c, reason)
		return
	}
	s.release(r, c, reason)
}

// release deletes the record of a claimed key (one conditional
// DeleteItem), so a retry with the key runs again. The delete is
// conditional on the record not being marked committed: a transaction of
// the request whose outcome it did not learn (a timeout) may have
// committed, and then the key must stay (IN_FLIGHT and committed: a repeat
// answers IDEMPOTENCY_IN_PROGRESS, then, after InFlightTimeout,
// IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE). A transaction that reaches
// DynamoDB after the delete fails on its fence (the record is gone).
// reason, when not empty, is logged.
func (s *Store) release(r *http.Request, c *claim, reason string) {
	ctx, cancel := detached(r.Context())
	defer cancel()
	if reason != "" {
		web.Logger(ctx).Warn("idempotency: key released", "route", c.id.route, "reason", reason)
	}
	_, err := s.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.Table), Key: c.id.itemKey(),
		ConditionExpression:       aws.String("#status = :inflight AND #token = :token AND attribute_not_exists(#committed)"),
		ExpressionAttributeNames:  map[string]string{"#status": "status", "#token": "token", "#committed": "committed"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":inflight": str(statusInFlight), ":token": str(c.token)},
	})
	switch {
	case ddb.IsConditionFailed(err):
		// Claimed again, or committed by a transaction whose answer was
		// lost: the key stays.
		web.Logger(ctx).Warn("idempotency: key not released (claimed again, or its change was committed)", "route", c.id.route)
	case err != nil:
		// Left IN_FLIGHT, the key is free again after InFlightTimeout
		// (unless its change was committed).
		web.Logger(ctx).Error("idempotency: release key", "route", c.id.route, "error", err.Error())
	}
}

// unanswered records that the claim's request committed its change but
// answered what is not stored (one conditional UpdateItem, in place of
// release's DeleteItem): a repeat answers
// IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE at once rather than run the
// change again.
func (s *Store) unanswered(r *http.Request, c *claim, reason string) {
	ctx, cancel := detached(r.Context())
	defer cancel()
	web.Logger(ctx).Warn("idempotency: the request committed its change but its answer is not kept", "route", c.id.route, "reason", reason)
	_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table), Key: c.id.itemKey(),
		UpdateExpression:         aws.String("SET #status = :done, unanswered = :true, completedAt = :at"),
		ConditionExpression:      aws.String("#status = :inflight AND #token = :token"),
		ExpressionAttributeNames: map[string]string{"#status": "status", "#token": "token"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":done": str(statusDone), ":true": &types.AttributeValueMemberBOOL{Value: true},
			":at": str(clock.Stamp(s.Clock.Now())), ":token": str(c.token), ":inflight": str(statusInFlight),
		},
	})
	if err != nil && !ddb.IsConditionFailed(err) {
		// Left IN_FLIGHT and committed: a repeat answers
		// IDEMPOTENCY_IN_PROGRESS, then, after InFlightTimeout,
		// IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE.
		web.Logger(ctx).Error("idempotency: record unanswered key", "route", c.id.route, "error", err.Error())
	}
}

// packBody returns the body to store: gzip-compressed when that is
// smaller.
func packBody(body []byte) ([]byte, bool) {
	if len(body) < 256 {
		return body, false
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(body)
	if err := zw.Close(); err != nil || buf.Len() >= len(body) {
		return body, false
	}
	return buf.Bytes(), true
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
