package webhook

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Webhooks table (every key starts with the tenant id;
// TTL attribute expiresAt):
//
//	pk = <t>#WHEP               sk = EP#<endpointId>               an endpoint
//	pk = <t>#WHEP               sk = COUNT                         how many endpoints the tenant has
//	pk = <t>#WHEV#<eventId>     sk = EVENT                         a logged event: its body, kept 31 days
//	pk = <t>#WHDL#<endpointId>#<shard>  sk = <eventId>#<replayId or ->  a delivery, kept 30 days after its last attempt
//
//	gsi1: gsi1pk = <t>#WHEVENTS#<shard>  gsi1sk = <timestamp>#<eventId>   logged events by time, for replay
//
// A tenant's endpoints share one partition (at most a few dozen, read
// together by every fan-out). Events are logged write-sharded over Shards
// index partitions by a hash of their scope, so that one user's events sit
// in one shard in time order while a busy tenant's writes spread. An
// endpoint's deliveries are write-sharded the same way, over
// deliveryShards partitions by a hash of the user id (the tenant's events
// in one), newest first by event id (ids start with the time): a burst of
// one tenant to one endpoint (one write per attempt, ids ever increasing,
// so DynamoDB's split for heat would not help one partition) spreads,
// while one user's deliveries, sent one after another, sit in one shard,
// so the list filtered by userId reads one partition. The list merges the
// shards (ddb.Merge).

const (
	skCount     = "COUNT"
	skEPPrefix  = "EP#"
	skEvent     = "EVENT"
	noReplay    = "-"
	eventShards = 8
	// deliveryShards is how many partitions an endpoint's deliveries
	// spread over.
	deliveryShards = 8
	// eventKept is how long a logged event is kept: the replay window and
	// a day of margin.
	eventKept = Kept + 24*time.Hour
)

func endpointsPK(t string) string { return t + "#WHEP" }
func eventPK(t, id string) string { return t + "#WHEV#" + id }

// deliveriesPK is the partition of an endpoint's deliveries of one
// shard; deliveryShard places a user's (or, for "", the tenant's).
func deliveriesPK(t, ep string, shard int) string {
	return t + "#WHDL#" + ep + "#" + strconv.Itoa(shard)
}
func deliveryShard(userID string) int { return hashShard(userID, deliveryShards) }
func deliverySK(ev, replay string) string {
	if replay == "" {
		replay = noReplay
	}
	return ev + "#" + replay
}
func eventsPK(t string, shard int) string { return t + "#WHEVENTS#" + strconv.Itoa(shard) }

// shardOf places a scope's events in one index shard.
func shardOf(scope string) int { return hashShard(scope, eventShards) }

// hashShard places s in one of n shards.
func hashShard(s string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return int(h.Sum32() % uint32(n))
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

func str(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }
func num(v int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// endpointRecord is an endpoint as stored, with its secrets.
type endpointRecord struct {
	PK          string   `dynamodbav:"pk"`
	SK          string   `dynamodbav:"sk"`
	ID          string   `dynamodbav:"id"`
	TenantID    string   `dynamodbav:"tenantId"`
	URL         string   `dynamodbav:"url"`
	EventTypes  []string `dynamodbav:"eventTypes"`
	Description string   `dynamodbav:"description,omitempty"`
	Enabled     bool     `dynamodbav:"enabled"`
	Secret      string   `dynamodbav:"secret"`
	// PreviousSecret signs deliveries too until PreviousUntil (unix
	// seconds), after a rotation.
	PreviousSecret string `dynamodbav:"previousSecret,omitempty"`
	PreviousUntil  int64  `dynamodbav:"previousUntil,omitempty"`
	// FailingSince (unix seconds) is the first failed attempt since the
	// endpoint's last success, 0 while it succeeds.
	FailingSince   int64  `dynamodbav:"failingSince,omitempty"`
	DisabledReason string `dynamodbav:"disabledReason,omitempty"`
	Created        string `dynamodbav:"created"`
	Updated        string `dynamodbav:"updated"`
	Version        int    `dynamodbav:"version"`
}

func (r endpointRecord) view() Endpoint {
	types := r.EventTypes
	if types == nil {
		types = []string{}
	}
	return Endpoint{
		ID: r.ID, URL: r.URL, EventTypes: types, Description: r.Description, Enabled: r.Enabled,
		DisabledReason: r.DisabledReason, Created: r.Created, Updated: r.Updated,
	}
}

// secrets returns the secrets a delivery at now is signed with: the
// current one, and the previous one during a rotation's overlap.
func (r endpointRecord) secrets(now time.Time) []string {
	if r.PreviousSecret != "" && now.Unix() < r.PreviousUntil {
		return []string{r.Secret, r.PreviousSecret}
	}
	return []string{r.Secret}
}

// wants reports whether the endpoint takes events of type typ.
func (r endpointRecord) wants(typ string) bool {
	if len(r.EventTypes) == 0 {
		return true
	}
	for _, t := range r.EventTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// eventRecord is a logged event.
type eventRecord struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	ID     string `dynamodbav:"id"`
	Type   string `dynamodbav:"type"`
	Scope  string `dynamodbav:"scope"`
	UserID string `dynamodbav:"userId,omitempty"`
	Seq    int64  `dynamodbav:"seq"`
	// Body is the event exactly as it is sent and signed.
	Body      string `dynamodbav:"body"`
	Timestamp string `dynamodbav:"timestamp"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

// deliveryRecord is a delivery as stored.
type deliveryRecord struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	Delivery
	// Queued (unix milliseconds) is when the event was queued for the
	// endpoint (the message's SentTimestamp): the retry window starts
	// there, not at the first attempt, so an event that waited behind a
	// failing one of the same user is not retried for seven more days.
	Queued int64 `dynamodbav:"queued"`
	// Due (unix milliseconds) is when the next attempt is due (PENDING).
	Due       int64 `dynamodbav:"due,omitempty"`
	ExpiresAt int64 `dynamodbav:"expiresAt"`
}

// errNoDelivery is a delivery not attempted yet.
var errNoDelivery = errors.New("no delivery yet")

// store is the webhook domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

const endpointItems ddb.Kind = "webhook endpoint"

func (s *store) records() ddb.Records {
	return ddb.Records{API: s.db, Table: s.table, Kind: endpointItems, NotFound: ErrNotFound, Conflict: ErrConcurrent}
}

// endpoints returns a tenant's endpoints in creation order (strongly
// consistent).
func (s *store) endpoints(ctx context.Context, t string) ([]endpointRecord, error) {
	var recs []endpointRecord
	if err := endpointItems.QueryAll(ctx, s.db, ddb.PrefixQuery(s.table, endpointsPK(t), skEPPrefix), &recs); err != nil {
		return nil, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return recs, nil
}

// endpoint reads one endpoint.
func (s *store) endpoint(ctx context.Context, t, id string) (endpointRecord, error) {
	var r endpointRecord
	err := s.records().Get(ctx, id, key(endpointsPK(t), skEPPrefix+id), &r)
	return r, err
}

// create stores a new endpoint while the tenant has fewer than max: the
// endpoint and the tenant's count are written together.
func (s *store) create(ctx context.Context, r endpointRecord, max int) error {
	r.PK, r.SK, r.Version = endpointsPK(r.TenantID), skEPPrefix+r.ID, 1
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		return fmt.Errorf("create webhook endpoint: %w", err)
	}
	tx := &ddb.Tx{}
	tx.Add("webhook", types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}})
	countAt := tx.Add("webhook", types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: key(endpointsPK(r.TenantID), skCount),
		UpdateExpression:          aws.String("ADD n :one"),
		ConditionExpression:       aws.String("attribute_not_exists(n) OR n < :max"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1), ":max": num(int64(max))},
	}})
	err = tx.Run(ctx, s.db)
	if ddb.Failed(err, countAt) {
		return ErrTooMany
	}
	if err != nil {
		return fmt.Errorf("create webhook endpoint: %w", err)
	}
	return nil
}

// put replaces an endpoint written at version-1 (see ddb.Records.Put).
func (s *store) put(ctx context.Context, r endpointRecord) error {
	r.PK, r.SK = endpointsPK(r.TenantID), skEPPrefix+r.ID
	return s.records().Put(ctx, r.ID, r, r.Version)
}

// delete removes an endpoint and counts it out.
func (s *store) delete(ctx context.Context, t, id string) error {
	tx := &ddb.Tx{}
	at := tx.Add("webhook", types.TransactWriteItem{Delete: &types.Delete{
		TableName: aws.String(s.table), Key: key(endpointsPK(t), skEPPrefix+id),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}})
	tx.Add("webhook", types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: key(endpointsPK(t), skCount),
		UpdateExpression:          aws.String("ADD n :minus"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":minus": num(-1)},
	}})
	err := tx.Run(ctx, s.db)
	if ddb.Failed(err, at) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete webhook endpoint %s: %w", id, err)
	}
	return nil
}

// failing records that an endpoint failed at now, unless it is failing
// already; it returns since when it has been failing.
func (s *store) failing(ctx context.Context, t, id string, now time.Time) (int64, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(endpointsPK(t), skEPPrefix+id),
		UpdateExpression:          aws.String("SET failingSince = if_not_exists(failingSince, :now)"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.Unix())},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if ddb.IsConditionFailed(err) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("webhook endpoint %s failing: %w", id, err)
	}
	var v struct {
		FailingSince int64 `dynamodbav:"failingSince"`
	}
	_ = attributevalue.UnmarshalMap(out.Attributes, &v)
	return v.FailingSince, nil
}

// succeeded clears an endpoint's failingSince.
func (s *store) succeeded(ctx context.Context, t, id string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(endpointsPK(t), skEPPrefix+id),
		UpdateExpression:    aws.String("REMOVE failingSince"),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if err != nil && !ddb.IsConditionFailed(err) {
		return fmt.Errorf("webhook endpoint %s succeeded: %w", id, err)
	}
	return nil
}

// disable turns an endpoint off for reason; it reports whether this call
// did (false when it was off already or is gone).
func (s *store) disable(ctx context.Context, t, id, reason string, now time.Time, stamp string) (bool, error) {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: key(endpointsPK(t), skEPPrefix+id),
		UpdateExpression:    aws.String("SET enabled = :off, disabledReason = :why, updated = :now, version = version + :one REMOVE failingSince"),
		ConditionExpression: aws.String("attribute_exists(pk) AND enabled = :on"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":off": &types.AttributeValueMemberBOOL{Value: false}, ":on": &types.AttributeValueMemberBOOL{Value: true},
			":why": str(reason), ":now": str(stamp), ":one": num(1),
		},
	})
	if ddb.IsConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("disable webhook endpoint %s: %w", id, err)
	}
	return true, nil
}

// newEventRecord returns the log item of an event.
func newEventRecord(t, scope string, e Event, body []byte, now time.Time) eventRecord {
	return eventRecord{
		PK: eventPK(t, e.ID), SK: skEvent,
		GSI1PK: eventsPK(t, shardOf(scope)), GSI1SK: e.Timestamp + "#" + e.ID,
		ID: e.ID, Type: e.Type, Scope: scope, UserID: e.UserID, Seq: e.Sequence, Body: string(body),
		Timestamp: e.Timestamp, ExpiresAt: now.Add(eventKept).Unix(),
	}
}

// logEvents writes event log items (unconditionally: an event's item is
// the same whenever it is written).
func (s *store) logEvents(ctx context.Context, recs []eventRecord) error {
	groups := make([][]types.TransactWriteItem, 0, len(recs))
	for _, r := range recs {
		item, err := attributevalue.MarshalMap(r)
		if err != nil {
			return fmt.Errorf("log webhook event %s: %w", r.ID, err)
		}
		groups = append(groups, []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String(s.table), Item: item}}})
	}
	if err := ddb.BatchWrite(ctx, s.db, groups, 4); err != nil {
		return fmt.Errorf("log webhook events: %w", err)
	}
	return nil
}

// event reads a logged event.
func (s *store) event(ctx context.Context, t, id string) (eventRecord, error) {
	var r eventRecord
	err := ddb.Records{API: s.db, Table: s.table, Kind: "webhook event", NotFound: errEventNotFound}.Get(ctx, id, key(eventPK(t, id), skEvent), &r)
	return r, err
}

// eventsIn calls each with the events logged in shard whose timestamps
// are in [from, to], oldest first.
func (s *store) eventsIn(ctx context.Context, t string, shard int, from, to string, each func(eventRecord) error) error {
	in := dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("gsi1"),
		KeyConditionExpression: aws.String("gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(eventsPK(t, shard)), ":from": str(from), ":to": str(to + "#~"),
		},
	}
	return ddb.QueryEach(ctx, s.db, in, func(it ddb.Item) error {
		var r eventRecord
		if err := attributevalue.UnmarshalMap(it, &r); err != nil {
			return fmt.Errorf("read webhook event: %w", err)
		}
		return each(r)
	})
}

// delivery reads a delivery; ok is false when there is none yet.
func (s *store) delivery(ctx context.Context, t, ep, userID, ev, replay string) (deliveryRecord, bool, error) {
	var r deliveryRecord
	err := ddb.Records{API: s.db, Table: s.table, Kind: "webhook delivery", NotFound: errNoDelivery}.Get(ctx, ev, key(deliveriesPK(t, ep, deliveryShard(userID)), deliverySK(ev, replay)), &r)
	if errors.Is(err, errNoDelivery) {
		return deliveryRecord{}, false, nil
	}
	return r, err == nil, err
}

// putDelivery writes a delivery's state after an attempt.
func (s *store) putDelivery(ctx context.Context, t, ep string, r deliveryRecord) error {
	r.PK, r.SK = deliveriesPK(t, ep, deliveryShard(r.UserID)), deliverySK(r.EventID, r.ReplayID)
	item, err := attributevalue.MarshalMap(r)
	if err != nil {
		return fmt.Errorf("write delivery of %s to %s: %w", r.EventID, ep, err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}); err != nil {
		return fmt.Errorf("write delivery of %s to %s: %w", r.EventID, ep, err)
	}
	return nil
}

// deliveryStreams are the queries of an endpoint's deliveries, newest
// first, one per shard: every shard, or only the user's when userID is
// set.
func (s *store) deliveryStreams(t, ep, userID string) []ddb.Stream {
	shards := []int{deliveryShard(userID)}
	if userID == "" {
		shards = make([]int, deliveryShards)
		for i := range shards {
			shards[i] = i
		}
	}
	out := make([]ddb.Stream, len(shards))
	for i, shard := range shards {
		out[i] = ddb.Stream{KeyAttr: []string{"pk", "sk"}, In: dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(deliveriesPK(t, ep, shard))},
			ScanIndexForward:          aws.Bool(false),
		}}
	}
	return out
}
