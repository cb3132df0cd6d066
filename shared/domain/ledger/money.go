package ledger

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metadata"
)

// The money ledger: every change of a user's app balance (the User field
// `balance`) is an entry, written in the same transaction as the balance
// it changes, with its cause and the balance it left. A user's entries are
// numbered from 1 without gaps (the user item keeps the count,
// `moneySeq`), and their sum is the balance. The ledger owns the entries'
// keys and the balance's update (AddMoney); the POS domain decides the
// changes (credits, APP payments and their refunds).

// Entry types of money.
const (
	// MoneyCredit: an admin credited the balance (POST
	// /users/{userId}/credits type BALANCE); positive or negative.
	MoneyCredit = "CREDIT"
	// MoneyPayment: an APP transaction's charge (negative).
	MoneyPayment = "PAYMENT"
	// MoneyPaymentRefund: a refunded APP transaction's charge given back
	// (positive).
	MoneyPaymentRefund = "PAYMENT_REFUND"
)

// MoneyTypes lists the money entry types, for documents.
var MoneyTypes = []string{MoneyCredit, MoneyPayment, MoneyPaymentRefund}

// MoneyCause is what made a change of a balance: the action recorded with
// it and, when known, the order and transaction of a payment or refund,
// and the reason an admin gave a credit.
type MoneyCause struct {
	ActionID      string `json:"actionId,omitempty" dynamodbav:"actionId,omitempty"`
	OrderID       string `json:"orderId,omitempty" dynamodbav:"orderId,omitempty"`
	TransactionID string `json:"transactionId,omitempty" dynamodbav:"transactionId,omitempty"`
	Reason        string `json:"reason,omitempty" dynamodbav:"reason,omitempty"`
	// Metadata is the client's own fields of the change (a credit's
	// metadata), absent when none.
	Metadata metadata.Metadata `json:"metadata,omitempty" dynamodbav:"metadata,omitempty"`
}

// MoneyEntry is one change of a user's app balance. Amounts are exact
// (shared/domain/money); the API writes them as decimal strings with the
// currency's digits ("-12.50").
type MoneyEntry struct {
	// ID is the user's id and the entry's number: <userId>.<seq>.
	ID   string `dynamodbav:"id"`
	Seq  int    `dynamodbav:"seq"`
	Type string `dynamodbav:"type"`
	// Amount is the change, signed.
	Amount money.Amount `dynamodbav:"amount"`
	// BalanceAfter is the balance the entry left.
	BalanceAfter money.Amount `dynamodbav:"balanceAfter"`
	// Currency is the tenant's currency when the entry was written.
	Currency string     `dynamodbav:"currency"`
	Cause    MoneyCause `dynamodbav:"cause"`
	Created  string     `dynamodbav:"created"`
}

// MoneyView is a money entry as the API answers it.
type MoneyView struct {
	ID           string     `json:"_id"`
	Seq          int        `json:"seq"`
	Type         string     `json:"type"`
	Amount       string     `json:"amount"`
	BalanceAfter string     `json:"balanceAfter"`
	Currency     string     `json:"currency"`
	Cause        MoneyCause `json:"cause"`
	Created      string     `json:"created"`
}

// View returns the entry as the API answers it: its amounts as decimal
// strings with the digits of the entry's currency.
func (e MoneyEntry) View() MoneyView {
	c, ok := money.Lookup(e.Currency)
	if !ok {
		c = money.GBP
	}
	return MoneyView{
		ID: e.ID, Seq: e.Seq, Type: e.Type, Amount: e.Amount.Fixed(c), BalanceAfter: e.BalanceAfter.Fixed(c),
		Currency: e.Currency, Cause: e.Cause, Created: e.Created,
	}
}

// moneyRecord is a money entry as stored (Users table, beside the user).
type moneyRecord struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	MoneyEntry
	TenantID string `dynamodbav:"tenantId"`
	UserID   string `dynamodbav:"userId"`
}

// Item layout (Users table; every key starts with the tenant id):
//
//	pk = <t>#USER#<userId>   sk = PROFILE#MONEY#<seq, 10 digits>   an entry of the user's app balance
//
// The entries share the partition of the user item that holds the
// balance, so that a user's money ledger is one Query, newest first. They
// sort after the user item (sk PROFILE): the users domain's reads of a
// user's items (credentials, names, addresses: all before PROFILE) never
// meet them, and deleting a user keeps them (the history stays).

const moneyPrefix = profile.SK + "#MONEY#"

func moneySK(seq int) string { return fmt.Sprintf("%s%010d", moneyPrefix, seq) }

// IsMoneyEntry reports whether a sort key of the Users table is a money
// entry's.
func IsMoneyEntry(sk string) bool { return strings.HasPrefix(sk, moneyPrefix) }

// Balance is a user's app balance as read (profile.Profile): the amount
// and the number of its entries.
type Balance struct {
	Amount money.Amount
	Seq    int
}

// BalanceOf returns the balance of a profile as read.
func BalanceOf(p profile.Profile) Balance { return Balance{Amount: p.Balance, Seq: p.MoneySeq} }

// MoneyChange is one change of a user's app balance.
type MoneyChange struct {
	TenantID, UserID string
	Type             string
	// Amount is the change, signed, exactly in the currency's digits.
	Amount   money.Amount
	Currency money.Currency
	Cause    MoneyCause
	// Kept allows the change on a deleted user (the refund of an earlier
	// payment: their history is kept).
	Kept bool
}

// ErrNegativeBalance is a change that would leave a balance below zero;
// the caller refuses it before (the POS domain answers 422
// INSUFFICIENT_BALANCE), so this is a fault of the caller.
var ErrNegativeBalance = errors.New("the change would leave the balance below zero")

// MoneyWrite is what AddMoney added to a transaction: the indexes of the
// balance's update and of the entry, and the entry.
type MoneyWrite struct {
	BalanceAt, EntryAt int
	Entry              MoneyEntry
}

// Raced reports whether err, the failure of the transaction holding w,
// means that the balance changed since it was read (the condition of its
// update, or of its entry, failed): read again and retry.
func (w MoneyWrite) Raced(err error) bool {
	return ddb.Failed(err, w.BalanceAt) || ddb.Failed(err, w.EntryAt)
}

// AddMoney adds change c of a user's app balance b (as read) to tx: the
// balance's update to b + c.Amount, conditional on the balance and its
// entry count being as read (profile.BalanceMove), and the entry numbered
// b.Seq+1, conditional on being new. A failure of either condition means
// that another change committed since the read (MoneyWrite.Raced): read
// again and retry. A change that would leave the balance below zero is
// ErrNegativeBalance (the caller refuses it first).
func AddMoney(tx *ddb.Tx, table string, b Balance, c MoneyChange, now time.Time) (MoneyWrite, error) {
	next, err := b.Amount.Add(c.Amount)
	if err != nil {
		return MoneyWrite{}, fmt.Errorf("balance of %s: %w", c.UserID, err)
	}
	if next.Sign() < 0 {
		return MoneyWrite{}, fmt.Errorf("balance of %s: %w", c.UserID, ErrNegativeBalance)
	}
	e := MoneyEntry{
		ID: fmt.Sprintf("%s.%d", c.UserID, b.Seq+1), Seq: b.Seq + 1, Type: c.Type, Amount: c.Amount, BalanceAfter: next,
		Currency: c.Currency.Code, Cause: c.Cause, Created: clock.Stamp(now),
	}
	item, err := attributevalue.MarshalMap(moneyRecord{
		PK: profile.PK(c.TenantID, c.UserID), SK: moneySK(e.Seq), MoneyEntry: e, TenantID: c.TenantID, UserID: c.UserID,
	})
	if err != nil {
		return MoneyWrite{}, fmt.Errorf("encode money entry %s: %w", e.ID, err)
	}
	w := MoneyWrite{Entry: e}
	w.BalanceAt = tx.Add("balance", profile.BalanceMove(table, c.TenantID, c.UserID, b.Amount, next, b.Seq, c.Kept))
	w.EntryAt = tx.Add("ledger", types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}})
	return w, nil
}

// MoneyQuery returns the Query of a user's money entries, newest first.
func MoneyQuery(table, tenantID, userID string) dynamodb.QueryInput {
	return dynamodb.QueryInput{
		TableName:              aws.String(table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: profile.PK(tenantID, userID)},
			":p":  &types.AttributeValueMemberS{Value: moneyPrefix},
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
	}
}

// DecodeMoney returns the money entry of a stored item.
func DecodeMoney(item map[string]types.AttributeValue) (MoneyEntry, error) {
	var r moneyRecord
	if err := attributevalue.UnmarshalMap(item, &r); err != nil {
		return MoneyEntry{}, fmt.Errorf("decode money entry: %w", err)
	}
	return r.MoneyEntry, nil
}
