package operation

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Operations table (every key starts with the tenant id):
//
//	pk = <t>#OP#<operationId>   sk = OP      the operation, its lease and checkpoint
//	pk = <t>#NONCE#<nonce>      sk = NONCE   the nonce of the call that created it
//
// Both carry expiresAt (epoch seconds, Lifetime after creation) for DynamoDB
// TTL, and every read treats an expired item as absent. The nonce item and
// the operation are written in one transaction, the nonce item conditional
// on its absence, so of two calls with one nonce exactly one creates the
// operation. Every write the jobs function makes is conditional on its
// lease (leaseOwner), so a run that lost its lease cannot write.

const (
	skOp    = "OP"
	skNonce = "NONCE"
)

func opPK(t, id string) string       { return t + "#OP#" + id }
func noncePK(t, nonce string) string { return t + "#NONCE#" + nonce }

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// Checkpoint is how far the jobs function got: everything before it was
// applied and its results were written in part files. An export writes it
// in the same transaction as the rows it covers (see Service.Commit); an
// import writes it after the chunks it covers committed (see chunk.go).
type Checkpoint struct {
	// Rows is the number of input records consumed (data rows, or the
	// items an export wrote).
	Rows int64 `dynamodbav:"rows"`
	// Offset is the byte offset in the input just after the last consumed
	// record; a resumed run reads on from there.
	Offset int64 `dynamodbav:"offset"`
	// Parts is the number of results part files written with a
	// checkpoint each (exports); PartBytes is the total size of those and
	// of the parts of the chunks the checkpoint covers (imports).
	Parts     int   `dynamodbav:"parts"`
	PartBytes int64 `dynamodbav:"partBytes"`
	// PartRuns is, for each part, the run that wrote it (part objects are
	// named by run, so a stale run never overwrites a committed part).
	PartRuns Runs `dynamodbav:"partRuns,omitempty"`
	// Columns is the header row of the results file.
	Columns []string `dynamodbav:"columns,omitempty"`
	// Header is the input's header row (imports), kept for resumed runs
	// and the results file.
	Header []string `dynamodbav:"header,omitempty"`
	// InputSize is the size of the input file in bytes (for etaMs).
	InputSize int64 `dynamodbav:"inputSize"`
	// InputETag is the ETag of the input file as the first run read it; a
	// resumed run reads on only while the file still has it.
	InputETag string `dynamodbav:"inputETag,omitempty"`
	// Cursor is free for the job kind (e.g. where an export stopped).
	Cursor string `dynamodbav:"cursor,omitempty"`
	// InputDone is set once the whole input was consumed; the run then
	// only assembles the results file.
	InputDone bool `dynamodbav:"inputDone"`
	// Yielded is set by the last checkpoint of a run that yielded (it
	// continues in a new invocation) with nothing in flight: the next run
	// finds no write of it past the checkpoint.
	Yielded bool `dynamodbav:"yielded,omitempty"`
}

// Runs is a list of run numbers, stored run-length encoded as a string
// ("<run>x<count>,..."): a job writes tens of thousands of parts, mostly
// in long stretches by one run, and the checkpoint is rewritten by every
// commit. A stored list of numbers (the earlier form) is read too.
type Runs []int

// MarshalDynamoDBAttributeValue stores the runs run-length encoded.
func (r Runs) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) {
	if len(r) == 0 {
		return &types.AttributeValueMemberNULL{Value: true}, nil
	}
	var b []byte
	for i := 0; i < len(r); {
		j := i
		for j < len(r) && r[j] == r[i] {
			j++
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(r[i]), 10)
		b = append(b, 'x')
		b = strconv.AppendInt(b, int64(j-i), 10)
		i = j
	}
	return &types.AttributeValueMemberS{Value: string(b)}, nil
}

// UnmarshalDynamoDBAttributeValue reads the encoded form or a list.
func (r *Runs) UnmarshalDynamoDBAttributeValue(av types.AttributeValue) error {
	*r = nil
	switch v := av.(type) {
	case *types.AttributeValueMemberNULL:
		return nil
	case *types.AttributeValueMemberL:
		var list []int
		if err := attributevalue.Unmarshal(v, &list); err != nil {
			return fmt.Errorf("part runs: %w", err)
		}
		*r = list
		return nil
	case *types.AttributeValueMemberS:
		if v.Value == "" {
			return nil
		}
		var out Runs
		for _, f := range strings.Split(v.Value, ",") {
			run, count, ok := strings.Cut(f, "x")
			n, err1 := strconv.Atoi(run)
			c, err2 := strconv.Atoi(count)
			if !ok || err1 != nil || err2 != nil || c <= 0 {
				return fmt.Errorf("part runs: malformed %q", f)
			}
			for ; c > 0; c-- {
				out = append(out, n)
			}
		}
		*r = out
		return nil
	default:
		return fmt.Errorf("part runs: unexpected %T", av)
	}
}

// resultItem is Result as stored.
type resultItem struct {
	Message  string `dynamodbav:"message"`
	EtaMs    int64  `dynamodbav:"etaMs"`
	Total    int64  `dynamodbav:"total"`
	Skipped  int64  `dynamodbav:"skipped"`
	Imported int64  `dynamodbav:"imported"`
	Errors   int64  `dynamodbav:"errors"`
	Granted  *int64 `dynamodbav:"granted,omitempty"`
	Counted  *int64 `dynamodbav:"counted,omitempty"`
	Href     string `dynamodbav:"href,omitempty"`
}

// record is an operation as stored.
type record struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`

	ID          string         `dynamodbav:"id"`
	TenantID    string         `dynamodbav:"tenantId"`
	Namespace   string         `dynamodbav:"namespace"`
	EntityID    string         `dynamodbav:"entityId"`
	Nonce       string         `dynamodbav:"nonce"`
	Name        string         `dynamodbav:"name"`
	Status      Status         `dynamodbav:"status"`
	Result      *resultItem    `dynamodbav:"result,omitempty"`
	Error       *Error         `dynamodbav:"error,omitempty"`
	Metadata    map[string]any `dynamodbav:"metadata,omitempty"`
	IsRetryable bool           `dynamodbav:"isRetryable"`
	CreatedAt   string         `dynamodbav:"createdAt"`
	UpdatedAt   string         `dynamodbav:"updatedAt"`
	EndedAt     string         `dynamodbav:"endedAt,omitempty"`
	ExpiresAt   int64          `dynamodbav:"expiresAt"`

	// Fingerprint identifies the request that created the operation.
	Fingerprint string `dynamodbav:"fingerprint"`
	// InputStored is set once the API stored the job's input (or its
	// start object); InputDeadline (epoch ms) is when an input that a
	// client uploads itself is given up on.
	InputStored   bool  `dynamodbav:"inputStored"`
	InputDeadline int64 `dynamodbav:"inputDeadline,omitempty"`
	// LeaseOwner and LeaseUntil (epoch ms) are the jobs function's lease;
	// Claims counts the runs that claimed the operation.
	LeaseOwner string     `dynamodbav:"leaseOwner,omitempty"`
	LeaseUntil int64      `dynamodbav:"leaseUntil,omitempty"`
	Claims     int        `dynamodbav:"claims"`
	Checkpoint Checkpoint `dynamodbav:"cp"`
	// CpToken is the token of the commit that wrote Checkpoint.
	CpToken string `dynamodbav:"cpToken,omitempty"`
}

func (r *record) expired(now time.Time) bool { return r.ExpiresAt > 0 && r.ExpiresAt <= now.Unix() }

// view is the operation as the API returns it.
func (r *record) view() Operation {
	op := Operation{
		ID: r.ID, TenantID: r.TenantID, Namespace: r.Namespace, EntityID: r.EntityID, Nonce: r.Nonce, Name: r.Name,
		Status: r.Status, Error: r.Error, Metadata: r.Metadata, IsRetryable: r.IsRetryable,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	if r.Result != nil {
		op.Result = &Result{Message: r.Result.Message, EtaMs: r.Result.EtaMs, Total: r.Result.Total, Skipped: r.Result.Skipped,
			Imported: r.Result.Imported, Errors: r.Result.Errors, Granted: r.Result.Granted, Counted: r.Result.Counted, Href: r.Result.Href}
	}
	if r.EndedAt != "" {
		e := r.EndedAt
		op.EndedAt = &e
	}
	return op
}

// nonceRecord binds a nonce to the operation its first call created.
type nonceRecord struct {
	PK          string `dynamodbav:"pk"`
	SK          string `dynamodbav:"sk"`
	OperationID string `dynamodbav:"operationId"`
	Fingerprint string `dynamodbav:"fingerprint"`
	CreatedAt   string `dynamodbav:"createdAt"`
	ExpiresAt   int64  `dynamodbav:"expiresAt"`
}

// store is the operation domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

func (s *store) get(ctx context.Context, tenantID, id string, now time.Time) (record, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(opPK(tenantID, id), skOp), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return record{}, fmt.Errorf("get operation %s: %w", id, err)
	}
	if out.Item == nil {
		return record{}, fmt.Errorf("get operation %s: %w", id, ErrNotFound)
	}
	var r record
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return record{}, fmt.Errorf("get operation %s: %w", id, err)
	}
	if r.expired(now) {
		return record{}, fmt.Errorf("get operation %s: %w", id, ErrNotFound)
	}
	return r, nil
}

func (s *store) getNonce(ctx context.Context, tenantID, nonce string, now time.Time) (nonceRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key(noncePK(tenantID, nonce), skNonce), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nonceRecord{}, fmt.Errorf("get nonce: %w", err)
	}
	if out.Item == nil {
		return nonceRecord{}, fmt.Errorf("get nonce: %w", ErrNotFound)
	}
	var n nonceRecord
	if err := attributevalue.UnmarshalMap(out.Item, &n); err != nil {
		return nonceRecord{}, fmt.Errorf("get nonce: %w", err)
	}
	if n.ExpiresAt > 0 && n.ExpiresAt <= now.Unix() {
		return nonceRecord{}, fmt.Errorf("get nonce: %w", ErrNotFound)
	}
	return n, nil
}

// create writes a new operation and its nonce item in one transaction. It
// returns errNonceTaken when the nonce item exists (and has not expired).
func (s *store) create(ctx context.Context, r record, n nonceRecord, now time.Time) error {
	opItem, err := attributevalue.MarshalMap(r)
	if err != nil {
		return fmt.Errorf("create operation: %w", err)
	}
	nonceItem, err := attributevalue.MarshalMap(n)
	if err != nil {
		return fmt.Errorf("create operation: %w", err)
	}
	items := []types.TransactWriteItem{
		{Put: &types.Put{
			TableName: aws.String(s.table), Item: nonceItem,
			// An expired nonce item that TTL has not removed yet is free.
			ConditionExpression:       aws.String("attribute_not_exists(pk) OR expiresAt <= :now"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.Unix())},
		}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: opItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}
	for attempt := 0; ; attempt++ {
		_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if err == nil {
			return nil
		}
		if reasons := ddb.CanceledReasons(err); len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
			return errNonceTaken
		}
		// Two calls with one nonce at the same moment: one transaction
		// wins, the other is told of the conflict; retry to see the winner.
		if !ddb.IsTransactionConflict(err) || attempt >= 6 {
			return fmt.Errorf("create operation: %w", err)
		}
		time.Sleep(time.Duration(10*(attempt+1)) * time.Millisecond)
	}
}

var errNonceTaken = errors.New("nonce taken")

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// update runs one conditional UpdateItem on an operation and returns the
// new item. A failed condition is returned as is (ddb.IsConditionFailed).
func (s *store) update(ctx context.Context, tenantID, id, expr, cond string, names map[string]string, values map[string]types.AttributeValue) (record, error) {
	in := &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(opPK(tenantID, id), skOp),
		UpdateExpression: aws.String(expr), ExpressionAttributeValues: values,
		ReturnValues: types.ReturnValueAllNew,
	}
	if cond != "" {
		in.ConditionExpression = aws.String(cond)
	}
	if len(names) > 0 {
		in.ExpressionAttributeNames = names
	}
	out, err := s.db.UpdateItem(ctx, in)
	if err != nil {
		return record{}, err
	}
	var r record
	if err := attributevalue.UnmarshalMap(out.Attributes, &r); err != nil {
		return record{}, fmt.Errorf("update operation %s: %w", id, err)
	}
	return r, nil
}

// updateItem returns the transaction item of an update of an operation.
func (s *store) updateItem(tenantID, id, expr, cond string, names map[string]string, values map[string]types.AttributeValue) types.TransactWriteItem {
	u := &types.Update{
		TableName: aws.String(s.table), Key: key(opPK(tenantID, id), skOp),
		UpdateExpression: aws.String(expr), ExpressionAttributeValues: values,
		ConditionExpression: aws.String(cond),
	}
	if len(names) > 0 {
		u.ExpressionAttributeNames = names
	}
	return types.TransactWriteItem{Update: u}
}
