package action

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Actions table (every key starts with the tenant id;
// actions never expire):
//
//	pk = <t>#ACTION#<actionId>   sk = ACTION          the action (get by id)
//	pk = <t>#FEED#<scope>        sk = FEED            a scope's feed head (feed.go)
//
//	gsi1: gsi1pk = <t>#USER#<userId>          gsi1sk = <timestamp>#<actionId>   a user's actions
//	gsi2: gsi2pk = <t>#LOCATION#<locationId>  gsi2sk = <timestamp>#<actionId>   a location's actions
//	gsi3: gsi3pk = <t>#ACTIONS#<shard>        gsi3sk = <timestamp>#<actionId>   the tenant's actions
//
// gsi1 and gsi2 are sparse (only actions with a user, a location). Each index
// lists newest first with ScanIndexForward=false; the timestamp is the UTC
// fixed-width form, so it sorts as text. The tenant-wide index is write
// sharded: an action goes to one of Shards partitions by a hash of its id,
// so a busy tenant's writes spread over Shards index partitions (each
// takes about 1,000 writes per second) instead of one, and the tenant list
// and the export read the shards at once and merge them newest first
// (ddb.Merge). Time filters are key conditions on every shard, never a
// Scan.

const skAction = "ACTION"

func actionPK(t, id string) string    { return t + "#ACTION#" + id }
func userPK(t, uid string) string     { return t + "#USER#" + uid }
func locationPK(t, lid string) string { return t + "#LOCATION#" + lid }
func tenantPK(t string, shard int) string {
	return t + "#ACTIONS#" + strconv.Itoa(shard)
}

// Shards is how many partitions the tenant-wide index spreads a tenant's
// actions over.
const Shards = 8

// shardOf places an action in a shard by a hash of its id.
func shardOf(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % Shards)
}
func sortKey(ts, id string) string { return ts + "#" + id }

// record is an action as stored.
type record struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk,omitempty"`
	GSI1SK string `dynamodbav:"gsi1sk,omitempty"`
	GSI2PK string `dynamodbav:"gsi2pk,omitempty"`
	GSI2SK string `dynamodbav:"gsi2sk,omitempty"`
	GSI3PK string `dynamodbav:"gsi3pk"`
	GSI3SK string `dynamodbav:"gsi3sk"`

	Action
}

func newRecord(a Action) record {
	sk := sortKey(a.When.Timestamp, a.ID)
	r := record{
		PK: actionPK(a.TenantID, a.ID), SK: skAction,
		GSI3PK: tenantPK(a.TenantID, shardOf(a.ID)), GSI3SK: sk,
		Action: a,
	}
	if a.Context.User != nil && a.Context.User.ID != "" {
		r.GSI1PK, r.GSI1SK = userPK(a.TenantID, a.Context.User.ID), sk
	}
	if a.Context.Location != nil && a.Context.Location.ID != "" {
		r.GSI2PK, r.GSI2SK = locationPK(a.TenantID, a.Context.Location.ID), sk
	}
	return r
}

// Recorder appends actions to the Actions table. The reactions a
// function registers on it (OnRecorded) run, before a request answers, on
// the actions the services that record through it report (React).
type Recorder struct {
	DB    ddb.API
	Table string
	// reactions are the ones OnRecorded registered, in order.
	reactions []Reactions
}

// put normalizes *a (an empty id gets a new one) and returns the
// conditional Put that stores it: a second Put of one id fails.
func (r *Recorder) put(a *Action) (types.TransactWriteItem, error) {
	if err := a.normalize(); err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("record action %s: %w", a.Type, err)
	}
	item, err := attributevalue.MarshalMap(newRecord(*a))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("record action %s: marshal: %w", a.Type, err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName:           aws.String(r.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}, nil
}

// Record adds a to tx, the transaction of the change that causes it, so
// that the change and its action are written together or not at all: the
// action's conditional Put and its scope's feed head, merged with the
// head of the other actions tx records for the scope (two actions of one
// user in one transaction: one head update with both events, in the order
// recorded). It returns the action as stored (an empty a.ID gets a new
// id). Both the Put and the head hold a as it is now: changing its
// metadata afterwards records nothing more.
func (r *Recorder) Record(tx *ddb.Tx, a Action) (Action, error) {
	put, err := r.put(&a)
	if err != nil {
		return Action{}, err
	}
	// The event is marshalled now, so that a change of a's metadata map
	// after Record changes neither its Put nor its head.
	ev, err := event(a)
	if err != nil {
		return Action{}, err
	}
	tx.Add("action", put)
	scope := ScopeOf(a)
	_, err = tx.Merge("action", ddb.Key(r.Table, feedKey(a.TenantID, scope)), func(prev any) (types.TransactWriteItem, any, error) {
		events, _ := prev.([]types.AttributeValue)
		events = append(events[:len(events):len(events)], ev)
		return r.headItem(a.TenantID, scope, events), events, nil
	})
	if err != nil {
		return Action{}, fmt.Errorf("record action %s: %w", a.Type, err)
	}
	return a, nil
}

// TransactItems returns the items that record as, for a change that
// builds its TransactWriteItems itself: the actions' conditional Puts in
// order, followed by one feed head update per scope (see Heads). An empty
// id gets a new one: callers that need the ids set them first.
func (r *Recorder) TransactItems(as ...Action) ([]types.TransactWriteItem, error) {
	puts, norm, err := r.Puts(as...)
	if err != nil {
		return nil, err
	}
	heads, err := r.Heads(norm...)
	if err != nil {
		return nil, err
	}
	return append(puts, heads...), nil
}

// Puts returns the conditional Puts of as and the actions normalized (an
// empty id gets a new one), without their heads: for a job whose
// transactions hold the actions of many rows (the CSV imports), which
// adds one head update per scope to each transaction (Heads of exactly
// the actions whose Puts it holds; FeedKey names them for the job's
// shared writes). Everything else uses Record or TransactItems, so that
// no action is written without its head.
func (r *Recorder) Puts(as ...Action) ([]types.TransactWriteItem, []Action, error) {
	items := make([]types.TransactWriteItem, len(as))
	norm := make([]Action, len(as))
	for i, a := range as {
		it, err := r.put(&a)
		if err != nil {
			return nil, nil, err
		}
		items[i], norm[i] = it, a
	}
	return items, norm, nil
}

// Put records a on its own (for changes that are not transactions): its
// Put and its head in one transaction. A second Put of the same action id
// is a no-op (its condition cancels the transaction, so the head does not
// move), so a retried call records the action once. It never carries the
// request's Idempotency-Key claim.
func (r *Recorder) Put(ctx context.Context, a Action) error {
	items, err := r.TransactItems(a)
	if err != nil {
		return err
	}
	err = ddb.Transact(ddb.WithoutClaim(ctx), r.DB, items)
	if err != nil && !ddb.Failed(err, 0) {
		return fmt.Errorf("record action %s: %w", a.Type, err)
	}
	return nil
}

// ByUser returns up to limit of a user's actions, newest first. It is the
// start of the user's action list; the paged, filtered list arrives with
// the actions function.
func (r *Recorder) ByUser(ctx context.Context, tenantID, userID string, limit int) ([]Action, error) {
	return r.newest(ctx, "gsi1", "gsi1pk", userPK(tenantID, userID), limit)
}

// ByLocation returns up to limit of a location's actions, newest first.
func (r *Recorder) ByLocation(ctx context.Context, tenantID, locationID string, limit int) ([]Action, error) {
	return r.newest(ctx, "gsi2", "gsi2pk", locationPK(tenantID, locationID), limit)
}

func (r *Recorder) newest(ctx context.Context, index, attr, pk string, limit int) ([]Action, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key(attr).Equal(expression.Value(pk))).Build()
	if err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	items, _, err := ddb.QueryPage(ctx, r.DB, dynamodb.QueryInput{
		TableName: aws.String(r.Table), IndexName: aws.String(index),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(),
		ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(false),
	}, nil, limit, nil)
	if err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	var recs []record
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return nil, fmt.Errorf("list actions: %w", err)
	}
	out := make([]Action, len(recs))
	for i, rec := range recs {
		out[i] = rec.Action
	}
	return out, nil
}

// RedactUser erases the name of a deleted user from every action that
// names them (context.user.name), and removes the events their feed head
// keeps (copies of their last actions; its sequence stays). The user id
// stays, so history keeps a consistent user; each update is idempotent,
// so a retry finishes the job.
func (r *Recorder) RedactUser(ctx context.Context, tenantID, userID string) error {
	if err := r.redactActions(ctx, tenantID, userID); err != nil {
		return err
	}
	_, err := r.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(r.Table),
		Key:                      feedKey(tenantID, "USER#"+userID),
		UpdateExpression:         aws.String("REMOVE #ev"),
		ConditionExpression:      aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames: map[string]string{"#ev": "events"},
	})
	if err != nil && !ddb.IsConditionFailed(err) {
		return fmt.Errorf("redact the feed head of %s: %w", userID, err)
	}
	return nil
}

// redactActions erases the name of a deleted user from their actions.
func (r *Recorder) redactActions(ctx context.Context, tenantID, userID string) error {
	var start map[string]types.AttributeValue
	for {
		out, err := r.DB.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(r.Table),
			IndexName:                 aws.String("gsi1"),
			KeyConditionExpression:    aws.String("gsi1pk = :u"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: userPK(tenantID, userID)}},
			ProjectionExpression:      aws.String("pk, sk"),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return fmt.Errorf("list actions of %s: %w", userID, err)
		}
		for _, it := range out.Items {
			_, err := r.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
				TableName:                 aws.String(r.Table),
				Key:                       map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]},
				UpdateExpression:          aws.String("SET #c.#u.#n = :empty"),
				ConditionExpression:       aws.String("attribute_exists(#c.#u)"),
				ExpressionAttributeNames:  map[string]string{"#c": "context", "#u": "user", "#n": "name"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":empty": &types.AttributeValueMemberS{Value: ""}},
			})
			if err != nil && !ddb.IsConditionFailed(err) {
				return fmt.Errorf("redact action of %s: %w", userID, err)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		start = out.LastEvaluatedKey
	}
}
