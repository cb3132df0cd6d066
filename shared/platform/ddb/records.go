package ddb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A Kind is one kind of item that a domain keeps in a table (a tenant's
// perks, its award enrichments, ...), each stored as a record: a struct
// with dynamodbav tags that holds the whole item, its key (the table's
// partition key is pk) and a `version` attribute among it. The Kind's
// value names an item in errors ("perk" makes "decode perk: ..."). A Kind
// decodes the items that queries return into records; Records writes and
// reads one item.
//
// Neither is generic: records are taken and filled as any (as
// attributevalue does), so that their code stands in a function's binary
// once however many kinds the function stores.
type Kind string

// Decode decodes one item of the kind, as a query returned it, into rec
// (a pointer to a record).
func (k Kind) Decode(it Item, rec any) error {
	if err := attributevalue.UnmarshalMap(it, rec); err != nil {
		return fmt.Errorf("decode %s: %w", string(k), err)
	}
	return nil
}

// QueryAll runs in (a Query of items of the kind) page after page to its
// end and decodes every item, in the query's order, into recs (a pointer
// to a slice of records).
func (k Kind) QueryAll(ctx context.Context, api API, in dynamodb.QueryInput, recs any) error {
	var items []Item
	for {
		out, err := api.Query(ctx, &in)
		if err != nil {
			return fmt.Errorf("query %s: %w", aws.ToString(in.TableName), err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if err := attributevalue.UnmarshalListOfMaps(items, recs); err != nil {
		return fmt.Errorf("decode %s: %w", string(k), err)
	}
	return nil
}

// ReadPage reads one page of an API list of items of the kind: it decodes
// q's page key with c, runs in from there until it holds q.Limit kept
// items or is exhausted (QueryPage) and decodes them, in order, into recs
// (a pointer to a slice of records). next is the page key of the following
// page, "" when nothing follows. A page key that is not one of this list's
// is VALIDATION_FAILED (Cursor.Decode).
func (k Kind) ReadPage(ctx context.Context, api API, c Cursor, in dynamodb.QueryInput, q PageQuery, recs any) (next string, err error) {
	start, err := c.Decode(q.Tenant, q.Scope, q.StartKey)
	if err != nil {
		return "", err
	}
	page, lek, err := QueryPage(ctx, api, in, start, q.Limit, q.Keep)
	if err != nil {
		return "", err
	}
	if err := attributevalue.UnmarshalListOfMaps(page, recs); err != nil {
		return "", fmt.Errorf("decode %s: %w", string(k), err)
	}
	return c.Encode(q.Tenant, q.Scope, lek)
}

// Records writes and reads the items of one Kind in a table, one at a
// time. Writes are versioned optimistically (Put), reads are strongly
// consistent, and every error names the kind and the item's id and wraps
// the domain's own NotFound or Conflict error, so a domain's store keeps
// only its keys and the shape of its records.
type Records struct {
	API   API
	Table string
	Kind  Kind
	// NotFound is wrapped by Get and Delete when no item has the key.
	NotFound error
	// Conflict is wrapped by Put when another write got there first.
	Conflict error
}

// Put writes rec, the record of the item of id, as its version: version 1
// creates the item and fails if one has its key already; a later version
// replaces the stored item only while that holds version-1. A failed
// condition wraps Conflict (the caller reads again and retries, or gives
// up).
func (s Records) Put(ctx context.Context, id string, rec any, version int) error {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return fmt.Errorf("put %s %s: %w", string(s.Kind), id, err)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: item}
	if version == 1 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("version = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(version - 1)}}
	}
	if _, err := s.API.PutItem(ctx, in); err != nil {
		if IsConditionFailed(err) {
			err = s.Conflict
		}
		return fmt.Errorf("put %s %s: %w", string(s.Kind), id, err)
	}
	return nil
}

// Get reads the item of id, which has key, strongly consistently into rec
// (a pointer to a record). No item wraps NotFound.
func (s Records) Get(ctx context.Context, id string, key Item, rec any) error {
	out, err := s.API.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: key, ConsistentRead: aws.Bool(true)})
	switch {
	case err != nil:
	case out.Item == nil:
		err = s.NotFound
	default:
		err = attributevalue.UnmarshalMap(out.Item, rec)
	}
	if err != nil {
		return fmt.Errorf("get %s %s: %w", string(s.Kind), id, err)
	}
	return nil
}

// Delete removes the item of id, which has key. No item wraps NotFound.
func (s Records) Delete(ctx context.Context, id string, key Item) error {
	_, err := s.API.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:           aws.String(s.Table),
		Key:                 key,
		ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if IsConditionFailed(err) {
		err = s.NotFound
	}
	if err != nil {
		return fmt.Errorf("delete %s %s: %w", string(s.Kind), id, err)
	}
	return nil
}
