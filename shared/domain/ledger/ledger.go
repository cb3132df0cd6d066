// Package ledger is the record of every movement of points: each change of
// an award's points is an entry, written in the same transaction as the
// award it changes, with its cause and the balance it left. The entries of
// an award are numbered from 1 without gaps (the award keeps the count,
// `seq`), so that they read back in the order they were committed, and the
// sum of an award's entries is always its balance (`available`).
//
// The ledger owns the entries' keys; the award domain decides the
// movements and adds their entries to its transactions through Item.
package ledger

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Entry types of points.
const (
	// Earn: points granted (a grant, a rule, a credit, an import, a
	// segment perk's initial points).
	Earn = "EARN"
	// Burn: points redeemed.
	Burn = "BURN"
	// Refund: redeemed points given back.
	Refund = "REFUND"
	// Reversal: earned points taken back (a refunded order's earn).
	Reversal = "REVERSAL"
	// Adjust: an admin set the balance (PUT /pointawards/{awardId}); the
	// entry holds the difference.
	Adjust = "ADJUST"
	// Expiry: points of lots that expired taken off (by the daily expiry
	// run, or by the first change of the award after they expired).
	Expiry = "EXPIRY"
)

// Types lists the entry types, for validation of filters and documents.
var Types = []string{Earn, Burn, Refund, Reversal, Adjust, Expiry}

// LotPoints is what an entry moved in one lot: the lot's id (the id of the
// entry that earned it), the points, and the lot's expiry as the entry
// left it ("": never).
type LotPoints struct {
	LotID     string `json:"lotId" dynamodbav:"lot"`
	Points    int    `json:"points" dynamodbav:"points"`
	ExpiresAt string `json:"expiresAt,omitempty" dynamodbav:"expiresAt,omitempty"`
	// Activity tells that the lot expires with the award's activity
	// (AFTER_ACTIVITY; see Entry.Renews).
	Activity bool `json:"activity,omitempty" dynamodbav:"activity,omitempty"`
}

// Cause is what made a movement: the action recorded with it and, when
// known, the order, transaction, rule, import operation and row, and the
// source of a grant (API, RULE, IMPORT, SEGMENT, CREDIT, INITIAL).
type Cause struct {
	ActionID      string `json:"actionId,omitempty" dynamodbav:"actionId,omitempty"`
	OrderID       string `json:"orderId,omitempty" dynamodbav:"orderId,omitempty"`
	TransactionID string `json:"transactionId,omitempty" dynamodbav:"transactionId,omitempty"`
	RuleID        string `json:"ruleId,omitempty" dynamodbav:"ruleId,omitempty"`
	OperationID   string `json:"operationId,omitempty" dynamodbav:"operationId,omitempty"`
	Row           *int   `json:"row,omitempty" dynamodbav:"row,omitempty"`
	Source        string `json:"source,omitempty" dynamodbav:"source,omitempty"`
}

// CauseOf reads a cause from an action's metadata (the keys the award and
// POS domains write) and the action's id.
func CauseOf(actionID string, meta map[string]any) Cause {
	c := Cause{ActionID: actionID}
	str := func(k string) string { s, _ := meta[k].(string); return s }
	c.OrderID, c.TransactionID, c.RuleID, c.OperationID, c.Source = str("orderId"), str("transactionId"), str("ruleId"), str("operationId"), str("source")
	switch r := meta["row"].(type) {
	case int:
		c.Row = &r
	case int64:
		n := int(r)
		c.Row = &n
	case float64:
		n := int(r)
		c.Row = &n
	}
	return c
}

// Entry is one movement of an award's points.
type Entry struct {
	// ID is the award's id and the entry's number: <awardId>.<seq>.
	ID   string `json:"_id" dynamodbav:"id"`
	Seq  int    `json:"seq" dynamodbav:"seq"`
	Type string `json:"type" dynamodbav:"type"`
	// Points is the change, signed: positive for EARN and REFUND,
	// negative for BURN, REVERSAL and EXPIRY, either for ADJUST.
	Points int `json:"points" dynamodbav:"points"`
	// BalanceAfter is the award's available points after the entry.
	BalanceAfter int `json:"balanceAfter" dynamodbav:"balanceAfter"`
	// Units is how many redemptions a BURN counts (an order line's
	// quantity) when more than one.
	Units int `json:"units,omitempty" dynamodbav:"units,omitempty"`
	// Lots is what the entry moved in each lot: the lot an EARN made (or
	// joined), the lots a BURN, REVERSAL, EXPIRY or decreasing ADJUST took
	// from, the lots a REFUND gave back to.
	Lots []LotPoints `json:"lots,omitempty" dynamodbav:"lots,omitempty"`
	// Renews is, under an AFTER_ACTIVITY policy, the new expiry of the
	// award's lots that expire with its activity (an earn or a burn
	// moves it).
	Renews  string `json:"renews,omitempty" dynamodbav:"renews,omitempty"`
	Cause   Cause  `json:"cause" dynamodbav:"cause"`
	Created string `json:"created" dynamodbav:"created"`
}

// record is an entry as stored (Loyalty table, beside its award).
type record struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	Entry
	TenantID string `dynamodbav:"tenantId"`
	UserID   string `dynamodbav:"userId"`
	PerkID   string `dynamodbav:"perkId"`
}

// Item layout (Loyalty table; every key starts with the tenant id):
//
//	pk = <t>#USER#<userId>   sk = LEDGER#<perkId>#<seq, 10 digits>   an entry of the user's award of a perk
//
// The entries share the award's partition, so an award's ledger is one
// Query, newest first.

func userPK(t, uid string) string { return t + "#USER#" + uid }
func prefix(perkID string) string { return "LEDGER#" + perkID + "#" }
func entrySK(perkID string, seq int) string {
	return fmt.Sprintf("%s%010d", prefix(perkID), seq)
}

// Item returns the Put of entry e of the award of (tenant, user, perk),
// conditional on the entry being new: two changes that read the same
// award cannot both write its next entry.
func Item(table, tenantID, userID, perkID string, e Entry) (types.TransactWriteItem, error) {
	e.ID = fmt.Sprintf("%s-%s.%d", userID, perkID, e.Seq)
	item, err := attributevalue.MarshalMap(record{
		PK: userPK(tenantID, userID), SK: entrySK(perkID, e.Seq), Entry: e, TenantID: tenantID, UserID: userID, PerkID: perkID,
	})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode ledger entry %s: %w", e.ID, err)
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
		// A failure returns the entry already there: its key tells the
		// caller that another change took the number (see IsEntry).
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}, nil
}

// Oldest returns the Query of an award's entries, oldest first.
func Oldest(table, tenantID, userID, perkID string) dynamodb.QueryInput {
	q := Query(table, tenantID, userID, perkID)
	q.ScanIndexForward = aws.Bool(true)
	return q
}

// Query returns the Query of an award's entries, newest first.
func Query(table, tenantID, userID, perkID string) dynamodb.QueryInput {
	return dynamodb.QueryInput{
		TableName:              aws.String(table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: userPK(tenantID, userID)},
			":p":  &types.AttributeValueMemberS{Value: prefix(perkID)},
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
	}
}

// Decode returns the entry of a stored item.
func Decode(item map[string]types.AttributeValue) (Entry, error) {
	var r record
	if err := attributevalue.UnmarshalMap(item, &r); err != nil {
		return Entry{}, fmt.Errorf("decode ledger entry: %w", err)
	}
	return r.Entry, nil
}

// IsEntry reports whether a sort key is a ledger entry's (award queries
// on a user's partition skip them).
func IsEntry(sk string) bool { return strings.HasPrefix(sk, "LEDGER#") }
