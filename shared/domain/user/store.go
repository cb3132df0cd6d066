package user

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/auth"
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
//	pk = <t>#USER#<userId>                 sk = ADDR#<addressId>    a delivery address (the
//	                                                                directory part owns them)
//	pk = <t>#USER#<userId>                 sk = PROFILE#MONEY#<seq> an entry of the app balance's
//	                                                                ledger (shared/domain/ledger owns them;
//	                                                                they sort after PROFILE, out of
//	                                                                the reads of a user's items)
//
// The Sessions table's sessions and login attempts are the accounts
// part's (shared/domain/account's store.go); DeleteSessions ends a user's
// sessions for every part.
//
// Guests, their credentials and sessions carry expiresAt (epoch seconds) for
// DynamoDB TTL; since TTL deletion is lazy every read also treats an item
// whose expiresAt has passed as absent.

// Sort keys of the user's items.
const (
	SKProfile = profile.SK
	SKCredID  = profile.CredentialSK
	SKDevice  = "DEVICE"
)

// Keys of the user's items and indexes (see the layout above).
func UserPK(t, uid string) string               { return profile.PK(t, uid) }
func CredSK(provider, id string) string         { return "CRED#" + provider + "#" + id }
func CredIndexPK(t, provider, id string) string { return profile.CredentialPK(t, provider, id) }
func NameSK(word string) string                 { return "NAME#" + word }
func NamesPK(t string) string                   { return t + "#NAME" }
func UsersPK(t string) string                   { return t + "#USERS" }
func CredsPK(t string) string                   { return t + "#CREDS" }
func DevicePK(t, platform, id string) string    { return t + "#DEVICE#" + platform + "#" + id }

// Key is the primary key pk, sk of an item.
func Key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: sk},
	}
}

// Record is a user as stored.
type Record struct {
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
	Metadata                    map[string]string `dynamodbav:"metadata,omitempty"`
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
	// is unchanged since the login read the user (see putSessionAtEpoch
	// in shared/domain/account).
	SessionEpoch int `dynamodbav:"sessionEpoch,omitempty"`

	// Creds are the user's live credentials when this request read them
	// already (nil: not read), so that a view does not read them again.
	// They are never stored.
	Creds []CredRecord
}

// SetKeys sets the record's key and its list keys (by creation, by
// update).
func (r *Record) SetKeys() {
	r.PK, r.SK = UserPK(r.TenantID, r.ID), SKProfile
	r.GSI2PK, r.GSI2SK = UsersPK(r.TenantID), r.Created+"#"+r.ID
	r.GSI3PK, r.GSI3SK = UsersPK(r.TenantID), r.UpdatedAt+"#"+r.ID
}

// Expired reports whether the record (a guest's) has expired at now.
func (r *Record) Expired(now time.Time) bool { return r.ExpiresAt > 0 && r.ExpiresAt <= now.Unix() }

// CredRecord is a credential as stored under its user.
type CredRecord struct {
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

// Indexed returns c with its tenant-wide list keys (gsi2 by creation, gsi3
// by update) set.
func (c CredRecord) Indexed(tenantID string) CredRecord {
	c.GSI2PK, c.GSI2SK = CredsPK(tenantID), c.Created+"#"+c.CredID
	c.GSI3PK, c.GSI3SK = CredsPK(tenantID), c.UpdatedAt+"#"+c.CredID
	return c
}

// View is the credential's API form.
func (c CredRecord) View() Credential {
	return Credential{ID: c.CredID, UserID: c.UserID, Identifier: c.Identifier, Provider: c.Provider, IsVerified: c.IsVerified, IsPrimary: c.IsPrimary, Created: c.Created, UpdatedAt: c.UpdatedAt}
}

// CredIndex makes a credential unique in its tenant.
type CredIndex struct {
	PK         string `dynamodbav:"pk"`
	SK         string `dynamodbav:"sk"`
	UserID     string `dynamodbav:"userId"`
	Provider   string `dynamodbav:"provider"`
	Identifier string `dynamodbav:"identifier"`
	ExpiresAt  int64  `dynamodbav:"expiresAt,omitempty"`
}

// NameEntry is one word of a user's full name in the name-search index.
type NameEntry struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	GSI1PK    string `dynamodbav:"gsi1pk"`
	GSI1SK    string `dynamodbav:"gsi1sk"`
	UserID    string `dynamodbav:"userId"`
	ExpiresAt int64  `dynamodbav:"expiresAt,omitempty"`
}

// DeviceEntry binds a device to one account.
type DeviceEntry struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	UserID string `dynamodbav:"userId"`
}

// Store is the users domain's access to DynamoDB: the user's items in the
// Users table, and the sessions it ends.
type Store struct {
	DB       ddb.API
	Users    string
	Sessions string
}

// Put returns a Put of v into table under cond (nil: none), for a
// transaction.
func (s *Store) Put(table string, v any, cond *string) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("marshal: %w", err)
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item, ConditionExpression: cond}}, nil
}

// PutIfFree returns a Put of a uniqueness item that succeeds when the item
// is absent, expired, or already owned by userID.
func (s *Store) PutIfFree(v any, userID string, now time.Time) (types.TransactWriteItem, error) {
	it, err := s.Put(s.Users, v, aws.String("attribute_not_exists(pk) OR (attribute_exists(expiresAt) AND expiresAt <= :now) OR userId = :uid"))
	if err != nil {
		return it, err
	}
	it.Put.ExpressionAttributeValues = map[string]types.AttributeValue{
		":now": &types.AttributeValueMemberN{Value: fmt.Sprint(now.Unix())},
		":uid": &types.AttributeValueMemberS{Value: userID},
	}
	return it, nil
}

// GetUser reads a user; a missing or expired user is ErrNotFound.
func (s *Store) GetUser(ctx context.Context, tenantID, userID string, now time.Time) (Record, error) {
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Users), Key: Key(UserPK(tenantID, userID), SKProfile), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Record{}, fmt.Errorf("get user %s: %w", userID, err)
	}
	if out.Item == nil {
		return Record{}, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	var r Record
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return Record{}, fmt.Errorf("get user %s: %w", userID, err)
	}
	if r.Expired(now) {
		return Record{}, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	return r, nil
}

// UserIDByCredential returns the owner of a credential identifier.
func (s *Store) UserIDByCredential(ctx context.Context, tenantID, provider, id string, now time.Time) (string, error) {
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Users), Key: Key(CredIndexPK(tenantID, provider, id), SKCredID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("find credential: %w", err)
	}
	if out.Item == nil {
		return "", fmt.Errorf("find credential: %w", ErrNotFound)
	}
	var ci CredIndex
	if err := attributevalue.UnmarshalMap(out.Item, &ci); err != nil {
		return "", fmt.Errorf("find credential: %w", err)
	}
	if ci.ExpiresAt > 0 && ci.ExpiresAt <= now.Unix() {
		return "", fmt.Errorf("find credential: %w", ErrNotFound)
	}
	return ci.UserID, nil
}

// OwnersOf returns the users holding a bare e-mail address or mobile number
// (read as either provider, as GET /users?credentialId= and GET
// /credentials?id= take it).
func (s *Store) OwnersOf(ctx context.Context, tenantID, raw string, now time.Time) ([]string, error) {
	var out []string
	for _, p := range []string{ProviderEmail, ProviderMobile} {
		id, err := NormalizeCredential(p, raw)
		if err != nil {
			continue
		}
		uid, err := s.UserIDByCredential(ctx, tenantID, p, id, now)
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

// UserIsLive is a transaction check that the user exists and is not
// deleted, so nothing is added to a user being deleted.
func (s *Store) UserIsLive(tenantID, userID string) types.TransactWriteItem {
	return profile.LiveCheck(s.Users, tenantID, userID)
}

// PrimaryOwner returns the owner of a credential identifier only when it is
// one of that user's primary credentials: secondary credentials cannot log
// in, activate a user or reset a password.
func (s *Store) PrimaryOwner(ctx context.Context, tenantID, provider, id string, now time.Time) (string, error) {
	uid, err := s.UserIDByCredential(ctx, tenantID, provider, id, now)
	if err != nil {
		return "", err
	}
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Users), Key: Key(UserPK(tenantID, uid), CredSK(provider, id)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return "", fmt.Errorf("get credential: %w", err)
	}
	var c CredRecord
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

// Credentials returns a user's live credentials.
func (s *Store) Credentials(ctx context.Context, tenantID, userID string, now time.Time) ([]CredRecord, error) {
	kc := expression.Key("pk").Equal(expression.Value(UserPK(tenantID, userID))).And(expression.Key("sk").BeginsWith("CRED#"))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, fmt.Errorf("list credentials: %w", err)
	}
	out, err := s.DB.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.Users), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("list credentials of %s: %w", userID, err)
	}
	var creds []CredRecord
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

// UserWithCredentials reads a user and its live credentials in one query
// of the user's partition (the profile, the credentials and the few
// name-search entries between them, which it skips); a missing or expired
// user is ErrNotFound. The credentials are set on the record too (see
// Record.Creds).
func (s *Store) UserWithCredentials(ctx context.Context, tenantID, userID string, now time.Time) (Record, []CredRecord, error) {
	kc := expression.Key("pk").Equal(expression.Value(UserPK(tenantID, userID))).
		And(expression.Key("sk").Between(expression.Value("CRED#"), expression.Value(SKProfile)))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return Record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.Users), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	}
	var (
		r     Record
		found bool
		creds = []CredRecord{}
	)
	for {
		out, err := s.DB.Query(ctx, in)
		if err != nil {
			return Record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
		}
		for _, it := range out.Items {
			sk, _ := it["sk"].(*types.AttributeValueMemberS)
			switch {
			case sk == nil:
			case sk.Value == SKProfile:
				if err := attributevalue.UnmarshalMap(it, &r); err != nil {
					return Record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
				}
				found = true
			case strings.HasPrefix(sk.Value, "CRED#"):
				var c CredRecord
				if err := attributevalue.UnmarshalMap(it, &c); err != nil {
					return Record{}, nil, fmt.Errorf("get user %s: %w", userID, err)
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
	if !found || r.Expired(now) {
		return Record{}, nil, fmt.Errorf("get user %s: %w", userID, ErrNotFound)
	}
	r.Creds = creds
	return r, creds, nil
}

// Transact runs a transaction, retrying a few times when it lost a race with
// another transaction on the same items.
func (s *Store) Transact(ctx context.Context, items []types.TransactWriteItem) error {
	return ddb.Transact(ctx, s.DB, items)
}

// failedAt returns the indexes of the items whose condition failed.
func failedAt(err error) []int { return ddb.FailedConditions(err) }

// DeleteSessions removes every session of a user and returns how many.
func (s *Store) DeleteSessions(ctx context.Context, tenantID, userID string) (int, error) {
	a := auth.Authenticator{DB: s.DB, Sessions: s.Sessions}
	return a.EndSessions(ctx, tenantID, userID)
}

// BatchGetUsers reads users by id, in the order given, skipping missing and
// expired ones.
func (s *Store) BatchGetUsers(ctx context.Context, tenantID string, ids []string, now time.Time) ([]Record, error) {
	seen := map[string]bool{}
	var keys []map[string]types.AttributeValue
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			keys = append(keys, Key(UserPK(tenantID, id), SKProfile))
		}
	}
	items, err := ddb.BatchGet(ctx, s.DB, s.Users, types.KeysAndAttributes{Keys: keys})
	if err != nil {
		return nil, fmt.Errorf("batch get users: %w", err)
	}
	var recs []Record
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return nil, fmt.Errorf("batch get users: %w", err)
	}
	byID := map[string]Record{}
	for _, r := range recs {
		if !r.Expired(now) {
			byID[r.ID] = r
		}
	}
	out := make([]Record, 0, len(ids))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// UserItems returns the items of the users domain under a user's
// partition: its credentials, name entries and addresses, and the user
// item (sk PROFILE, last). The ledger's money entries, which sort after
// the user item (shared/domain/ledger), are the user's history: they are neither
// read nor deleted.
func (s *Store) UserItems(ctx context.Context, pk string) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for {
		res, err := s.DB.Query(ctx, &dynamodb.QueryInput{
			TableName:              aws.String(s.Users),
			KeyConditionExpression: aws.String("pk = :pk AND sk <= :profile"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk":      &types.AttributeValueMemberS{Value: pk},
				":profile": &types.AttributeValueMemberS{Value: SKProfile},
			},
			ExclusiveStartKey: start,
			ConsistentRead:    aws.Bool(true),
		})
		if err != nil {
			return nil, fmt.Errorf("list user items: %w", err)
		}
		out = append(out, res.Items...)
		if len(res.LastEvaluatedKey) == 0 {
			return out, nil
		}
		start = res.LastEvaluatedKey
	}
}

var errStop = errors.New("stop")

// CounterStep changes one of the counters kept on a user's profile item
// (addressCount, credentialCount, primaryCount) so that limits hold under
// concurrent requests. A counter that is still missing (users written
// before it existed, or a record replaced by a guest conversion) starts
// from Read, the count the request just read.
type CounterStep struct {
	Name  string
	Read  int
	Delta int
	// Max, when above zero, is the most the counter may reach.
	Max int
	// Min, when above zero, is the least the counter may drop to.
	Min int
}

// UserCounted is a transaction update that applies steps to the live user
// r's counters, with upd and cond (optional) merged in since a transaction
// may touch the user item only once. Its condition fails when the user is
// gone or deleted, or when a step would pass its Max or Min.
func (s *Store) UserCounted(r Record, steps []CounterStep, upd expression.UpdateBuilder, cond *expression.ConditionBuilder) (types.TransactWriteItem, error) {
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
		TableName: aws.String(s.Users), Key: Key(r.PK, r.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}
