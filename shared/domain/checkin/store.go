package checkin

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Checkins table (every key starts with the tenant id):
//
//	pk = <t>#USER#<userId>   sk = CHECKIN   the user's one check-in
//
//	gsi1: gsi1pk = <t>#LOCATION#<locationId>  gsi1sk = <created>#<checkinId>
//	      (the check-ins at a location, newest first with ScanIndexForward=false)
//
// A user has a single check-in slot: checking in elsewhere overwrites it,
// which deletes the other check-in and creates the new one in one write, so
// a user is at one location at a time whatever the concurrency. Every write
// of the slot is conditional on what the writer read (attribute_not_exists,
// or the id it saw), inside one TransactWriteItems with the actions it
// causes; a writer that lost a race reads again and retries.
//
// The check-in carries expiresAt (epoch seconds, created + 30 minutes) for
// DynamoDB TTL; since TTL deletion is lazy, every read treats an item whose
// expiresAt has passed as absent.

const skCheckin = "CHECKIN"

func userPK(t, uid string) string     { return t + "#USER#" + uid }
func locationPK(t, lid string) string { return t + "#LOCATION#" + lid }

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// record is a check-in as stored.
type record struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	Checkin
}

func newRecord(c Checkin) record {
	return record{
		PK: userPK(c.TenantID, c.UserID), SK: skCheckin,
		GSI1PK: locationPK(c.TenantID, c.LocationID), GSI1SK: c.Created + "#" + c.ID,
		Checkin: c,
	}
}

// store is the check-in domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

// slot returns what the user's check-in slot holds, expired or not; ok is
// false when it is empty.
func (s *store) slot(ctx context.Context, tenantID, userID string) (c Checkin, ok bool, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(userPK(tenantID, userID), skCheckin), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Checkin{}, false, fmt.Errorf("get check-in of %s: %w", userID, err)
	}
	if out.Item == nil {
		return Checkin{}, false, nil
	}
	var r record
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return Checkin{}, false, fmt.Errorf("get check-in of %s: %w", userID, err)
	}
	return r.Checkin, true, nil
}

// putItem returns the Put of c into its user's slot, conditional on the
// slot still holding prevID ("" means empty).
func (s *store) putItem(c Checkin, prevID string) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(newRecord(c))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("marshal check-in: %w", err)
	}
	put := &types.Put{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		// A failed condition returns what the slot holds (see heldBy).
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if prevID != "" {
		put.ConditionExpression = aws.String("id = :prev")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":prev": &types.AttributeValueMemberS{Value: prevID}}
	}
	return types.TransactWriteItem{Put: put}, nil
}

// heldBy returns what the slot held when the Put of putItem, the first
// item of the transaction that failed with err, found its condition false:
// ok is false when the slot was empty by then.
func heldBy(err error) (c Checkin, ok bool, _ error) {
	item := ddb.CanceledItem(err, 0)
	if item == nil {
		return Checkin{}, false, nil
	}
	var r record
	if err := attributevalue.UnmarshalMap(item, &r); err != nil {
		return Checkin{}, false, fmt.Errorf("read check-in slot: %w", err)
	}
	return r.Checkin, true, nil
}

// deleteItem returns the Delete of check-in c, conditional on the slot
// still holding it.
func (s *store) deleteItem(c Checkin) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{
		TableName:                 aws.String(s.table),
		Key:                       key(userPK(c.TenantID, c.UserID), skCheckin),
		ConditionExpression:       aws.String("id = :id"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": &types.AttributeValueMemberS{Value: c.ID}},
	}}
}

// remove deletes the user's check-in slot unconditionally.
func (s *store) remove(ctx context.Context, tenantID, userID string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: key(userPK(tenantID, userID), skCheckin)})
	if err != nil {
		return fmt.Errorf("remove check-in of %s: %w", userID, err)
	}
	return nil
}

// conditionFailed reports whether a transaction failed on the condition of
// its first item (the check-in slot).
func conditionFailed(err error) bool {
	r := ddb.CanceledReasons(err)
	return len(r) > 0 && r[0] == "ConditionalCheckFailed"
}

// atLocation returns the page q of the live check-ins at a location, newest
// first, and how many live check-ins the location has in all.
func (s *store) atLocation(ctx context.Context, tenantID, locationID string, q PageQuery, now time.Time) ([]Checkin, int, error) {
	kc := expression.Key("gsi1pk").Equal(expression.Value(locationPK(tenantID, locationID)))
	live := expression.Name("expiresAt").GreaterThan(expression.Value(now.Unix()))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).WithFilter(live).Build()
	if err != nil {
		return nil, 0, fmt.Errorf("list check-ins at %s: %w", locationID, err)
	}
	in := dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("gsi1"),
		KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}
	total, err := s.count(ctx, in)
	if err != nil {
		return nil, 0, fmt.Errorf("count check-ins at %s: %w", locationID, err)
	}
	out := []Checkin{}
	if q.offset() >= total {
		return out, total, nil
	}
	in.ScanIndexForward = aws.Bool(false)
	items, _, err := ddb.QueryPage(ctx, s.db, in, nil, q.offset()+q.PerPage, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("list check-ins at %s: %w", locationID, err)
	}
	if q.offset() < len(items) {
		items = items[q.offset():]
	} else {
		items = nil
	}
	var recs []record
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return nil, 0, fmt.Errorf("list check-ins at %s: %w", locationID, err)
	}
	for _, r := range recs {
		out = append(out, r.Checkin)
	}
	return out, total, nil
}

// count returns the number of items a query keeps after its filter.
func (s *store) count(ctx context.Context, in dynamodb.QueryInput) (int, error) {
	in.Select = types.SelectCount
	n := 0
	for {
		out, err := s.db.Query(ctx, &in)
		if err != nil {
			return 0, err
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
