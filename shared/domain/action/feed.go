package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Feed heads: the order of a user's events. Every action belongs to one
// scope, its user's ("USER#<userId>") or, for an action with no user, its
// tenant's ("TENANT"), and each scope has a feed head item in the Actions
// table:
//
//	pk = <t>#FEED#<scope>   sk = FEED   tenantId, seq, events
//
// The transaction that records actions updates, for each scope it records
// actions of, the scope's head: SET events to the list of those actions
// (in the order recorded, each stored like the action part of its action
// item) and ADD their number to seq. No read and no condition: ADD
// serialises the writers of one scope (two at once lose a
// TransactionConflict, which ddb.Transact retries), so after the update
// seq = n means that the transaction's k events have the sequences
// n-k+1 .. n, in list order: a sequence strictly increasing by 1 across
// all of the scope's actions, assigned where they are written. DynamoDB
// Streams order the records of one item, so a consumer of the heads'
// records (FeedOf) sees each scope's events in sequence order. A retried
// Put of an action id stored already fails its condition and cancels the
// transaction, head included: a sequence is never spent twice on one
// action.
//
// Heads carry no index attributes: no list and no export ever reads them.
// Deleting a user removes the events of their head (Recorder.RedactUser):
// a record with a sequence and no events. The cost is one more item per
// scope in each transaction that records actions (one more write unit,
// and the events' bytes twice).

// ScopeTenant is the scope of an action without a user.
const ScopeTenant = "TENANT"

const (
	skFeed   = "FEED"
	feedPart = "#FEED#"
	// sharedPrefix starts the job.Plan.Shared name of a head (FeedKey).
	sharedPrefix = "feed:"
)

func feedPK(t, scope string) string { return t + feedPart + scope }

// ScopeOf returns the scope of an action: "USER#<userId>" for an action
// about a user (context.user), else "TENANT".
func ScopeOf(a Action) string {
	if a.Context.User != nil && a.Context.User.ID != "" {
		return "USER#" + a.Context.User.ID
	}
	return ScopeTenant
}

// FeedKey names the head an action updates, for a job whose chunks share
// one head update per scope (job.Plan.Shared).
func FeedKey(a Action) string { return sharedPrefix + ScopeOf(a) }

// Sequenced is an action with its place in its scope's sequence.
type Sequenced struct {
	Action
	// Scope is "USER#<userId>" or "TENANT" (ScopeOf).
	Scope string
	// Sequence numbers the scope's actions from 1, without gaps.
	Sequence int64
}

// head is a feed head as stored.
type head struct {
	PK       string   `dynamodbav:"pk"`
	SK       string   `dynamodbav:"sk"`
	TenantID string   `dynamodbav:"tenantId"`
	Seq      int64    `dynamodbav:"seq"`
	Events   []Action `dynamodbav:"events"`
}

// FeedOf reads a feed head item (a stream record's NEW_IMAGE converted to
// types.AttributeValue, see ddb.StreamItem): the events of the
// transaction that wrote it, with their sequences; none for the head of
// a deleted user, whose events RedactUser removed. ok is false for any
// other item of the Actions table.
func FeedOf(item map[string]types.AttributeValue) (events []Sequenced, ok bool, err error) {
	sk, _ := item["sk"].(*types.AttributeValueMemberS)
	pk, _ := item["pk"].(*types.AttributeValueMemberS)
	if sk == nil || sk.Value != skFeed || pk == nil || !strings.Contains(pk.Value, feedPart) {
		return nil, false, nil
	}
	var h head
	if err := attributevalue.UnmarshalMap(item, &h); err != nil {
		return nil, true, fmt.Errorf("decode feed head %s: %w", pk.Value, err)
	}
	scope, found := strings.CutPrefix(h.PK, feedPK(h.TenantID, ""))
	if !found || scope == "" {
		return nil, true, fmt.Errorf("decode feed head %s: not a head of tenant %q", h.PK, h.TenantID)
	}
	if int64(len(h.Events)) > h.Seq {
		return nil, true, fmt.Errorf("decode feed head %s: %d events, sequence %d", h.PK, len(h.Events), h.Seq)
	}
	first := h.Seq - int64(len(h.Events)) + 1
	out := make([]Sequenced, len(h.Events))
	for i, a := range h.Events {
		out[i] = Sequenced{Action: a, Scope: scope, Sequence: first + int64(i)}
	}
	return out, true, nil
}

// Head reads a scope's feed head (strongly consistent): the scope's last
// sequence (0 when it never recorded an action) and the events of the
// transaction that wrote it last (none once RedactUser removed them).
func (r *Recorder) Head(ctx context.Context, tenantID, scope string) (int64, []Sequenced, error) {
	out, err := r.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(r.Table), Key: feedKey(tenantID, scope), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, nil, fmt.Errorf("feed head %s: %w", scope, err)
	}
	if out.Item == nil {
		return 0, nil, nil
	}
	events, _, err := FeedOf(out.Item)
	if err != nil {
		return 0, nil, err
	}
	seq, _ := out.Item["seq"].(*types.AttributeValueMemberN)
	if seq == nil {
		return 0, nil, fmt.Errorf("feed head %s: no sequence", scope)
	}
	n, err := strconv.ParseInt(seq.Value, 10, 64)
	if err != nil {
		return 0, nil, fmt.Errorf("feed head %s: sequence %q: %w", scope, seq.Value, err)
	}
	return n, events, nil
}

func feedKey(tenantID, scope string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: feedPK(tenantID, scope)},
		"sk": &types.AttributeValueMemberS{Value: skFeed},
	}
}

// event returns the head's copy of a normalized action: the action part of
// its record as the Put stores it (the item less its keys).
func event(a Action) (types.AttributeValue, error) {
	m, err := attributevalue.MarshalMap(a)
	if err != nil {
		return nil, fmt.Errorf("feed head: marshal %s %s: %w", a.Type, a.ID, err)
	}
	return &types.AttributeValueMemberM{Value: m}, nil
}

// headItem returns the update of a scope's head by the events (marshalled
// actions of one tenant and scope, see event) a transaction records, in
// order.
func (r *Recorder) headItem(tenantID, scope string, list []types.AttributeValue) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                aws.String(r.Table),
		Key:                      feedKey(tenantID, scope),
		UpdateExpression:         aws.String("SET tenantId = :t, #ev = :events ADD seq :k"),
		ExpressionAttributeNames: map[string]string{"#ev": "events"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":t":      &types.AttributeValueMemberS{Value: tenantID},
			":events": &types.AttributeValueMemberL{Value: list},
			":k":      &types.AttributeValueMemberN{Value: strconv.Itoa(len(list))},
		},
	}}
}

// Heads returns the head updates of normalized actions (their Puts in the
// same transaction, see Puts): one per scope, in the order of each
// scope's first action, its events in the order given. An action without
// an id was never normalized and is refused.
func (r *Recorder) Heads(as ...Action) ([]types.TransactWriteItem, error) {
	type group struct {
		tenantID, scope string
		events          []types.AttributeValue
	}
	var groups []*group
	at := map[string]*group{}
	for _, a := range as {
		if a.ID == "" {
			return nil, fmt.Errorf("feed head of %s: the action has no id (not recorded)", a.Type)
		}
		ev, err := event(a)
		if err != nil {
			return nil, err
		}
		scope := ScopeOf(a)
		k := a.TenantID + "\x00" + scope
		g := at[k]
		if g == nil {
			g = &group{tenantID: a.TenantID, scope: scope}
			at[k] = g
			groups = append(groups, g)
		}
		g.events = append(g.events, ev)
	}
	out := make([]types.TransactWriteItem, len(groups))
	for i, g := range groups {
		out[i] = r.headItem(g.tenantID, g.scope, g.events)
	}
	return out, nil
}
