package account

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Password logins are throttled per identifier (tenant, provider and
// normalized credential id), whether or not a user holds it, so that the
// answer never tells whether an account exists: MaxLoginAttempts failed
// logins within LoginWindow lock the identifier for LoginLock. Every
// attempt is counted before its password is checked, so that parallel
// requests cannot check more passwords than the limit allows; a correct
// password clears the count.
const (
	MaxLoginAttempts = 10
	LoginWindow      = 15 * time.Minute
	LoginLock        = 15 * time.Minute
)

// ErrTooManyLogins answers a login for a locked identifier (429, with
// Retry-After).
var ErrTooManyLogins = apierr.New(apierr.TooManyAttempts, "too many failed logins; try again later")

// tooManyLogins returns ErrTooManyLogins with the time left until unlock.
func tooManyLogins(until, now time.Time) error {
	e := *ErrTooManyLogins
	e.RetryAfter = max(until.Sub(now), time.Second)
	return &e
}

// loginAttempt is the count of one identifier's login attempts.
type loginAttempt struct {
	Attempts    int   `dynamodbav:"attempts"`
	WindowStart int64 `dynamodbav:"windowStart"`
	LockedUntil int64 `dynamodbav:"lockedUntil,omitempty"`
}

// throttledLogin runs login, a password login of the identifier, within the
// identifier's attempt count: a locked identifier is refused before login
// runs; a failed login over the limit locks it; a correct password (also of
// a PENDING user) clears the count.
func (s *Service) throttledLogin(ctx context.Context, tenantID, provider, id string, login func() (Session, error)) (Session, error) {
	st := s.st()
	now := s.users.Now()
	n, lockedUntil, err := st.countLoginAttempt(ctx, tenantID, provider, id, now)
	if err != nil {
		return Session{}, err
	}
	if lockedUntil.After(now) {
		return Session{}, tooManyLogins(lockedUntil, now)
	}
	if n > MaxLoginAttempts {
		// Over the limit while earlier attempts are still being checked:
		// refused without a check. The lock itself comes only from a failed
		// attempt, so that many parallel logins with the right password
		// (an app retrying) do not lock their owner out.
		return Session{}, tooManyLogins(now.Add(time.Second), now)
	}
	sess, err := login()
	switch {
	case err == nil, errors.Is(err, ErrPendingLogin):
		if cerr := st.clearLoginAttempts(ctx, tenantID, provider, id); cerr != nil {
			return Session{}, cerr
		}
	case errors.Is(err, ErrBadLogin):
		if n >= MaxLoginAttempts {
			if lerr := st.lockLogin(ctx, tenantID, provider, id, now.Add(LoginLock), now); lerr != nil {
				return Session{}, lerr
			}
		}
	default:
		// A failure of ours, not a wrong password: the attempt does not
		// count (else the limit could be reached with no lock set).
		if uerr := st.uncountLoginAttempt(ctx, tenantID, provider, id); uerr != nil {
			return Session{}, errors.Join(err, uerr)
		}
	}
	return sess, err
}

// countLoginAttempt counts one more login attempt of an identifier and
// returns the count within the current window, or the time until which the
// identifier is locked (then nothing is counted). Two conditional updates
// keep the count exact under concurrent attempts: one counts within a live
// window or starts the first one (so an identifier with no attempts
// counted, as after a correct password, costs one write), the other starts
// a new window when the last one has ended.
func (st *store) countLoginAttempt(ctx context.Context, tenantID, provider, id string, now time.Time) (int, time.Time, error) {
	k := loginAttemptKey(tenantID, provider, id)
	vals := map[string]types.AttributeValue{
		":one":   &types.AttributeValueMemberN{Value: "1"},
		":now":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)},
		":floor": &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(-LoginWindow).Unix(), 10)},
		":exp":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(LoginWindow+LoginLock).Unix(), 10)},
	}
	unlocked := "(attribute_not_exists(lockedUntil) OR lockedUntil <= :now)"
	for range 4 {
		out, err := st.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(st.Sessions), Key: k,
			UpdateExpression:          aws.String("ADD attempts :one SET expiresAt = :exp, windowStart = if_not_exists(windowStart, :now)"),
			ConditionExpression:       aws.String("attribute_not_exists(pk) OR (windowStart > :floor AND " + unlocked + ")"),
			ExpressionAttributeValues: vals,
			ReturnValues:              types.ReturnValueAllNew,
		})
		if err == nil {
			var a loginAttempt
			if err := attributevalue.UnmarshalMap(out.Attributes, &a); err != nil {
				return 0, time.Time{}, fmt.Errorf("count login attempt: %w", err)
			}
			return a.Attempts, time.Time{}, nil
		}
		if !ddb.IsConditionFailed(err) {
			return 0, time.Time{}, fmt.Errorf("count login attempt: %w", err)
		}
		_, err = st.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(st.Sessions), Key: k,
			UpdateExpression:          aws.String("SET attempts = :one, windowStart = :now, expiresAt = :exp REMOVE lockedUntil"),
			ConditionExpression:       aws.String("attribute_not_exists(pk) OR (windowStart <= :floor AND " + unlocked + ")"),
			ExpressionAttributeValues: vals,
		})
		if err == nil {
			return 1, time.Time{}, nil
		}
		if !ddb.IsConditionFailed(err) {
			return 0, time.Time{}, fmt.Errorf("count login attempt: %w", err)
		}
		// Neither applied: the identifier is locked, or another attempt
		// started a new window in between (then count again).
		got, err := st.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.Sessions), Key: k, ConsistentRead: aws.Bool(true)})
		if err != nil {
			return 0, time.Time{}, fmt.Errorf("count login attempt: %w", err)
		}
		var a loginAttempt
		if err := attributevalue.UnmarshalMap(got.Item, &a); err != nil {
			return 0, time.Time{}, fmt.Errorf("count login attempt: %w", err)
		}
		if until := time.Unix(a.LockedUntil, 0); a.LockedUntil > 0 && until.After(now) {
			return 0, until, nil
		}
	}
	return 0, time.Time{}, fmt.Errorf("count login attempt: %w", apierr.New(apierr.Conflict, "concurrent logins; try again"))
}

// lockLogin locks an identifier until the given time, unless it is locked
// already.
func (st *store) lockLogin(ctx context.Context, tenantID, provider, id string, until, now time.Time) error {
	_, err := st.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Sessions), Key: loginAttemptKey(tenantID, provider, id),
		UpdateExpression:    aws.String("SET lockedUntil = :until, expiresAt = :exp"),
		ConditionExpression: aws.String("attribute_exists(pk) AND (attribute_not_exists(lockedUntil) OR lockedUntil <= :now)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":until": &types.AttributeValueMemberN{Value: strconv.FormatInt(until.Unix(), 10)},
			":now":   &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Unix(), 10)},
			":exp":   &types.AttributeValueMemberN{Value: strconv.FormatInt(until.Add(LoginWindow).Unix(), 10)},
		},
	})
	if err != nil && !ddb.IsConditionFailed(err) {
		return fmt.Errorf("lock login: %w", err)
	}
	return nil
}

// uncountLoginAttempt takes back one counted attempt of an identifier.
func (st *store) uncountLoginAttempt(ctx context.Context, tenantID, provider, id string) error {
	_, err := st.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Sessions), Key: loginAttemptKey(tenantID, provider, id),
		UpdateExpression:    aws.String("ADD attempts :minus"),
		ConditionExpression: aws.String("attempts > :zero"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":minus": &types.AttributeValueMemberN{Value: "-1"},
			":zero":  &types.AttributeValueMemberN{Value: "0"},
		},
	})
	if err != nil && !ddb.IsConditionFailed(err) {
		return fmt.Errorf("uncount login attempt: %w", err)
	}
	return nil
}

// clearLoginAttempts forgets an identifier's attempts.
func (st *store) clearLoginAttempts(ctx context.Context, tenantID, provider, id string) error {
	_, err := st.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(st.Sessions), Key: loginAttemptKey(tenantID, provider, id),
	})
	if err != nil {
		return fmt.Errorf("clear login attempts: %w", err)
	}
	return nil
}
