package tenant

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Store keeps tenants in the Tenants table. Item layout:
//
//	pk = <tenantId>            sk = TENANT   the tenant, with keyHash and version
//	pk = SERVICEKEY#<sha256>   sk = KEY      which tenant a service key is for
//
// version counts the changes of the tenant's title and settings (absent
// before the first): PUT /tenant reads the tenant, merges the request into
// it and writes it back only while version is what it read, so two
// concurrent updates of different settings both land.
//
// Service keys are 256-bit random strings, so a SHA-256 digest is a safe
// hash for them (a slow password hash adds nothing for keys of that
// entropy); the key itself is never stored.
//
// With a Cache, Get and ByServiceKey answer from what this container read
// in the last CacheTTL (NegativeCacheTTL for an unknown id or key), and
// the Store's own writes (Create, RotateKey, UpdateSettings, Update)
// update the cache at once.
type Store struct {
	DB    ddb.API
	Table string
	// Cache, when set, is the container's cache of tenants and service
	// keys, shared by every Store of the container.
	Cache *Cache
	// Clock dates the cache's entries (the system clock when nil).
	Clock clock.Clock
}

func (s *Store) now() time.Time {
	if s.Clock == nil {
		return time.Now()
	}
	return s.Clock.Now()
}

type record struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	Tenant
	KeyHash string `dynamodbav:"keyHash"`
	Version int64  `dynamodbav:"version,omitempty"`
}

type keyRecord struct {
	PK       string `dynamodbav:"pk"`
	SK       string `dynamodbav:"sk"`
	TenantID string `dynamodbav:"tenantId"`
}

func tenantKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: id},
		"sk": &types.AttributeValueMemberS{Value: "TENANT"},
	}
}

func serviceKeyPK(hash string) string { return "SERVICEKEY#" + hash }

// HashKey returns the stored digest of a service key.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// NewServiceKey returns a new random service key.
func NewServiceKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "sk_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// Create stores a new tenant with the service key's digest, atomically with
// the key's lookup item.
func (s *Store) Create(ctx context.Context, t Tenant, key string) error {
	hash := HashKey(key)
	item, err := attributevalue.MarshalMap(record{PK: t.ID, SK: "TENANT", Tenant: t, KeyHash: hash})
	if err != nil {
		return fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	keyItem, err := attributevalue.MarshalMap(keyRecord{PK: serviceKeyPK(hash), SK: "KEY", TenantID: t.ID})
	if err != nil {
		return fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	_, err = s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: aws.String(s.Table), Item: keyItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	if r := ddb.CanceledReasons(err); len(r) > 0 && r[0] == "ConditionalCheckFailed" {
		return fmt.Errorf("create tenant %s: %w", t.ID, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("create tenant %s: %w", t.ID, err)
	}
	s.Cache.forget(t.ID, hash)
	return nil
}

// Get returns the tenant with id (from the cache when it holds it).
func (s *Store) Get(ctx context.Context, id string) (Tenant, error) {
	r, err := s.cached(ctx, id)
	return r.Tenant.clone(), err
}

// cached returns the tenant item of id from the cache, or reads it.
func (s *Store) cached(ctx context.Context, id string) (record, error) {
	if r, ok, found := s.Cache.tenant(id, s.now()); found {
		if !ok {
			return record{}, fmt.Errorf("get tenant %s: %w", id, ErrNotFound)
		}
		return r, nil
	}
	return s.get(ctx, id)
}

// get reads the tenant item of id (never from the cache) and caches what
// it found.
func (s *Store) get(ctx context.Context, id string) (record, error) { return s.read(ctx, id, false) }

// read is get, with a strongly consistent read when consistent (an
// update's read: an eventually consistent one may miss the change that
// made its write fail).
func (s *Store) read(ctx context.Context, id string, consistent bool) (record, error) {
	if !ValidID(id) {
		return record{}, fmt.Errorf("get tenant %q: %w", id, ErrNotFound)
	}
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table), Key: tenantKey(id), ConsistentRead: aws.Bool(consistent)})
	if err != nil {
		return record{}, fmt.Errorf("get tenant %s: %w", id, err)
	}
	if out.Item == nil {
		s.Cache.putUnknownTenant(id, s.now())
		return record{}, fmt.Errorf("get tenant %s: %w", id, ErrNotFound)
	}
	var r record
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return record{}, fmt.Errorf("get tenant %s: %w", id, err)
	}
	s.Cache.putTenant(r, s.now())
	return r, nil
}

// clone copies the tenant's settings, so that a caller changing its copy
// cannot change the cache's.
func (t Tenant) clone() Tenant {
	if t.Settings.SSOClientIDs != nil {
		ids := make(map[string][]string, len(t.Settings.SSOClientIDs))
		for k, v := range t.Settings.SSOClientIDs {
			ids[k] = append([]string(nil), v...)
		}
		t.Settings.SSOClientIDs = ids
	}
	t.Settings.SMSCountryCodes = append([]string(nil), t.Settings.SMSCountryCodes...)
	if b := t.Settings.RulesBudget; b != nil {
		v := *b
		t.Settings.RulesBudget = &v
	}
	if d := t.Settings.PointsExpiringDays; d != nil {
		v := *d
		t.Settings.PointsExpiringDays = &v
	}
	return t
}

// ByServiceKey returns the tenant a service key belongs to. With a cache,
// the key's lookup item and the tenant item must agree (the tenant names
// the key's digest): when they do not, one of them is older than a
// rotation, and both are read again. So a key rotated in another container
// stops working here as soon as either cached item expires.
func (s *Store) ByServiceKey(ctx context.Context, key string) (Tenant, error) {
	hash := HashKey(key)
	if id, ok, found := s.Cache.key(hash, s.now()); found {
		if !ok {
			return Tenant{}, fmt.Errorf("find service key: %w", ErrNotFound)
		}
		r, err := s.cached(ctx, id)
		if err == nil && r.KeyHash == hash {
			return r.Tenant.clone(), nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Tenant{}, fmt.Errorf("find service key: %w", err)
		}
		s.Cache.forget(id, hash)
	}
	id, err := s.keyTenant(ctx, hash)
	if err != nil {
		return Tenant{}, err
	}
	r, err := s.cached(ctx, id)
	if err == nil && r.KeyHash != hash {
		// The cached tenant item is older than the key: read it again.
		r, err = s.get(ctx, id)
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("find service key: %w", err)
	}
	if r.KeyHash != hash {
		// The key was rotated between the two reads.
		s.Cache.putUnknownKey(hash, s.now())
		return Tenant{}, fmt.Errorf("find service key: %w", ErrNotFound)
	}
	return r.Tenant.clone(), nil
}

// keyTenant reads the lookup item of a service key digest and returns the
// id of its tenant, caching what it found.
func (s *Store) keyTenant(ctx context.Context, hash string) (string, error) {
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.Table),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: serviceKeyPK(hash)},
			"sk": &types.AttributeValueMemberS{Value: "KEY"},
		},
	})
	if err != nil {
		return "", fmt.Errorf("find service key: %w", err)
	}
	if out.Item == nil {
		s.Cache.putUnknownKey(hash, s.now())
		return "", fmt.Errorf("find service key: %w", ErrNotFound)
	}
	var k keyRecord
	if err := attributevalue.UnmarshalMap(out.Item, &k); err != nil {
		return "", fmt.Errorf("find service key: %w", err)
	}
	s.Cache.putKey(hash, k.TenantID, s.now())
	return k.TenantID, nil
}

// RotateKey replaces the tenant's service key with key: the old key stops
// working in the same transaction that makes the new one work.
func (s *Store) RotateKey(ctx context.Context, id, key string, now time.Time) error {
	r, err := s.get(ctx, id)
	if err != nil {
		return fmt.Errorf("rotate key: %w", err)
	}
	hash := HashKey(key)
	if hash == r.KeyHash {
		return nil
	}
	keyItem, err := attributevalue.MarshalMap(keyRecord{PK: serviceKeyPK(hash), SK: "KEY", TenantID: id})
	if err != nil {
		return fmt.Errorf("rotate key: %w", err)
	}
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.Table), Item: keyItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: &types.Update{
			TableName:                 aws.String(s.Table),
			Key:                       tenantKey(id),
			UpdateExpression:          aws.String("SET keyHash = :new, updatedAt = :now"),
			ConditionExpression:       aws.String("keyHash = :old"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":new": &types.AttributeValueMemberS{Value: hash}, ":old": &types.AttributeValueMemberS{Value: r.KeyHash}, ":now": &types.AttributeValueMemberS{Value: now.Format(time.RFC3339Nano)}},
		}},
	}
	if r.KeyHash != "" {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(s.Table),
			Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: serviceKeyPK(r.KeyHash)},
				"sk": &types.AttributeValueMemberS{Value: "KEY"},
			},
		}})
	}
	_, err = s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	// Whatever the outcome, this container reads the tenant and both keys
	// again: the old key stops working here at once.
	s.Cache.forget(id, r.KeyHash, hash)
	if err != nil {
		return fmt.Errorf("rotate key of %s: %w", id, err)
	}
	return nil
}

// UpdateSettings replaces the tenant's settings (and counts a change of
// its version, so that an update that read the tenant before does not
// write over them).
func (s *Store) UpdateSettings(ctx context.Context, id string, set Settings, now time.Time) error {
	av, err := attributevalue.Marshal(set)
	if err != nil {
		return fmt.Errorf("update settings of %s: %w", id, err)
	}
	_, err = s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.Table),
		Key:                       tenantKey(id),
		UpdateExpression:          aws.String("SET settings = :s, updatedAt = :now ADD #v :one"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#v": "version"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": av, ":now": &types.AttributeValueMemberS{Value: now.Format(time.RFC3339Nano)}, ":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	s.Cache.forget(id)
	if ddb.IsConditionFailed(err) {
		return fmt.Errorf("update settings of %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("update settings of %s: %w", id, err)
	}
	return nil
}

// Read returns the tenant with id as the table holds it now (never from
// the cache) and its version, for an update (see Update).
func (s *Store) Read(ctx context.Context, id string) (Tenant, int64, error) {
	r, err := s.read(ctx, id, true)
	if err != nil {
		return Tenant{}, 0, err
	}
	return r.Tenant.clone(), r.Version, nil
}

// Update writes t's title, settings and updatedAt while the tenant is
// still at version (as Read returned it), with extra (the change's action
// and its feed head) in the same transaction: ErrConcurrent when another change came first.
// The tenant's id, creation and service key are never written here.
func (s *Store) Update(ctx context.Context, t Tenant, version int64, extra ...types.TransactWriteItem) error {
	settings, err := attributevalue.Marshal(t.Settings)
	if err != nil {
		return fmt.Errorf("update tenant %s: %w", t.ID, err)
	}
	values := map[string]types.AttributeValue{
		":t":    &types.AttributeValueMemberS{Value: t.Title},
		":s":    settings,
		":now":  &types.AttributeValueMemberS{Value: t.Updated.Format(time.RFC3339Nano)},
		":next": &types.AttributeValueMemberN{Value: fmt.Sprint(version + 1)},
	}
	cond := "attribute_exists(pk) AND attribute_not_exists(#v)"
	if version > 0 {
		cond = "#v = :old"
		values[":old"] = &types.AttributeValueMemberN{Value: fmt.Sprint(version)}
	}
	items := append([]types.TransactWriteItem{{Update: &types.Update{
		TableName:                 aws.String(s.Table),
		Key:                       tenantKey(t.ID),
		UpdateExpression:          aws.String("SET title = :t, settings = :s, updatedAt = :now, #v = :next"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#v": "version"},
		ExpressionAttributeValues: values,
	}}}, extra...)
	_, err = s.DB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	s.Cache.forget(t.ID)
	// A lost race on the tenant, or on an item of extra (the tenant's feed
	// head, which a location import's commits update too), is read again.
	if r := ddb.CanceledReasons(err); len(r) > 0 && r[0] == "ConditionalCheckFailed" || ddb.IsTransactionConflict(err) {
		return fmt.Errorf("update tenant %s: %w", t.ID, ErrConcurrent)
	}
	if err != nil {
		return fmt.Errorf("update tenant %s: %w", t.ID, err)
	}
	return nil
}
