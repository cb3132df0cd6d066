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
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Audiences table for rules (every key starts with the
// tenant id):
//
//	pk = <t>#RULES                               sk = RULE#<ruleId>   a rule
//	                                             sk = VERSION         the tenant's rules version (rulesVersion)
//	pk = <t>#RULEAPPLIED#<ruleId>#<originId>     sk = APPLIED         the rule was applied in the chain of the originating action
//	                                             sk = APPLIED#<g>     its group g of effects was (see effectGroups)
//	pk = <t>#RULEORIGIN#<originId>               sk = BUDGET          the effects applied in that chain (used), and the
//	                                                                  RULES_BUDGET_EXCEEDED recorded for it (exceededActionId)
//
// A tenant's rules share one partition: every action reads them together
// (one Query). Every write of a rule (create, update, delete) then adds one
// to the version item's rulesVersion (bump), so a warm container that
// cached the rules knows with one GetItem whether they changed. The applied marker is written, conditional on being new, in
// the transaction of the rule's effects, and names the action the rule
// applied on (actionId): a rule applies at most once per originating
// action (so at most once per (rule, action)) whichever path (the request,
// the stream consumer) gets there first and however often the stream
// delivers the actions of the chain. The origin of an action a request
// recorded is the action itself, so its markers keep the key they always
// had; a marker written before markers named their action (no actionId)
// is the origin's own. The budget item's used count grows in the same
// transactions, conditional on staying within the tenant's rulesBudget.
// Markers and budget items carry purgeAt (TTL) 30 days on, long after the
// stream (24 hours) could deliver again.

const (
	skRulePrefix = "RULE#"
	markerTTL    = 30 * 24 * time.Hour
)

func rulesPK(t string) string { return t + "#RULES" }
func ruleSK(id string) string { return skRulePrefix + id }
func markerPK(t, ruleID, originID string) string {
	return t + "#RULEAPPLIED#" + ruleID + "#" + originID
}
func originPK(t, originID string) string { return t + "#RULEORIGIN#" + originID }

const (
	skBudget  = "BUDGET"
	skVersion = "VERSION"
)

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
	in := &types.Put{TableName: aws.String(s.table), Item: item}
	if version == 1 {
		in.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		in.ConditionExpression = aws.String("version = :v")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(version - 1)}}
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: in.TableName, Item: in.Item,
		ConditionExpression: in.ConditionExpression, ExpressionAttributeValues: in.ExpressionAttributeValues})
	if ddb.IsConditionFailed(err) {
		return ErrConcurrent
	}
	if err != nil {
		return fmt.Errorf("write rule %s: %w", r.ID, err)
	}
	return s.bump(ctx, r.TenantID)
}

// delete deletes a rule, then bumps the tenant's rules version.
func (s *store) delete(ctx context.Context, t, id string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: s.key(t, id), ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if ddb.IsConditionFailed(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("delete rule %s: %w", id, err)
	}
	return s.bump(ctx, t)
}

// versionKey is the key of a tenant's rules version item.
func (s *store) versionKey(t string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": str(rulesPK(t)), "sk": str(skVersion)}
}

// bump adds one to a tenant's rules version, after every write of a rule
// and before its answer. It is a write of its own, after the rule's: a
// reader that sees the new version (it reads the version, then the rules)
// then sees the rule's write, which a transaction of both would not
// promise (a Query is not isolated from a transaction in progress). A
// crash between the two leaves the change to the cache's window.
func (s *store) bump(ctx context.Context, t string) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: s.versionKey(t),
		UpdateExpression:          aws.String("ADD rulesVersion :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	if err != nil {
		return fmt.Errorf("bump the rules version of %s: %w", t, err)
	}
	return nil
}

// version reads a tenant's rules version (0 for a tenant whose rules were
// never written since versions were kept).
func (s *store) version(ctx context.Context, t string) (int64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: s.versionKey(t), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("rulesVersion"),
	})
	if err != nil {
		return 0, fmt.Errorf("read the rules version of %s: %w", t, err)
	}
	var rec struct {
		Version int64 `dynamodbav:"rulesVersion"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return 0, fmt.Errorf("read the rules version of %s: %w", t, err)
	}
	return rec.Version, nil
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

// marker is the Put of the applied marker of a rule in the chain of
// originID for the rule's group of effects, applied on actionID.
func (s *store) marker(t, ruleID, originID, actionID string, group int, now time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item: map[string]types.AttributeValue{
			"pk": str(markerPK(t, ruleID, originID)), "sk": str(markerSK(group)), "appliedAt": str(now.UTC().Format(time.RFC3339Nano)),
			"actionId": str(actionID),
			"purgeAt":  &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(markerTTL).Unix(), 10)},
		},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}
}

// owned is the ConditionCheck that the rule's first group in the chain of
// originID was applied on actionID (the later groups of one rule apply on
// the action its first did).
func (s *store) owned(t, ruleID, originID, actionID string) types.TransactWriteItem {
	cond := "actionId = :a"
	if actionID == originID {
		cond = "actionId = :a OR (attribute_exists(pk) AND attribute_not_exists(actionId))" // a marker older than actionId
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.table),
		Key:                       map[string]types.AttributeValue{"pk": str(markerPK(t, ruleID, originID)), "sk": str(markerSK(0))},
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": str(actionID)},
	}}
}

// claim reads the first group's marker of a rule in the chain of
// originID: claimed tells whether it exists, owner the action it names
// (the origin for a marker older than actionId).
func (s *store) claim(ctx context.Context, t, ruleID, originID string) (owner string, claimed bool, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("pk, actionId"),
		Key: map[string]types.AttributeValue{"pk": str(markerPK(t, ruleID, originID)), "sk": str(markerSK(0))},
	})
	if err != nil {
		return "", false, fmt.Errorf("read the applied marker of rule %s: %w", ruleID, err)
	}
	if out.Item == nil {
		return "", false, nil
	}
	owner = originID
	if v, ok := out.Item["actionId"].(*types.AttributeValueMemberS); ok {
		owner = v.Value
	}
	return owner, true, nil
}

// claimed is what claim reads of a rule's first marker.
type claimed struct {
	owner string
	ok    bool
}

// claims reads the first group's markers of several rules in the chain of
// originID (as claim does, consistently, up to 100 keys a call), by rule
// id.
func (s *store) claims(ctx context.Context, t string, ruleIDs []string, originID string) (map[string]claimed, error) {
	out := make(map[string]claimed, len(ruleIDs))
	byPK := make(map[string]string, len(ruleIDs))
	for start := 0; start < len(ruleIDs); start += 100 {
		var keys []map[string]types.AttributeValue
		for _, id := range ruleIDs[start:min(start+100, len(ruleIDs))] {
			pk := markerPK(t, id, originID)
			byPK[pk] = id
			out[id] = claimed{}
			keys = append(keys, map[string]types.AttributeValue{"pk": str(pk), "sk": str(markerSK(0))})
		}
		req := map[string]types.KeysAndAttributes{s.table: {Keys: keys, ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("pk, actionId")}}
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt == 8 {
				return nil, fmt.Errorf("read the applied markers of %d rules: unprocessed keys remain", len(ruleIDs))
			}
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("read the applied markers of %d rules: %w", len(ruleIDs), err)
			}
			for _, it := range res.Responses[s.table] {
				pk, _ := it["pk"].(*types.AttributeValueMemberS)
				if pk == nil {
					continue
				}
				cl := claimed{owner: originID, ok: true}
				if v, ok := it["actionId"].(*types.AttributeValueMemberS); ok {
					cl.owner = v.Value
				}
				out[byPK[pk.Value]] = cl
			}
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}

// applied tells whether the marker of a rule in the chain of originID for
// the rule's group of effects exists: the group applied already.
func (s *store) applied(ctx context.Context, t, ruleID, originID string, group int) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("pk"),
		Key: map[string]types.AttributeValue{"pk": str(markerPK(t, ruleID, originID)), "sk": str(markerSK(group))},
	})
	if err != nil {
		return false, fmt.Errorf("read the applied marker of rule %s: %w", ruleID, err)
	}
	return out.Item != nil, nil
}

func (s *store) budgetKey(t, originID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": str(originPK(t, originID)), "sk": str(skBudget)}
}

// budgetUsed reads how many effects were applied in the chain of
// originID, and whether its RULES_BUDGET_EXCEEDED was recorded.
func (s *store) budgetUsed(ctx context.Context, t, originID string) (used int, exceeded bool, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), ConsistentRead: aws.Bool(true), Key: s.budgetKey(t, originID),
	})
	if err != nil {
		return 0, false, fmt.Errorf("read the rules budget of action %s: %w", originID, err)
	}
	var rec struct {
		Used             int    `dynamodbav:"used"`
		ExceededActionID string `dynamodbav:"exceededActionId"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return 0, false, fmt.Errorf("read the rules budget of action %s: %w", originID, err)
	}
	return rec.Used, rec.ExceededActionID != "", nil
}

// spend is the Update adding n effects to the chain of originID,
// conditional on staying within budget.
func (s *store) spend(t, originID string, n, budget int, now time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:           aws.String(s.table),
		Key:                 s.budgetKey(t, originID),
		UpdateExpression:    aws.String("SET purgeAt = if_not_exists(purgeAt, :p) ADD used :n"),
		ConditionExpression: aws.String("attribute_not_exists(used) OR used <= :lim"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":   &types.AttributeValueMemberN{Value: strconv.Itoa(n)},
			":lim": &types.AttributeValueMemberN{Value: strconv.Itoa(budget - n)},
			":p":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(markerTTL).Unix(), 10)},
		},
	}}
}

// exceeded is the Update naming the RULES_BUDGET_EXCEEDED action of the
// chain of originID, conditional on none being named yet.
func (s *store) exceeded(t, originID, actionID string, now time.Time) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:           aws.String(s.table),
		Key:                 s.budgetKey(t, originID),
		UpdateExpression:    aws.String("SET exceededActionId = :a, purgeAt = if_not_exists(purgeAt, :p)"),
		ConditionExpression: aws.String("attribute_not_exists(exceededActionId)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":a": str(actionID),
			":p": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(markerTTL).Unix(), 10)},
		},
	}}
}
