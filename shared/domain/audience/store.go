package audience

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Audiences table (every key starts with the tenant id,
// except the directory of tenants with expiring segments):
//
//	pk = <t>#SEGMENTS            sk = SEGMENT#<segmentId>   a segment
//	pk = <t>#SEGMENT#<segmentId> sk = MEMBER#<userId>       a membership
//	pk = EXPIRY#TENANTS          sk = <tenantId>            a tenant with SCHEDULED or ROLLING segments
//
//	gsi1: gsi1pk = <t>#USER#<userId>  gsi1sk = SEGMENT#<segmentId>             a user's memberships
//	gsi2: gsi2pk = <t>#EXPIRES        gsi2sk = <endsAt>#<segmentId>#<userId>    memberships by end (sparse)
//
// A membership carries endsAt (epoch seconds, absent when it never ends)
// and purgeAt (a week later) for DynamoDB TTL: the expiry run removes it
// first and records SEGMENT_LEFT; TTL only cleans up what a run missed.
// Reads treat a membership whose endsAt has passed as absent. The daily run
// lists the directory (one Query) and, per tenant, the memberships whose
// end has passed (one Query of gsi2 up to now): never a Scan.

const (
	skSegmentPrefix = "SEGMENT#"
	skMemberPrefix  = "MEMBER#"
	directoryPK     = "EXPIRY#TENANTS"
	purgeAfter      = 7 * 24 * time.Hour
)

func segmentsPK(t string) string            { return t + "#SEGMENTS" }
func segmentSK(id string) string            { return skSegmentPrefix + id }
func membersPK(t, sid string) string        { return t + "#SEGMENT#" + sid }
func memberSK(uid string) string            { return skMemberPrefix + uid }
func userPK(t, uid string) string           { return t + "#USER#" + uid }
func expiresPK(t string) string             { return t + "#EXPIRES" }
func expiresSK(end, sid, uid string) string { return end + "#" + sid + "#" + uid }

func str(s string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: s} }
func num(n int64) *types.AttributeValueMemberN {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func itemKey(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": str(pk), "sk": str(sk)}
}

// segmentRecord is a segment as stored.
type segmentRecord struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	ID        string `dynamodbav:"id"`
	TenantID  string `dynamodbav:"tenantId"`
	Body      string `dynamodbav:"body"`
	Created   string `dynamodbav:"created"`
	UpdatedAt string `dynamodbav:"updatedAt"`
	Version   int    `dynamodbav:"version"`
}

func (r segmentRecord) segment() (Segment, error) {
	s := Segment{ID: r.ID, TenantID: r.TenantID, Created: r.Created, UpdatedAt: r.UpdatedAt}
	if err := json.Unmarshal([]byte(r.Body), &s.Definition); err != nil {
		return Segment{}, fmt.Errorf("decode segment %s: %w", r.ID, err)
	}
	return s, nil
}

// membership is a membership as stored.
type membership struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	GSI1PK    string `dynamodbav:"gsi1pk"`
	GSI1SK    string `dynamodbav:"gsi1sk"`
	GSI2PK    string `dynamodbav:"gsi2pk,omitempty"`
	GSI2SK    string `dynamodbav:"gsi2sk,omitempty"`
	TenantID  string `dynamodbav:"tenantId"`
	SegmentID string `dynamodbav:"segmentId"`
	UserID    string `dynamodbav:"userId"`
	JoinedAt  string `dynamodbav:"joinedAt"`
	RenewedAt string `dynamodbav:"renewedAt,omitempty"`
	// EndsAt is when the membership ends (epoch seconds; 0: never).
	EndsAt  int64 `dynamodbav:"endsAt,omitempty"`
	PurgeAt int64 `dynamodbav:"purgeAt,omitempty"`
}

func newMembership(t, sid, uid string, joined time.Time, end time.Time) membership {
	m := membership{
		PK: membersPK(t, sid), SK: memberSK(uid), GSI1PK: userPK(t, uid), GSI1SK: segmentSK(sid),
		TenantID: t, SegmentID: sid, UserID: uid, JoinedAt: clock.Stamp(joined),
	}
	m.setEnd(end)
	return m
}

// setEnd sets the end of a membership (zero: never) and its index keys.
func (m *membership) setEnd(end time.Time) {
	if end.IsZero() {
		m.EndsAt, m.PurgeAt, m.GSI2PK, m.GSI2SK = 0, 0, "", ""
		return
	}
	m.EndsAt, m.PurgeAt = end.Unix(), end.Add(purgeAfter).Unix()
	m.GSI2PK, m.GSI2SK = expiresPK(m.TenantID), expiresSK(clock.Stamp(end), m.SegmentID, m.UserID)
}

// live reports whether the membership has not ended at now.
func (m membership) live(now time.Time) bool { return m.EndsAt == 0 || m.EndsAt > now.Unix() }

// store is the audience domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

func (s *store) getSegment(ctx context.Context, t, id string) (Segment, int, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: itemKey(segmentsPK(t), segmentSK(id)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Segment{}, 0, fmt.Errorf("get segment %s: %w", id, err)
	}
	if out.Item == nil {
		return Segment{}, 0, fmt.Errorf("get segment %s: %w", id, ErrNotFound)
	}
	var rec segmentRecord
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return Segment{}, 0, fmt.Errorf("get segment %s: %w", id, err)
	}
	seg, err := rec.segment()
	return seg, rec.Version, err
}

// segmentPut returns the conditional Put of a segment: a create for
// version 1, else an update conditional on the previous version.
func (s *store) segmentPut(seg Segment, version int) (types.TransactWriteItem, error) {
	body, err := json.Marshal(seg.Definition)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode segment: %w", err)
	}
	item, err := attributevalue.MarshalMap(segmentRecord{
		PK: segmentsPK(seg.TenantID), SK: segmentSK(seg.ID), ID: seg.ID, TenantID: seg.TenantID, Body: string(body),
		Created: seg.Created, UpdatedAt: seg.UpdatedAt, Version: version,
	})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode segment: %w", err)
	}
	put := &types.Put{TableName: aws.String(s.table), Item: item}
	if version == 1 {
		put.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		put.ConditionExpression = aws.String("version = :v")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":v": num(int64(version - 1))}
	}
	return types.TransactWriteItem{Put: put}, nil
}

// directoryPut registers a tenant with expiring segments (idempotent).
func (s *store) directoryPut(t string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item:      map[string]types.AttributeValue{"pk": str(directoryPK), "sk": str(t), "tenantId": str(t)},
	}}
}

// segmentsQuery lists a tenant's segments in creation order.
func (s *store) segmentsQuery(t string) dynamodb.QueryInput {
	return dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(segmentsPK(t)), ":sk": str(skSegmentPrefix),
		},
		ConsistentRead: aws.Bool(true),
	}
}

// membersQuery lists a segment's memberships.
func (s *store) membersQuery(t, sid string) dynamodb.QueryInput {
	return dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(membersPK(t, sid)), ":sk": str(skMemberPrefix),
		},
		ConsistentRead: aws.Bool(true),
	}
}

// getMemberships reads the memberships of users in a segment, by user id.
func (s *store) getMemberships(ctx context.Context, t, sid string, uids []string) (map[string]membership, error) {
	out := map[string]membership{}
	for i := 0; i < len(uids); i += 100 {
		var keys []map[string]types.AttributeValue
		for _, uid := range uids[i:min(i+100, len(uids))] {
			keys = append(keys, itemKey(membersPK(t, sid), memberSK(uid)))
		}
		req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for len(req) > 0 {
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("read memberships: %w", err)
			}
			var ms []membership
			if err := attributevalue.UnmarshalListOfMaps(res.Responses[s.table], &ms); err != nil {
				return nil, fmt.Errorf("read memberships: %w", err)
			}
			for _, m := range ms {
				out[m.UserID] = m
			}
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}

// ofUser returns a user's memberships (live or not).
func (s *store) ofUser(ctx context.Context, t, uid string) ([]membership, error) {
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("gsi1"),
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(userPK(t, uid))},
	}
	var out []membership
	for {
		page, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("segments of %s: %w", uid, err)
		}
		var ms []membership
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &ms); err != nil {
			return nil, fmt.Errorf("segments of %s: %w", uid, err)
		}
		out = append(out, ms...)
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// memberPut returns the Put of a new membership, conditional on the user
// not being a live member (absent, or ended at now).
func (s *store) memberPut(m membership, now time.Time) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(m)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode membership: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table), Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR (attribute_exists(endsAt) AND endsAt <= :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.Unix())},
	}}, nil
}

// memberRenew returns the Update that moves a live membership's end
// (ROLLING), conditional on its end being unchanged since read.
func (s *store) memberRenew(m membership, old int64, now time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:           aws.String(s.table),
		Key:                 itemKey(m.PK, m.SK),
		UpdateExpression:    aws.String("SET endsAt = :end, purgeAt = :purge, gsi2pk = :g2pk, gsi2sk = :g2sk, renewedAt = :now"),
		ConditionExpression: aws.String("endsAt = :old AND endsAt > :nowEpoch"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":end": num(m.EndsAt), ":purge": num(m.PurgeAt), ":g2pk": str(m.GSI2PK), ":g2sk": str(m.GSI2SK),
			":now": str(clock.Stamp(now)), ":old": num(old), ":nowEpoch": num(now.Unix()),
		},
	}}
}

// memberDelete returns the Delete of a membership. With endsAt set, it is
// conditional on the membership ending exactly then (the expiry run: not
// renewed meanwhile); else on the membership being live at now.
func (s *store) memberDelete(t, sid, uid string, endsAt int64, now time.Time) types.TransactWriteItem {
	d := &types.Delete{TableName: aws.String(s.table), Key: itemKey(membersPK(t, sid), memberSK(uid))}
	if endsAt != 0 {
		d.ConditionExpression = aws.String("endsAt = :end")
		d.ExpressionAttributeValues = map[string]types.AttributeValue{":end": num(endsAt)}
	} else {
		d.ConditionExpression = aws.String("attribute_exists(pk) AND (attribute_not_exists(endsAt) OR endsAt > :now)")
		d.ExpressionAttributeValues = map[string]types.AttributeValue{":now": num(now.Unix())}
	}
	return types.TransactWriteItem{Delete: d}
}

// memberCheck is a ConditionCheck that a user is a live member at now.
func (s *store) memberCheck(t, sid, uid string, now time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.table),
		Key:                       itemKey(membersPK(t, sid), memberSK(uid)),
		ConditionExpression:       aws.String("attribute_exists(pk) AND (attribute_not_exists(endsAt) OR endsAt > :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": num(now.Unix())},
	}}
}

// deleteSegment deletes a segment item (ErrNotFound when it is gone).
func (s *store) deleteSegment(ctx context.Context, t, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: itemKey(segmentsPK(t), segmentSK(id)),
		ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if ddb.IsConditionFailed(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete segment %s: %w", id, err)
	}
	return nil
}

// deleteMembers deletes every membership of a segment, 25 at a time.
func (s *store) deleteMembers(ctx context.Context, t, sid string) error {
	in := s.membersQuery(t, sid)
	in.ProjectionExpression = aws.String("pk, sk")
	for {
		page, err := s.db.Query(ctx, &in)
		if err != nil {
			return fmt.Errorf("list members of %s: %w", sid, err)
		}
		for i := 0; i < len(page.Items); i += 25 {
			var reqs []types.WriteRequest
			for _, it := range page.Items[i:min(i+25, len(page.Items))] {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]}}})
			}
			batch := map[string][]types.WriteRequest{s.table: reqs}
			for attempt := 0; len(batch) > 0; attempt++ {
				if attempt > 8 {
					return fmt.Errorf("delete members of %s: unprocessed items remain", sid)
				}
				out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: batch})
				if err != nil {
					return fmt.Errorf("delete members of %s: %w", sid, err)
				}
				batch = out.UnprocessedItems
				if len(batch) > 0 {
					time.Sleep(time.Duration(20*(attempt+1)) * time.Millisecond)
				}
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
