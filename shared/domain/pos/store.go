package pos

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Pos table (every key starts with the tenant id):
//
//	pk = <t>#ORDER#<orderId>           sk = ORDER     an order
//	pk = <t>#TXN#<transactionId>       sk = TXN       a transaction
//	pk = <t>#TXNCODE#<shortCode>       sk = TXNCODE   which transaction has a POS short code, with its body's hash
//	pk = <t>#TXNMETA#<hash of k, v>    sk = <txnId>   a transaction whose metadata has key k with value v
//
// The short-code item is written in the transaction's own transaction,
// conditional on being new, so one short code is one transaction whatever
// the retries; a repeat with the same body finds it and answers the first
// transaction. An order keeps the sum of its transactions and the points
// the rules earned on it (for refunds); every change of an order bumps its
// version, and every change made from a read is conditional on the version
// read, so no two changes of an order overwrite each other.

func orderPK(t, id string) string      { return t + "#ORDER#" + id }
func txnPK(t, id string) string        { return t + "#TXN#" + id }
func codePK(t, code string) string     { return t + "#TXNCODE#" + code }
func sv(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func nv(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func fv(v money.Amount) types.AttributeValue { return v.AttributeValue() }

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": sv(pk), "sk": sv(sk)}
}

// orderRecord is an order as stored.
type orderRecord struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	Order
	Version int `dynamodbav:"version"`
	// Declared is the value the POS gave the order (body `value`).
	Declared *money.Amount `dynamodbav:"declaredValue,omitempty"`
	// EarnedBase is the sum of the order's transactions when it
	// completed; RefundedAfter what was refunded of them since. A refund
	// takes back the share RefundedAfter/EarnedBase of the points earned.
	EarnedBase    money.Amount `dynamodbav:"earnedBase"`
	RefundedAfter money.Amount `dynamodbav:"refundedAfter"`
	// RedemptionsReturned marks that an APP refund gave the order's
	// redemptions back.
	RedemptionsReturned bool `dynamodbav:"redemptionsReturned"`
}

// view returns the order as the API answers it: value is the order's
// value (OrderValue), maps are never null.
func (r orderRecord) view() Order {
	o := r.Order
	v := r.value()
	o.Value = &v
	if o.PointsEarned == nil {
		o.PointsEarned = map[string]int{}
	}
	if o.PointsReversed == nil {
		o.PointsReversed = map[string]int{}
	}
	if o.Basket == nil {
		o.Basket = []BasketItem{}
	}
	if o.Redemptions == nil {
		o.Redemptions = []Redemption{}
	}
	return o
}

// value is the order's value: totalPrice when set, else the value the POS
// declared, else the sum of its transactions not refunded. A totalPrice or
// declared value is net of what was refunded while the order was OPEN (an
// order completes on the amount not refunded; refunds after completion
// reverse points instead), never below zero.
func (r orderRecord) value() money.Amount {
	before, err := r.RefundedTotal.Sub(r.RefundedAfter)
	if err != nil || before.Sign() < 0 {
		before = money.Amount{}
	}
	net := func(a money.Amount) money.Amount {
		v, err := a.Sub(before)
		if err != nil || v.Sign() < 0 {
			return money.Amount{}
		}
		return v
	}
	switch {
	case r.TotalPrice != nil:
		return net(*r.TotalPrice)
	case r.Declared != nil:
		return net(*r.Declared)
	}
	return r.TransactionsTotal
}

// txnRecord is a transaction as stored.
type txnRecord struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	Transaction
}

// codeRecord binds a short code to its transaction.
type codeRecord struct {
	PK            string `dynamodbav:"pk"`
	SK            string `dynamodbav:"sk"`
	TransactionID string `dynamodbav:"transactionId"`
	BodyHash      string `dynamodbav:"bodyHash"`
}

type store struct {
	db    ddb.API
	table string
}

func (st *store) get(ctx context.Context, k map[string]types.AttributeValue, v any) (bool, error) {
	out, err := st.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, err
	}
	if out.Item == nil {
		return false, nil
	}
	return true, attributevalue.UnmarshalMap(out.Item, v)
}

func (st *store) order(ctx context.Context, t, id string) (orderRecord, error) {
	var r orderRecord
	found, err := st.get(ctx, key(orderPK(t, id), "ORDER"), &r)
	if err != nil {
		return orderRecord{}, fmt.Errorf("get order %s: %w", id, err)
	}
	if !found {
		return orderRecord{}, ErrOrderNotFound
	}
	return r, nil
}

func (st *store) txn(ctx context.Context, t, id string) (txnRecord, error) {
	var r txnRecord
	found, err := st.get(ctx, key(txnPK(t, id), "TXN"), &r)
	if err != nil {
		return txnRecord{}, fmt.Errorf("get transaction %s: %w", id, err)
	}
	if !found {
		return txnRecord{}, ErrTransactionNotFound
	}
	return r, nil
}

func (st *store) code(ctx context.Context, t, code string) (codeRecord, bool, error) {
	var r codeRecord
	found, err := st.get(ctx, key(codePK(t, code), "TXNCODE"), &r)
	if err != nil {
		return codeRecord{}, false, fmt.Errorf("find short code: %w", err)
	}
	return r, found, nil
}

// put returns a conditional Put of v: a new item (cond "") or one whose
// condition holds.
func (st *store) put(v any, cond string, values map[string]types.AttributeValue) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("encode: %w", err)
	}
	p := &types.Put{TableName: aws.String(st.table), Item: item}
	if cond == "" {
		p.ConditionExpression = aws.String("attribute_not_exists(pk)")
	} else {
		p.ConditionExpression, p.ExpressionAttributeValues = aws.String(cond), values
	}
	return types.TransactWriteItem{Put: p}, nil
}

// putOrder returns the Put of an order record: new (version 1) or
// replacing the version read.
func (st *store) putOrder(r orderRecord) (types.TransactWriteItem, error) {
	r.PK, r.SK = orderPK(r.TenantID, r.ID), "ORDER"
	if r.Version <= 1 {
		r.Version = 1
		return st.put(r, "", nil)
	}
	return st.put(r, "version = :v", map[string]types.AttributeValue{":v": nv(int64(r.Version - 1))})
}

func (st *store) update(pk, sk, expr, cond string, values map[string]types.AttributeValue) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(st.table), Key: key(pk, sk), UpdateExpression: aws.String(expr),
		ConditionExpression: aws.String(cond), ExpressionAttributeValues: values,
	}}
}
