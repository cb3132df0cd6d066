package user

import (
	"context"
	"errors"
	"fmt"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/auth"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Users table (every key starts with the tenant id):
//
//	pk = <t>#USER#<userId>                 sk = PROFILE             the user
//	pk = <t>#USER#<userId>                 sk = CRED#<prov>#<id>    a credential
//	pk = <t>#USER#<userId>                 sk = NAME#<word>         name-search entry
//	pk = <t>#CREDID#<prov>#<id>            sk = CREDID              credential uniqueness
//	pk = <t>#DEVICE#<platform>#<deviceId>  sk = DEVICE              one account per device
//
//	gsi1: gsi1pk = <t>#NAME   gsi1sk = <word>#<userId>       (name entries)
//	gsi2: gsi2pk = <t>#USERS  gsi2sk = <created>#<userId>    (users by creation)
//	gsi3: gsi3pk = <t>#USERS  gsi3sk = <updatedAt>#<userId>  (users by update)
//	gsi2: gsi2pk = <t>#CREDS  gsi2sk = <created>#<credId>    (credentials by creation)
//	gsi3: gsi3pk = <t>#CREDS  gsi3sk = <updatedAt>#<credId>  (credentials by update)
//
//	pk = <t>#USER#<userId>                 sk = ADDR#<addressId>    a delivery address
//	pk = <t>#USER#<userId>                 sk = PROFILE#MONEY#<seq> an entry of the app balance's
//	                                                                ledger (shared/domain/ledger owns them;
//	                                                                they sort after PROFILE, out of
//	                                                                the reads of a user's items)
//
// Sessions table:
//
//	pk = <t>#SESSION#<sha256(token)>  sk = SESSION
//	gsi1: gsi1pk = <t>#USER#<userId>  gsi1sk = SESSION#<sha256(token)>
//	pk = <t>#LOGIN#<sha256(provider#id)>  sk = LOGIN   password login attempts
//
// Guests, their credentials and sessions carry expiresAt (epoch seconds) for
// DynamoDB TTL; since TTL deletion is lazy every read also treats an item
// whose expiresAt has passed as absent.

const (
	skProfile = profile.SK
	skSession = auth.SessionSK
	skCredID  = profile.CredentialSK
	skDevice  = "DEVICE"

	skLoginAttempt = "LOGIN"
)

func userPK(t, uid string) string               { return profile.PK(t, uid) }
func credSK(provider, id string) string         { return "CRED#" + provider + "#" + id }
func credIndexPK(t, provider, id string) string { return profile.CredentialPK(t, provider, id) }
func nameSK(word string) string                 { return "NAME#" + word }
func namesPK(t string) string                   { return t + "#NAME" }
func usersPK(t string) string                   { return t + "#USERS" }
func credsPK(t string) string                   { return t + "#CREDS" }
func devicePK(t, platform, id string) string    { return t + "#DEVICE#" + platform + "#" + id }
func sessionPK(t, hash string) string           { return auth.SessionPK(t, hash) }

// loginAttemptPK keys an identifier's login attempts by a hash, so that the
// Sessions table holds no credential in clear.
func loginAttemptPK(t, provider, id string) string {
	return t + "#LOGIN#" + tokenHash(provider+"#"+id)
}

// loginAttemptKey is the key of an identifier's login attempts item.
func loginAttemptKey(t, provider, id string) map[string]types.AttributeValue {
	return key(loginAttemptPK(t, provider, id), skLoginAttempt)
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// record is a user as stored.
type record struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI2PK string `dynamodbav:"gsi2pk"`
	GSI2SK string `dynamodbav:"gsi2sk"`
	GSI3PK string `dynamodbav:"gsi3pk"`
	GSI3SK string `dynamodbav:"gsi3sk"`

	ID                          string            `dynamodbav:"id"`
	TenantID                    string            `dynamodbav:"tenantId"`
	FirstName                   string            `dynamodbav:"firstName"`
	LastName                    string            `dynamodbav:"lastName"`
	FullName                    string            `dynamodbav:"fullName"`
	State                       string            `dynamodbav:"state"`
	IsGuest                     bool              `dynamodbav:"isGuest"`
	Roles                       []string          `dynamodbav:"roles"`
	Subscribed                  bool              `dynamodbav:"subscribed"`
	Birthdate                   string            `dynamodbav:"birthdate,omitempty"`
	Gender                      string            `dynamodbav:"gender,omitempty"`
	ActivationCode              string            `dynamodbav:"activationCode,omitempty"`
	ActivationAttempts          int               `dynamodbav:"activationAttempts"`
	ResetCode                   string            `dynamodbav:"resetCode,omitempty"`
	ResetAttempts               int               `dynamodbav:"resetAttempts"`
	ResetExpiresAt              int64             `dynamodbav:"resetExpiresAt,omitempty"`
	PasswordHash                string            `dynamodbav:"passwordHash,omitempty"`
	DefaultTip                  *Tip              `dynamodbav:"defaultTip,omitempty"`
	FavouriteLocations          []string          `dynamodbav:"favouriteLocations,omitempty"`
	FavouriteProducts           []string          `dynamodbav:"favouriteProducts,omitempty"`
	PrimaryPlatform             string            `dynamodbav:"primaryPlatform"`
	Contacts                    map[string]any    `dynamodbav:"contacts,omitempty"`
	Extended                    map[string]any    `dynamodbav:"extended,omitempty"`
	Card                        map[string]any    `dynamodbav:"card,omitempty"`
	HasPaymentCard              bool              `dynamodbav:"hasPaymentCard"`
	HasProfilePhoto             bool              `dynamodbav:"hasProfilePhoto"`
	PushEndpoints               map[string]string `dynamodbav:"pushEndpoints,omitempty"`
	HasAgreedToShareData        bool              `dynamodbav:"hasAgreedToShareData"`
	HasAgreedToReceiveMarketing bool              `dynamodbav:"hasAgreedToReceiveMarketing"`
	ExternalPosID               string            `dynamodbav:"externalPosId,omitempty"`
	ExternalLoyaltyID           string            `dynamodbav:"externalLoyaltyId,omitempty"`
	Balance                     money.Amount      `dynamodbav:"balance"`
	// MoneySeq is the number of the balance's ledger entries (written by
	// the ledger with the balance: profile.BalanceMove).
	MoneySeq   int      `dynamodbav:"moneySeq,omitempty"`
	Points     int      `dynamodbav:"points"`
	NameWords  []string `dynamodbav:"nameWords,omitempty"`
	DeviceKey  string   `dynamodbav:"deviceKey,omitempty"`
	CodeSends  int      `dynamodbav:"codeSends"`
	CodeWindow int64    `dynamodbav:"codeWindow"`
	Created    string   `dynamodbav:"created"`
	UpdatedAt  string   `dynamodbav:"updatedAt"`
	Deleted    bool     `dynamodbav:"deleted"`
	Version    int      `dynamodbav:"version"`
	ExpiresAt  int64    `dynamodbav:"expiresAt,omitempty"`
	// SessionEpoch counts the changes that ended the user's sessions (role
	// change, password reset, deletion); a session is stored only while it
	// is unchanged since the login read the user (see putSessionAtEpoch).
	SessionEpoch int `dynamodbav:"sessionEpoch,omitempty"`

	// creds are the user's live credentials when this request read them
	// already (nil: not read), so that a view does not read them again.
	// They are never stored.
	creds []credRecord
}

func (r *record) setKeys() {
	r.PK, r.SK = userPK(r.TenantID, r.ID), skProfile
	r.GSI2PK, r.GSI2SK = usersPK(r.TenantID), r.Created+"#"+r.ID
	r.GSI3PK, r.GSI3SK = usersPK(r.TenantID), r.UpdatedAt+"#"+r.ID
}

func (r *record) expired(now time.Time) bool { return r.ExpiresAt > 0 && r.ExpiresAt <= now.Unix() }

// credRecord is a credential as stored under its user.
type credRecord struct {
	PK             string `dynamodbav:"pk"`
	SK             string `dynamodbav:"sk"`
	GSI2PK         string `dynamodbav:"gsi2pk,omitempty"`
	GSI2SK         string `dynamodbav:"gsi2sk,omitempty"`
	GSI3PK         string `dynamodbav:"gsi3pk,omitempty"`
	GSI3SK         string `dynamodbav:"gsi3sk,omitempty"`
	UserID         string `dynamodbav:"userId"`
	CredID         string `dynamodbav:"credId"`
	Identifier     string `dynamodbav:"identifier"`
	Provider       string `dynamodbav:"provider"`
	IsVerified     bool   `dynamodbav:"isVerified"`
	IsPrimary      bool   `dynamodbav:"isPrimary"`
	VerifyCode     string `dynamodbav:"verifyCode,omitempty"`
	VerifyAttempts int    `dynamodbav:"verifyAttempts"`
	Created        string `dynamodbav:"created"`
	UpdatedAt      string `dynamodbav:"updatedAt"`
	ExpiresAt      int64  `dynamodbav:"expiresAt,omitempty"`
}

// indexed returns c with its tenant-wide list keys (gsi2 by creation, gsi3
// by update) set.
func (c credRecord) indexed(tenantID string) credRecord {
	c.GSI2PK, c.GSI2SK = credsPK(tenantID), c.Created+"#"+c.CredID
	c.GSI3PK, c.GSI3SK = credsPK(tenantID), c.UpdatedAt+"#"+c.CredID
	return c
}

func (c credRecord) view() Credential {
	return Credential{ID: c.CredID, UserID: c.UserID, Identifier: c.Identifier, Provider: c.Provider, IsVerified: c.IsVerified, IsPrimary: c.IsPrimary, Created: c.Created, UpdatedAt: c.UpdatedAt}
}

// credIndex makes a credential unique in its tenant.
type credIndex struct {
	PK         string `dynamodbav:"pk"`
	SK         string `dynamodbav:"sk"`
	UserID     string `dynamodbav:"userId"`
	Provider   string `dynamodbav:"provider"`
	Identifier string `dynamodbav:"identifier"`
	ExpiresAt  int64  `dynamodbav:"expiresAt,omitempty"`
}

// nameEntry is one word of a user's full name in the name-search index.
type nameEntry struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	GSI1PK    string `dynamodbav:"gsi1pk"`
	GSI1SK    string `dynamodbav:"gsi1sk"`
	UserID    string `dynamodbav:"userId"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

// deviceEntry binds a device to one account.
type deviceEntry struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	UserID string `dynamodbav:"userId"`
}

// sessionRecord is a session as stored (the auth package owns its layout);
// the token itself is never stored.
type sessionRecord = auth.Session

// store is the identity domain's access to DynamoDB.
type store struct {
	db       ddb.API
	users    string
	sessions string
}

func (s *store) put(table string, v any, cond *string) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("marshal: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item, ConditionExpression: cond}}, nil
}

// putIfFree returns a Put of a uniqueness item that succeeds when the item
// is absent, expired, or already owned by userID.
func (s *store) putIfFree(v any, userID string, now time.Time) (types.TransactWriteItem, error) {
	it, err := s.put(s.users, v, aws.String("attribute_not_exists(pk) OR (attribute_exists(expiresAt) AND expiresAt <= :now) OR userId = :uid"))
	if err != nil {
		return it, err
	}
	it.Put.ExpressionAttributeValues = map[string]types.AttributeValue{
		":now": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Unix())},
		":uid": &types.AttributeValueMemberS{Value: userID},
	}
	return it, nil
}

func (s *store) getUser(ctx context.Context, tenantID, userID string, now time.Time) (record, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.users), Key: key(userPK(tenantID, userID), skProfile), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return record{}, fmt.Errorf("get user %s: %w", userID, err)
	}
	if out.Item == nil {
		return record{}, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	var r record
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return record{}, fmt.Errorf("get user %s: %w", userID, err)
	}
	if r.expired(now) {
		return record{}, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	return r, nil
}

// userIDByCredential returns the owner of a credential identifier.
func (s *store) userIDByCredential(ctx context.Context, tenantID, provider, id string, now time.Time) (string, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.users), Key: key(credIndexPK(tenantID, provider, id), skCredID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("find credential: %w", err)
	}
	if out.Item == nil {
		return "", fmt.Errorf("find credential: %w", ErrNotFound)
	}
	var ci credIndex
	if err := attributevalue.UnmarshalMap(out.Item, &ci); err != nil {
		return "", fmt.Errorf("find credential: %w", err)
	}
	if ci.ExpiresAt > 0 && ci.ExpiresAt <= now.Unix() {
		return "", fmt.Errorf("find credential: %w", ErrNotFound)
	}
	return ci.UserID, nil
}

// ownersOf returns the users holding a bare e-mail address or mobile number
// (read as either provider, as GET /users?credentialId= and GET
// /credentials?id= take it).
func (s *store) ownersOf(ctx context.Context, tenantID, raw string, now time.Time) ([]string, error) {
	var out []string
	for _, p := range []string{ProviderEmail, ProviderMobile} {
		id, err := NormalizeCredential(p, raw)
		if err != nil {
			continue
		}
		uid, err := s.userIDByCredential(ctx, tenantID, p, id, now)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, uid)
	}
	return out, nil
}

// userIsLive is a transaction check that the user exists and is not
// deleted, so nothing is added to a user being deleted.
func (s *store) userIsLive(tenantID, userID string) types.TransactWriteItem {
	return profile.LiveCheck(s.users, tenantID, userID)
}

// codeSendCounted is a transaction update that counts one more code sent
// to the live user r (see countCodeSend) and fails if the user was deleted
// or another request counted a code meanwhile. It returns ErrTooManyCodes
// when the hour's sends are used up.
func (s *store) codeSendCounted(r record, now time.Time) (types.TransactWriteItem, error) {
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
		TableName: aws.String(s.users), Key: key(r.PK, r.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// codeSendUnchanged is the condition that no other request counted a code
// sent to r since r was read.
func codeSendUnchanged(r record) expression.ConditionBuilder {
	return expression.Or(expression.Name("codeSends").AttributeNotExists(), expression.Name("codeSends").Equal(expression.Value(r.CodeSends))).
		And(expression.Or(expression.Name("codeWindow").AttributeNotExists(), expression.Name("codeWindow").Equal(expression.Value(r.CodeWindow))))
}

// primaryOwner returns the owner of a credential identifier only when it is
// one of that user's primary credentials: secondary credentials cannot log
// in, activate a user or reset a password.
func (s *store) primaryOwner(ctx context.Context, tenantID, provider, id string, now time.Time) (string, error) {
	uid, err := s.userIDByCredential(ctx, tenantID, provider, id, now)
	if err != nil {
		return "", err
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.users), Key: key(userPK(tenantID, uid), credSK(provider, id)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("get credential: %w", err)
	}
	var c credRecord
	if out.Item != nil {
		if err := attributevalue.UnmarshalMap(out.Item, &c); err != nil {
			return "", fmt.Errorf("get credential: %w", err)
		}
	}
	if out.Item == nil || !c.IsPrimary {
		return "", fmt.Errorf("find credential: %w", ErrNotFound)
	}
	return uid, nil
}

func (s *store) credentials(ctx context.Context, tenantID, userID string, now time.Time) ([]credRecord, error) {
	kc := expression.Key("pk").Equal(expression.Value(userPK(tenantID, userID))).And(expression.Key("sk").BeginsWith("CRED#"))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.users), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("list credentials of %s: %w", userID, err)
	}
	var creds []credRecord
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &creds); err != nil {
		return nil, fmt.Errorf("list credentials of %s: %w", userID, err)
	}
	kept := creds[:0]
	for _, c := range creds {
		if c.ExpiresAt == 0 || c.ExpiresAt > now.Unix() {
			kept = append(kept, c)
		}
	}
	return kept, nil
}

// userWithCredentials reads a user and its live credentials in one query
// of the user's partition (the profile, the credentials and the few
// name-search entries between them, which it skips); a missing or expired
// user is ErrNotFound. The credentials are set on the record too (see
// record.creds).
func (s *store) userWithCredentials(ctx context.Context, tenantID, userID string, now time.Time) (record, []credRecord, error) {
	kc := expression.Key("pk").Equal(expression.Value(userPK(tenantID, userID))).
		And(expression.Key("sk").Between(expression.Value("CRED#"), expression.Value(skProfile)))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.users), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	}
	var (
		r     record
		found bool
		creds = []credRecord{}
	)
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
		}
		for _, it := range out.Items {
			sk, _ := it["sk"].(*types.AttributeValueMemberS)
			switch {
			case sk == nil:
			case sk.Value == skProfile:
				if err := attributevalue.UnmarshalMap(it, &r); err != nil {
					return record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
				}
				found = true
			case strings.HasPrefix(sk.Value, "CRED#"):
				var c credRecord
				if err := attributevalue.UnmarshalMap(it, &c); err != nil {
					return record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
				}
				if c.ExpiresAt == 0 || c.ExpiresAt > now.Unix() {
					creds = append(creds, c)
				}
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if !found || r.expired(now) {
		return record{}, nil, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	r.creds = creds
	return r, creds, nil
}

// transact runs a transaction, retrying a few times when it lost a race with
// another transaction on the same items.
func (s *store) transact(ctx context.Context, items []types.TransactWriteItem) error {
	return ddb.Transact(ctx, s.db, items)
}

// failedAt returns the indexes of the items whose condition failed.
func failedAt(err error) []int { return ddb.FailedConditions(err) }

// --- sessions ---

func (s *store) putSession(ctx context.Context, rec sessionRecord) error {
	item, err := attributevalue.MarshalMap(rec)
	if err != nil {
		return fmt.Errorf("put session: %w", err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.sessions), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
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
	put, err := s.put(s.sessions, rec, aws.String("attribute_not_exists(pk)"))
	if err != nil {
		return fmt.Errorf("put session of %s: %w", rec.UserID, err)
	}
	cond := "attribute_exists(pk) AND deleted = :false AND (attribute_not_exists(sessionEpoch) OR sessionEpoch = :e)"
	check := types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(s.users), Key: key(userPK(rec.TenantID, rec.UserID), skProfile),
		ConditionExpression: aws.String(cond),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":false": &types.AttributeValueMemberBOOL{Value: false},
			":e":     &types.AttributeValueMemberN{Value: fmt.Sprint(epoch)},
		},
	}}
	err = s.transact(ctx, []types.TransactWriteItem{put, check})
	if slices.Contains(failedAt(err), 1) {
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
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.users), Key: key(userPK(tenantID, userID), skProfile),
		UpdateExpression:          aws.String("ADD sessionEpoch :one"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	if ddb.IsConditionFailed(err) {
		return fmt.Errorf("end sessions of %s: %w", userID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("end sessions of %s: %w", userID, err)
	}
	return nil
}

func (s *store) getSession(ctx context.Context, tenantID, hash string, now time.Time) (sessionRecord, error) {
	a := auth.Authenticator{DB: s.db, Sessions: s.sessions, Clock: fixedClock{now}}
	return a.Get(ctx, tenantID, hash)
}

func (s *store) deleteSession(ctx context.Context, tenantID, hash string) error {
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.sessions), Key: key(sessionPK(tenantID, hash), skSession)})
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// deleteSessions removes every session of a user and returns how many.
func (s *store) deleteSessions(ctx context.Context, tenantID, userID string) (int, error) {
	a := auth.Authenticator{DB: s.db, Sessions: s.sessions}
	return a.EndSessions(ctx, tenantID, userID)
}

// batchGetUsers reads users by id, in the order given, skipping missing and
// expired ones.
func (s *store) batchGetUsers(ctx context.Context, tenantID string, ids []string, now time.Time) ([]record, error) {
	byID := map[string]record{}
	for i := 0; i < len(ids); i += 100 {
		end := min(i+100, len(ids))
		seen := map[string]bool{}
		var keys []map[string]types.AttributeValue
		for _, id := range ids[i:end] {
			if !seen[id] {
				seen[id] = true
				keys = append(keys, key(userPK(tenantID, id), skProfile))
			}
		}
		req := map[string]types.KeysAndAttributes{s.users: {Keys: keys}}
		for len(req) > 0 {
			out, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("batch get users: %w", err)
			}
			var recs []record
			if err := attributevalue.UnmarshalListOfMaps(out.Responses[s.users], &recs); err != nil {
				return nil, fmt.Errorf("batch get users: %w", err)
			}
			for _, r := range recs {
				if !r.expired(now) {
					byID[r.ID] = r
				}
			}
			req = out.UnprocessedKeys
		}
	}
	out := make([]record, 0, len(ids))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

var errStop = errors.New("stop")

// counterStep changes one of the counters kept on a user's profile item
// (addressCount, credentialCount, primaryCount) so that limits hold under
// concurrent requests. A counter that is still missing (users written
// before it existed, or a record replaced by a guest conversion) starts
// from Read, the count the request just read.
type counterStep struct {
	Name  string
	Read  int
	Delta int
	// Max, when above zero, is the most the counter may reach.
	Max int
	// Min, when above zero, is the least the counter may drop to.
	Min int
}

// userCounted is a transaction update that applies steps to the live user
// r's counters, with upd and cond (optional) merged in since a transaction
// may touch the user item only once. Its condition fails when the user is
// gone or deleted, or when a step would pass its Max or Min.
func (s *store) userCounted(r record, steps []counterStep, upd expression.UpdateBuilder, cond *expression.ConditionBuilder) (types.TransactWriteItem, error) {
	c := expression.Name("pk").AttributeExists().And(expression.Name("deleted").Equal(expression.Value(false)))
	if cond != nil {
		c = c.And(*cond)
	}
	for _, st := range steps {
		n := expression.Name(st.Name)
		upd = upd.Set(n, expression.Plus(expression.IfNotExists(n, expression.Value(st.Read)), expression.Value(st.Delta)))
		switch {
		case st.Max > 0:
			c = c.And(expression.Or(n.AttributeNotExists(), n.LessThanEqual(expression.Value(st.Max-st.Delta))))
		case st.Min > 0:
			c = c.And(expression.Or(n.AttributeNotExists(), n.GreaterThanEqual(expression.Value(st.Min-st.Delta))))
		}
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(c).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("count for user %s: %w", r.ID, err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.users), Key: key(r.PK, r.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}
