package account

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/auth"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// store is the users domain's store (user.Store) with the items only the
// accounts part writes. Sessions table:
//
//	pk = <t>#SESSION#<sha256(token)>  sk = SESSION   (auth owns the layout)
//	gsi1: gsi1pk = <t>#USER#<userId>  gsi1sk = SESSION#<sha256(token)>
//	pk = <t>#LOGIN#<sha256(provider#id)>  sk = LOGIN   password login attempts
type store struct{ *user.Store }

const (
	skSession      = auth.SessionSK
	skLoginAttempt = "LOGIN"
)

func sessionPK(t, hash string) string { return auth.SessionPK(t, hash) }

// codeSendCounted is a transaction update that counts one more code sent
// to the live user r (see countCodeSend) and fails if the user was deleted
// or another request counted a code meanwhile. It returns ErrTooManyCodes
// when the hour's sends are used up.
func (s *store) codeSendCounted(r user.Record, now time.Time) (types.TransactWriteItem, error) {
	upd, err := countCodeSend(r, now)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	cond := expression.Name("pk").AttributeExists().
		And(expression.Name("deleted").Equal(expression.Value(false))).
		And(expression.Or(expression.Name("codeSends").AttributeNotExists(), expression.Name("codeSends").Equal(expression.Value(r.CodeSends)))).
		And(expression.Or(expression.Name("codeWindow").AttributeNotExists(), expression.Name("codeWindow").Equal(expression.Value(r.CodeWindow))))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("count code send of %s: %w", r.ID, err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.Users), Key: user.Key(r.PK, r.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// codeSendUnchanged is the condition that no other request counted a code
// sent to r since r was read.
func codeSendUnchanged(r user.Record) expression.ConditionBuilder {
	return expression.Or(expression.Name("codeSends").AttributeNotExists(), expression.Name("codeSends").Equal(expression.Value(r.CodeSends))).
		And(expression.Or(expression.Name("codeWindow").AttributeNotExists(), expression.Name("codeWindow").Equal(expression.Value(r.CodeWindow))))
}

func (s *store) putSession(ctx context.Context, rec sessionRecord) error {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return fmt.Errorf("put session: %w", err)
	}
	_, err = s.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Sessions), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if err != nil {
		return fmt.Errorf("put session of %s: %w", rec.UserID, err)
	}
	return nil
}

// putSessionAtEpoch stores a session of a user only while that user is
// live and its sessionEpoch (absent = 0) is still epoch, in one
// transaction: a change that ends the user's sessions bumps the epoch in
// its own write before it lists and deletes them, so a session made from
// the user as read before the change fails here (ErrSessionRaced) rather
// than outlive it.
func (s *store) putSessionAtEpoch(ctx context.Context, rec sessionRecord, epoch int) error {
	put, err := s.Put(s.Sessions, rec, aws.String("attribute_not_exists(pk)"))
	if err != nil {
		return fmt.Errorf("put session of %s: %w", rec.UserID, err)
	}
	cond := "attribute_exists(pk) AND deleted = :false AND (attribute_not_exists(sessionEpoch) OR sessionEpoch = :e)"
	check := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(s.Users), Key: user.Key(user.UserPK(rec.TenantID, rec.UserID), user.SKProfile),
		ConditionExpression: aws.String(cond),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":false": &types.AttributeValueMemberBOOL{Value: false},
			":e":     &types.AttributeValueMemberN{Value: fmt.Sprint(epoch)},
		},
	}}
	err = s.Transact(ctx, []types.TransactWriteItem{put, check})
	if slices.Contains(ddb.FailedConditions(err), 1) {
		return fmt.Errorf("put session of %s: %w", rec.UserID, ErrSessionRaced)
	}
	if err != nil {
		return fmt.Errorf("put session of %s: %w", rec.UserID, err)
	}
	return nil
}

// bumpSessionEpoch voids the sessions of a user being made by logins in
// flight (see putSessionAtEpoch); it is called before the user's sessions
// are listed and deleted. It changes nothing the API shows, so it leaves
// version and updatedAt alone.
func (s *store) bumpSessionEpoch(ctx context.Context, tenantID, userID string) error {
	_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Users), Key: user.Key(user.UserPK(tenantID, userID), user.SKProfile),
		UpdateExpression:          aws.String("ADD sessionEpoch :one"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	if ddb.IsConditionFailed(err) {
		return fmt.Errorf("end sessions of %s: %w", userID, user.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("end sessions of %s: %w", userID, err)
	}
	return nil
}

func (s *store) deleteSession(ctx context.Context, tenantID, hash string) error {
	_, err := s.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.Sessions), Key: user.Key(sessionPK(tenantID, hash), skSession)})
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// loginAttemptPK keys an identifier's login attempts by a hash, so that the
// Sessions table holds no credential in clear.
func loginAttemptPK(t, provider, id string) string {
	return t + "#LOGIN#" + tokenHash(provider+"#"+id)
}

// loginAttemptKey is the key of an identifier's login attempts item.
func loginAttemptKey(t, provider, id string) map[string]types.AttributeValue {
	return user.Key(loginAttemptPK(t, provider, id), skLoginAttempt)
}

// sessionRecord is a session as stored (the auth package owns its layout);
// the token itself is never stored.
type sessionRecord = auth.Session
