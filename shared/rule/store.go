package rule

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
	"github.com/loyalty-platform/platform/shared/ddb"
)

// Item layout of the Audiences table for rules (every key starts with the
// tenant id):
//
//	pk = <t>#RULES                               sk = RULE#<ruleId>   a rule
//	pk = <t>#RULEAPPLIED#<ruleId>#<actionId>     sk = APPLIED         the rule was applied to the action
//	                                             sk = APPLIED#<g>     its group g of effects was (see effectGroups)
//
// A tenant's rules share one partition: every action reads them together
// (one Query). The applied marker is written, conditional on being new, in
// the transaction of the rule's effects: a (rule, action) applies at most
// once whichever path (the request, the stream consumer) gets there first
// and however often the stream delivers the action. Markers carry purgeAt
// (TTL) 30 days on, long after the stream (24 hours) could deliver again.

const (
	skRulePrefix = "RULE#"
	markerTTL    = 30 * 24 * time.Hour
)

func rulesPK(t string) string { return t + "#RULES" }
func ruleSK(id string) string { return skRulePrefix + id }
func markerPK(t, ruleID, actionID string) string {
	return t + "#RULEAPPLIED#" + ruleID + "#" + actionID
}

func str(v string) *types.AttributeValueMemberS { return &types.AttributeValueMemberS{Value: v} }

type record struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	ID        string `dynamodbav:"id"`
	TenantID  string `dynamodbav:"tenantId"`
	Enabled   bool   `dynamodbav:"enabled"`
	Trigger   string `dynamodbav:"trigger"`
	Body      string `dynamodbav:"body"`
	Created   string `dynamodbav:"created"`
	UpdatedAt string `dynamodbav:"updatedAt"`
	Version   int    `dynamodbav:"version"`
}

func (r record) rule() (Rule, error) {
	out := Rule{ID: r.ID, TenantID: r.TenantID, Enabled: r.Enabled, Created: r.Created, UpdatedAt: r.UpdatedAt}
	if err := json.Unmarshal([]byte(r.Body), &out.Definition); err != nil {
		return Rule{}, fmt.Errorf("decode rule %s: %w", r.ID, err)
	}
	return out, nil
}

type store struct {
	db    ddb.API
	table string
}

func (s *store) key(t, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": str(rulesPK(t)), "sk": str(ruleSK(id))}
}

func (s *store) get(ctx context.Context, t, id string) (Rule, int, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: s.key(t, id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Rule{}, 0, fmt.Errorf("get rule %s: %w", id, err)
	}
	if out.Item == nil {
		return Rule{}, 0, ErrNotFound
	}
	var rec record
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return Rule{}, 0, fmt.Errorf("get rule %s: %w", id, err)
	}
	r, err := rec.rule()
	return r, rec.Version, err
}

// put writes a rule: new for version 1, else conditional on the version
// read.
func (s *store) put(ctx context.Context, r Rule, version int) error {
	body, err := json.Marshal(r.Definition)
	if err != nil {
		return fmt.Errorf("encode rule: %w", err)
	}
	item, err := attributevalue.MarshalMap(record{
		PK: rulesPK(r.TenantID), SK: ruleSK(r.ID), ID: r.ID, TenantID: r.TenantID, Enabled: r.Enabled, Trigger: r.Trigger,
		Body: string(body), Created: r.Created, UpdatedAt: r.UpdatedAt, Version: version,
	})
	if err != nil {
		return fmt.Errorf("encode rule: %w", err)
	}
	in := &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item}
	if version == 1 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("version = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(version - 1)}}
	}
	_, err = s.db.PutItem(ctx, in)
	if ddb.IsConditionFailed(err) {
		return ErrConcurrent
	}
	return err
}

func (s *store) delete(ctx context.Context, t, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: s.key(t, id), ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if ddb.IsConditionFailed(err) {
		return ErrNotFound
	}
	return err
}

func (s *store) query(t string) dynamodb.QueryInput {
	return dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(rulesPK(t)), ":sk": str(skRulePrefix),
		},
		ConsistentRead: aws.Bool(true),
	}
}

// all returns every rule of a tenant.
func (s *store) all(ctx context.Context, t string) ([]Rule, error) {
	in := s.query(t)
	var out []Rule
	for {
		page, err := s.db.Query(ctx, &in)
		if err != nil {
			return nil, fmt.Errorf("list rules: %w", err)
		}
		for _, it := range page.Items {
			var rec record
			if err := attributevalue.UnmarshalMap(it, &rec); err != nil {
				return nil, fmt.Errorf("list rules: %w", err)
			}
			r, err := rec.rule()
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// markerSK is the sort key of the applied marker of a rule's group of
// effects (see effectGroups): APPLIED for the first (the only one of most
// rules), APPLIED#<g> for the others.
func markerSK(group int) string {
	if group == 0 {
		return "APPLIED"
	}
	return "APPLIED#" + strconv.Itoa(group)
}

// marker is the Put of the applied marker of (rule, action) for the
// rule's group of effects.
func (s *store) marker(t, ruleID, actionID string, group int, now time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			"pk": str(markerPK(t, ruleID, actionID)), "sk": str(markerSK(group)), "appliedAt": str(now.UTC().Format(time.RFC3339Nano)),
			"purgeAt": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(markerTTL).Unix(), 10)},
		},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}
}

// applied tells whether the marker of (rule, action) for the rule's group
// of effects exists: the group applied already.
func (s *store) applied(ctx context.Context, t, ruleID, actionID string, group int) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("pk"),
		Key: map[string]types.AttributeValue{"pk": str(markerPK(t, ruleID, actionID)), "sk": str(markerSK(group))},
	})
	if err != nil {
		return false, fmt.Errorf("read the applied marker of rule %s: %w", ruleID, err)
	}
	return out.Item != nil, nil
}
