// Package auth is who calls: it resolves the credentials a request
// presents (web.Authenticator) from the Sessions table and the tenants'
// service keys, and owns the session items' key layout, which the users
// domain (shared/domain/account) uses to write sessions. Every HTTP function links
// this small package; only the accounts function links sign-up, login, SSO
// and messaging. Sessions are read on every request (a logout or a role
// change applies at once); tenants and service keys come from the
// function's tenant cache (tenant.Cache, tenant.CacheTTL).
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// PasswordCost is the Argon2id cost of new password hashes. Its zero
// value, which every function uses, is the OWASP Password Storage Cheat
// Sheet's first recommended configuration (19 MiB, 2 iterations); the
// tests (shared/testkit) lower it, because under the race detector each
// hash of 19 MiB takes about 240 ms of CPU (48 ms without it) and the
// suite hashes a password for every user it signs up. A stored hash names
// its own cost, so hashes of any cost are checked alike.
type PasswordCost struct {
	// MemoryKiB and Time are the memory (KiB) and iterations; 0 is the
	// OWASP value.
	MemoryKiB, Time uint32
}

// Item layout of the Sessions table for sessions (the token itself is
// never stored, only its SHA-256):
//
//	pk = <t>#SESSION#<sha256(token)>  sk = SESSION
//	gsi1: gsi1pk = <t>#USER#<userId>  gsi1sk = SESSION#<sha256(token)>   a user's sessions

// SessionSK is the sort key of a session item.
const SessionSK = "SESSION"

// SessionPK is the partition key of the session of a token hash.
func SessionPK(tenantID, hash string) string { return tenantID + "#SESSION#" + hash }

// UserIndexPK and UserIndexSK are a session's keys in the index of a
// user's sessions.
func UserIndexPK(tenantID, userID string) string { return tenantID + "#USER#" + userID }

// UserIndexSK is a session's sort key in the index of a user's sessions.
func UserIndexSK(hash string) string { return "SESSION#" + hash }

// TokenHash is the stored form of a session token.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Session is a session as stored.
type Session struct {
	PK        string   `dynamodbav:"pk"`
	SK        string   `dynamodbav:"sk"`
	GSI1PK    string   `dynamodbav:"gsi1pk"`
	GSI1SK    string   `dynamodbav:"gsi1sk"`
	TenantID  string   `dynamodbav:"tenantId"`
	UserID    string   `dynamodbav:"userId"`
	Roles     []string `dynamodbav:"roles"`
	IsGuest   bool     `dynamodbav:"isGuest"`
	Service   bool     `dynamodbav:"service"`
	Permanent bool     `dynamodbav:"permanent"`
	Created   string   `dynamodbav:"created"`
	ExpiresAt int64    `dynamodbav:"expiresAt,omitempty"`
}

// Errors of authentication (all 401).
var (
	ErrBadSession    = apierr.New(apierr.Unauthorized, "the session token is invalid or has expired")
	ErrBadServiceKey = apierr.New(apierr.Unauthorized, "the service key is invalid")
	ErrUnknownTenant = apierr.New(apierr.Unauthorized, "unknown application id")
)

// SessionKey returns the key of the session of a token hash.
func SessionKey(tenantID, hash string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: SessionPK(tenantID, hash)},
		"sk": &types.AttributeValueMemberS{Value: SessionSK},
	}
}

// Authenticator resolves session tokens, service keys and tenants for the
// web middleware.
type Authenticator struct {
	DB       ddb.API
	Sessions string
	Tenants  *tenant.Store
	Clock    clock.Clock
}

// Get reads a live session by its token hash; an absent or expired one is
// ErrBadSession.
func (a *Authenticator) Get(ctx context.Context, tenantID, hash string) (Session, error) {
	out, err := a.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(a.Sessions), Key: SessionKey(tenantID, hash)})
	if err != nil {
		return Session{}, fmt.Errorf("get session: %w", err)
	}
	if out.Item == nil {
		return Session{}, ErrBadSession
	}
	var rec Session
	if err := attributevalue.UnmarshalMap(out.Item, &rec); err != nil {
		return Session{}, fmt.Errorf("get session: %w", err)
	}
	if rec.ExpiresAt > 0 && rec.ExpiresAt <= a.Clock.Now().Unix() {
		return Session{}, ErrBadSession
	}
	return rec, nil
}

// Session resolves a session token (<tenantId>.<random>).
func (a *Authenticator) Session(ctx context.Context, token string) (actor.Actor, error) {
	tenantID, _, ok := strings.Cut(token, ".")
	if !ok || !tenant.ValidID(tenantID) || len(token) > 200 {
		return actor.Actor{}, ErrBadSession
	}
	hash := TokenHash(token)
	rec, err := a.Get(ctx, tenantID, hash)
	if err != nil {
		return actor.Actor{}, err
	}
	return actor.Actor{TenantID: rec.TenantID, UserID: rec.UserID, SessionKey: hash, Roles: rec.Roles, Guest: rec.IsGuest, Service: rec.Service}, nil
}

// ServiceKey resolves a tenant service key; the caller acts as an ADMIN.
func (a *Authenticator) ServiceKey(ctx context.Context, key string) (actor.Actor, error) {
	if len(key) > 200 {
		return actor.Actor{}, ErrBadServiceKey
	}
	t, err := a.Tenants.ByServiceKey(ctx, key)
	if errors.Is(err, tenant.ErrNotFound) {
		return actor.Actor{}, ErrBadServiceKey
	}
	if err != nil {
		return actor.Actor{}, err
	}
	return actor.Actor{TenantID: t.ID, TenantTitle: t.Title, Service: true, Roles: []string{actor.RoleAdmin}}, nil
}

// Tenant resolves the x-application-id of an anonymous caller.
func (a *Authenticator) Tenant(ctx context.Context, id string) (actor.Actor, error) {
	t, err := a.Tenants.Get(ctx, id)
	if errors.Is(err, tenant.ErrNotFound) {
		return actor.Actor{}, ErrUnknownTenant
	}
	if err != nil {
		return actor.Actor{}, err
	}
	return actor.Actor{TenantID: t.ID, TenantTitle: t.Title}, nil
}

// EndSessions deletes every session of a user (ServiceUserID: every admin
// session made from the tenant's service key) and returns how many.
func (a *Authenticator) EndSessions(ctx context.Context, tenantID, userID string) (int, error) {
	n := 0
	var start map[string]types.AttributeValue
	for {
		out, err := a.DB.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(a.Sessions),
			IndexName:                 aws.String("gsi1"),
			KeyConditionExpression:    aws.String("gsi1pk = :u"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":u": &types.AttributeValueMemberS{Value: UserIndexPK(tenantID, userID)}},
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return n, fmt.Errorf("list sessions of %s: %w", userID, err)
		}
		for _, it := range out.Items {
			_, err := a.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(a.Sessions), Key: map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]}})
			if err != nil {
				return n, fmt.Errorf("delete session of %s: %w", userID, err)
			}
			n++
		}
		if len(out.LastEvaluatedKey) == 0 {
			return n, nil
		}
		start = out.LastEvaluatedKey
	}
}

// ServiceUserID is the user id of the admin sessions made from a tenant's
// service key (POST /sessions with the key).
const ServiceUserID = "service"

// EndServiceSessions ends every admin session made from the tenant's
// service key (when the key is rotated).
func (a *Authenticator) EndServiceSessions(ctx context.Context, tenantID string) error {
	_, err := a.EndSessions(ctx, tenantID, ServiceUserID)
	return err
}
