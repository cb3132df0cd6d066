// Package profile is the small read side of users that other domains need:
// who a user is (name, platform, photo, state) and a check, inside another
// domain's transaction, that the user is live. The users domain
// (shared/domain/user) writes users; the profile item's key is defined here so
// that both agree, and functions that only read users link this package
// instead of sign-up, login, SSO and messaging.
package profile

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of a user's profile in the Users table (the users domain
// keeps more items in the same partition):
//
//	pk = <t>#USER#<userId>   sk = PROFILE

// SK is the sort key of a user's profile item.
const SK = "PROFILE"

// PK is the partition key of a user's items.
func PK(tenantID, userID string) string { return tenantID + "#USER#" + userID }

func key(tenantID, userID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: PK(tenantID, userID)},
		"sk": &types.AttributeValueMemberS{Value: SK},
	}
}

// ErrNotFound is a missing, expired (guest) or deleted user.
var ErrNotFound = apierr.New(apierr.NotFound, "user not found")

// Profile is what other domains need to know about a user.
type Profile struct {
	ID                 string   `dynamodbav:"id"`
	TenantID           string   `dynamodbav:"tenantId"`
	FullName           string   `dynamodbav:"fullName"`
	State              string   `dynamodbav:"state"`
	IsGuest            bool     `dynamodbav:"isGuest"`
	Deleted            bool     `dynamodbav:"deleted"`
	HasProfilePhoto    bool     `dynamodbav:"hasProfilePhoto"`
	PrimaryPlatform    string   `dynamodbav:"primaryPlatform"`
	FavouriteLocations []string `dynamodbav:"favouriteLocations"`
	ExpiresAt          int64    `dynamodbav:"expiresAt"`
	// Balance is the user's app balance (0 for a user who never had one),
	// read with the profile so that a balance change reads the user once.
	// It is exact (an N attribute read as a decimal, never a float64).
	Balance money.Amount `dynamodbav:"balance"`
	// MoneySeq is the number of the balance's ledger entries (0 before
	// the first), read with the balance: a change of the balance is
	// conditional on it (BalanceMove).
	MoneySeq int `dynamodbav:"moneySeq"`
}

// live reports whether a stored profile counts at now: not deleted, and a
// guest not expired.
func (p Profile) live(now time.Time) bool {
	return !p.Deleted && (p.ExpiresAt == 0 || p.ExpiresAt > now.Unix())
}

func (p Profile) normalized() Profile {
	if p.PrimaryPlatform == "" {
		p.PrimaryPlatform = "UNKNOWN"
	}
	if p.FavouriteLocations == nil {
		p.FavouriteLocations = []string{}
	}
	p.ExpiresAt = 0
	return p
}

// projection is the attributes a profile read fetches.
const projection = "id, tenantId, fullName, #state, isGuest, deleted, hasProfilePhoto, primaryPlatform, favouriteLocations, expiresAt, balance, moneySeq"

var projectionNames = map[string]string{"#state": "state"}

// Reader reads users' profiles.
type Reader struct {
	DB    ddb.API
	Table string
	Clock clock.Clock
}

// Get returns a user's profile; a missing, expired or deleted user is
// ErrNotFound.
func (r *Reader) Get(ctx context.Context, tenantID, userID string) (Profile, error) {
	p, err := r.Kept(ctx, tenantID, userID)
	if err != nil {
		return Profile{}, err
	}
	if p.Deleted {
		return Profile{}, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	return p, nil
}

// Kept returns a user's profile, a deleted (redacted) user's too: what
// changes a user's history after the deletion (the refund of an earlier
// payment) needs. A missing or expired user is ErrNotFound.
func (r *Reader) Kept(ctx context.Context, tenantID, userID string) (Profile, error) {
	out, err := r.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(r.Table), Key: key(tenantID, userID), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(projection), ExpressionAttributeNames: projectionNames,
	})
	if err != nil {
		return Profile{}, fmt.Errorf("get user %s: %w", userID, err)
	}
	if out.Item == nil {
		return Profile{}, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	var p Profile
	if err := attributevalue.UnmarshalMap(out.Item, &p); err != nil {
		return Profile{}, fmt.Errorf("get user %s: %w", userID, err)
	}
	if p.ExpiresAt != 0 && p.ExpiresAt <= r.Clock.Now().Unix() {
		return Profile{}, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	return p.normalized(), nil
}

// Many returns the profiles of the live users among ids, by id; unknown
// ids are left out.
func (r *Reader) Many(ctx context.Context, tenantID string, ids []string) (map[string]Profile, error) {
	out := map[string]Profile{}
	seen := map[string]bool{}
	var keys []map[string]types.AttributeValue
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, key(tenantID, id))
		}
	}
	now := r.Clock.Now()
	items, err := ddb.BatchGet(ctx, r.DB, r.Table, types.KeysAndAttributes{
		Keys: keys, ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(projection), ExpressionAttributeNames: projectionNames,
	})
	if err != nil {
		return nil, fmt.Errorf("batch get users: %w", err)
	}
	var ps []Profile
	if err := attributevalue.UnmarshalListOfMaps(items, &ps); err != nil {
		return nil, fmt.Errorf("batch get users: %w", err)
	}
	for _, p := range ps {
		if p.live(now) {
			out[p.ID] = p.normalized()
		}
	}
	return out, nil
}

// LiveCheck is a ConditionCheck, for another domain's transaction, that a
// user exists and is not deleted: what the transaction writes about the
// user commits only while the user is live.
func LiveCheck(table, tenantID, userID string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(table),
		Key:                       key(tenantID, userID),
		ConditionExpression:       aws.String("attribute_exists(pk) AND deleted = :false"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":false": &types.AttributeValueMemberBOOL{Value: false}},
	}}
}

// LiveCheck is LiveCheck on the reader's table.
func (r *Reader) LiveCheck(tenantID, userID string) types.TransactWriteItem {
	return LiveCheck(r.Table, tenantID, userID)
}

// BalanceMove is an Update, for the ledger's transaction, of a user's app
// balance from cur to next with its entry count (moneySeq) from seq to
// seq+1, conditional on both being as read (a user who never had an entry
// may have no count yet, a user who never had a balance no balance) and on
// the user existing and, unless kept, not being deleted (the refund of a
// deleted user's earlier payment changes their kept history). A failure
// means the balance changed or the user is gone: read again. The ledger
// (shared/domain/ledger) writes the entry numbered seq+1 in the same transaction.
func BalanceMove(table, tenantID, userID string, cur, next money.Amount, seq int, kept bool) types.TransactWriteItem {
	cond := "attribute_exists(pk)"
	values := map[string]types.AttributeValue{
		":cur":  cur.AttributeValue(),
		":next": next.AttributeValue(),
		":seq":  &types.AttributeValueMemberN{Value: strconv.Itoa(seq)},
		":nseq": &types.AttributeValueMemberN{Value: strconv.Itoa(seq + 1)},
	}
	if !kept {
		cond += " AND deleted = :false"
		values[":false"] = &types.AttributeValueMemberBOOL{Value: false}
	}
	if seq == 0 {
		cond += " AND (attribute_not_exists(moneySeq) OR moneySeq = :seq)"
	} else {
		cond += " AND moneySeq = :seq"
	}
	if cur.IsZero() {
		cond += " AND (attribute_not_exists(balance) OR balance = :cur)"
	} else {
		cond += " AND balance = :cur"
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(table), Key: key(tenantID, userID),
		UpdateExpression:          aws.String("SET balance = :next, moneySeq = :nseq"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeValues: values,
	}}
}
