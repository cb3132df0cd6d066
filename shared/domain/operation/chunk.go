package operation

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Chunked commits. An import commits its rows in chunks, several at once:
// each chunk's transaction holds the chunk's writes, its marker and a
// check of one of the run's fences; the operation's checkpoint follows
// the chunks now and then (Commit without items). Items, next to the
// operation:
//
//	pk = <t>#OP#<operationId>   sk = CHUNK#<from>   the marker of a committed chunk (input bytes from..to)
//	pk = <t>#OP#<operationId>   sk = FENCE#<slot>   a fence: the run allowed to commit through this slot
//
// The marker is put conditional on its absence, so a chunk commits once.
// A run owns FenceSlots fences (Fence, right after its claim); each chunk
// in flight uses a slot of its own, and its transaction checks that the
// slot's fence still names the run. A later run takes the fences over
// (conditional on its higher claim number), after which no transaction of
// the earlier run can commit; it then reads the markers past the
// checkpoint (Chunks) and skips their rows. Chunks in flight never share a
// fence, so their transactions never touch a common item (DynamoDB
// cancels transactions that do, as conflicts).

// FenceSlots is the number of fences of a run: the most chunks it commits
// at once.
const FenceSlots = 8

// Chunk is the marker of a committed chunk: the input bytes [From, To) it
// covers, its rows' outcomes, and its results part.
type Chunk struct {
	From     int64 `dynamodbav:"from"`
	To       int64 `dynamodbav:"to"`
	Rows     int64 `dynamodbav:"rows"`
	Imported int64 `dynamodbav:"imported"`
	Skipped  int64 `dynamodbav:"skipped"`
	Errors   int64 `dynamodbav:"errors"`
	// Run is the run that committed it (its results part is named by it);
	// PartBytes the size of that part.
	Run       int   `dynamodbav:"run"`
	PartBytes int64 `dynamodbav:"partBytes"`
	// Token tells this commit's write from any other.
	Token string `dynamodbav:"token"`
}

// chunkItem is a Chunk as stored.
type chunkItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
	Chunk
}

const (
	skChunkPrefix = "CHUNK#"
	skFencePrefix = "FENCE#"
)

// chunkSK orders markers by input offset (15 digits: offsets below 1 PB).
func chunkSK(from int64) string { return fmt.Sprintf("%s%015d", skChunkPrefix, from) }

func fenceSK(slot int) string { return skFencePrefix + strconv.Itoa(slot) }

// ErrChunkTaken is a chunk whose marker another commit wrote: a later run
// took the operation over.
var ErrChunkTaken = errors.New("operation: chunk committed by another run")

// Fence takes the run's fences over (every slot), so that no chunk of an
// earlier run commits after it returns. A later run's fences are
// ErrLeaseLost.
func (s *Service) Fence(ctx context.Context, l *Lease) error {
	exp := s.Clock.Now().Add(Lifetime).Unix()
	errs := make([]error, FenceSlots)
	var wg sync.WaitGroup
	for slot := range FenceSlots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.DB.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: aws.String(s.Table),
				Item: map[string]types.AttributeValue{
					"pk": str(opPK(l.TenantID, l.ID)), "sk": str(fenceSK(slot)),
					"owner": str(l.Owner), "run": num(int64(l.Claims)), "expiresAt": num(exp),
				},
				ConditionExpression:       aws.String("attribute_not_exists(pk) OR #run <= :run"),
				ExpressionAttributeNames:  map[string]string{"#run": "run"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":run": num(int64(l.Claims))},
			})
			switch {
			case ddb.IsConditionFailed(err):
				errs[slot] = ErrLeaseLost
			case err != nil:
				errs[slot] = fmt.Errorf("fence %d of operation %s: %w", slot, l.ID, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, ErrLeaseLost) {
			return ErrLeaseLost
		}
	}
	return errors.Join(errs...)
}

// CommitChunk writes items with the chunk's marker in one transaction,
// conditional on the marker's absence and on the run's fence of slot.
// It returns ErrLeaseLost when a later run holds the fence (nothing was
// written), ErrChunkTaken when another commit wrote the marker, and
// *ItemsFailedError when conditions of items failed (nothing was
// written). Any other error (e.g. a ValidationException for an item
// DynamoDB cannot store) is returned wrapped, as it came.
func (s *Service) CommitChunk(ctx context.Context, l *Lease, slot int, c Chunk, items []types.TransactWriteItem) error {
	c.Token = newToken()
	marker, err := attributevalue.MarshalMap(chunkItem{PK: opPK(l.TenantID, l.ID), SK: chunkSK(c.From), ExpiresAt: s.Clock.Now().Add(Lifetime).Unix(), Chunk: c})
	if err != nil {
		return fmt.Errorf("chunk marker: %w", err)
	}
	all := make([]types.TransactWriteItem, 0, len(items)+2)
	all = append(all, items...)
	all = append(all,
		types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.Table), Item: marker, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(s.Table), Key: key(opPK(l.TenantID, l.ID), fenceSK(slot)),
			ConditionExpression:       aws.String("#owner = :owner"),
			ExpressionAttributeNames:  map[string]string{"#owner": "owner"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":owner": str(l.Owner)},
		}},
	)
	err = s.transact(ctx, all)
	if err == nil {
		return nil
	}
	reasons := ddb.CanceledReasons(err)
	if len(reasons) != len(all) {
		return fmt.Errorf("commit chunk at %d of operation %s: %w", c.From, l.ID, err)
	}
	n := len(items)
	if reasons[n+1] == "ConditionalCheckFailed" {
		return ErrLeaseLost
	}
	if reasons[n] == "ConditionalCheckFailed" {
		// A retried request whose first attempt was applied finds its own
		// marker.
		if got, gerr := s.chunkAt(ctx, l, c.From); gerr == nil && got.Token == c.Token {
			return nil
		}
		return ErrChunkTaken
	}
	var failed []int
	for i, r := range reasons[:n] {
		if r == "ConditionalCheckFailed" {
			failed = append(failed, i)
		}
	}
	if len(failed) > 0 {
		return &ItemsFailedError{Indexes: failed}
	}
	return fmt.Errorf("commit chunk at %d of operation %s: %w", c.From, l.ID, err)
}

func (s *Service) chunkAt(ctx context.Context, l *Lease, from int64) (Chunk, error) {
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: key(opPK(l.TenantID, l.ID), chunkSK(from)), ConsistentRead: aws.Bool(true)})
	if err != nil || out.Item == nil {
		return Chunk{}, fmt.Errorf("chunk at %d: %w", from, errors.Join(err, ErrNotFound))
	}
	var it chunkItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return Chunk{}, fmt.Errorf("chunk at %d: %w", from, err)
	}
	return it.Chunk, nil
}

// Chunks calls f with the markers of the operation's committed chunks
// that start at input offset from or later, in input order (consistent
// reads).
func (s *Service) Chunks(ctx context.Context, tenantID, id string, from int64, f func(Chunk) error) error {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.Table),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(opPK(tenantID, id)), ":from": str(chunkSK(max(from, 0))), ":to": str(skChunkPrefix + "~"),
		},
		ConsistentRead: aws.Bool(true),
	}
	for {
		page, err := s.DB.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("chunks of operation %s: %w", id, err)
		}
		for _, raw := range page.Items {
			var it chunkItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return fmt.Errorf("chunks of operation %s: %w", id, err)
			}
			if err := f(it.Chunk); err != nil {
				return err
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
