package perk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Loyalty table for perks (every key starts with the
// tenant id):
//
//	pk = <t>#PERKS   sk = PERK#<perkId>   a perk
//
// A tenant's perks share one partition: they are few and read together
// (every award list presents its perks), and a Query of the partition is
// strongly consistent. Ids start with their creation second, so the
// partition lists perks in creation order. The definition is stored as
// JSON text (`body`), returned exactly as validated; the attributes that
// reads filter on sit beside it.

const skPerkPrefix = "PERK#"

func perksPK(t string) string { return t + "#PERKS" }
func perkSK(id string) string { return skPerkPrefix + id }

func perkKey(t, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: perksPK(t)},
		"sk": &types.AttributeValueMemberS{Value: perkSK(id)},
	}
}

// record is a perk as stored.
type record struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	ID        string `dynamodbav:"id"`
	TenantID  string `dynamodbav:"tenantId"`
	Enabled   bool   `dynamodbav:"enabled"`
	Template  string `dynamodbav:"template"`
	SegmentID string `dynamodbav:"segmentId,omitempty"`
	IsGlobal  bool   `dynamodbav:"isGlobal"`
	Body      string `dynamodbav:"body"`
	Created   string `dynamodbav:"created"`
	UpdatedAt string `dynamodbav:"updatedAt"`
	Version   int    `dynamodbav:"version"`
}

func newRecord(p Perk, version int) (record, error) {
	body, err := json.Marshal(p.Definition)
	if err != nil {
		return record{}, fmt.Errorf("encode perk %s: %w", p.ID, err)
	}
	return record{
		PK: perksPK(p.TenantID), SK: perkSK(p.ID), ID: p.ID, TenantID: p.TenantID, Enabled: p.Enabled,
		Template: p.Template, SegmentID: p.SegmentID, IsGlobal: p.IsGlobal, Body: string(body),
		Created: p.Created, UpdatedAt: p.UpdatedAt, Version: version,
	}, nil
}

func (r record) perk() (Perk, error) {
	p := Perk{ID: r.ID, TenantID: r.TenantID, LoyaltyProvider: ProviderInternal, Enabled: r.Enabled, Created: r.Created, UpdatedAt: r.UpdatedAt}
	if err := json.Unmarshal([]byte(r.Body), &p.Definition); err != nil {
		return Perk{}, fmt.Errorf("decode perk %s: %w", r.ID, err)
	}
	if p.LocationIDs == nil {
		p.LocationIDs = []string{}
	}
	return p, nil
}

// store is the perk domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

// perkItems are the perk items of the table.
const perkItems ddb.Kind = "perk"

// records are the perk items of the table, one at a time.
func (s *store) records() ddb.Records {
	return ddb.Records{API: s.db, Table: s.table, Kind: perkItems, NotFound: ErrNotFound, Conflict: ErrConcurrent}
}

// put writes a perk: a create when version is 1 (the perk must not
// exist), else an update conditional on the stored version being
// version-1 (ErrConcurrent otherwise).
func (s *store) put(ctx context.Context, p Perk, version int) error {
	rec, err := newRecord(p, version)
	if err != nil {
		return err
	}
	if p.Points.Expiry.Expires() {
		// Listed for the daily points expiry before any lot can expire.
		if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: expiryDirectoryPK}, "sk": &types.AttributeValueMemberS{Value: p.TenantID},
			"tenantId": &types.AttributeValueMemberS{Value: p.TenantID},
		}}); err != nil {
			return fmt.Errorf("put perk %s: list the tenant for the points expiry: %w", p.ID, err)
		}
	}
	return s.records().Put(ctx, p.ID, rec, version)
}

// expiryDirectoryPK is the key under which the tenants whose perks ever
// had a points expiry policy are listed (sk = tenant id), for the daily
// points expiry:
//
//	pk = EXPIRY#LOTS   sk = <t>
const expiryDirectoryPK = "EXPIRY#LOTS"

// TenantsWithExpiry returns the tenants whose perks ever had a points
// expiry policy (the daily points expiry's list).
func (s *Service) TenantsWithExpiry(ctx context.Context) ([]string, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: expiryDirectoryPK}},
	}
	var out []string
	for {
		page, err := s.DB.Query(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("tenants with a points expiry: %w", err)
		}
		for _, it := range page.Items {
			if sk, ok := it["sk"].(*types.AttributeValueMemberS); ok {
				out = append(out, sk.Value)
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// get reads one perk (any state) and its version.
func (s *store) get(ctx context.Context, tenantID, id string) (Perk, int, error) {
	var rec record
	if err := s.records().Get(ctx, id, perkKey(tenantID, id), &rec); err != nil {
		return Perk{}, 0, err
	}
	p, err := rec.perk()
	return p, rec.Version, err
}

// query returns the query of a tenant's perks in creation order.
func (s *store) query(tenantID string) dynamodb.QueryInput {
	return ddb.PrefixQuery(s.table, perksPK(tenantID), skPerkPrefix)
}

// all returns every perk of a tenant (any state), in creation order.
func (s *store) all(ctx context.Context, tenantID string) ([]Perk, error) {
	var recs []record
	if err := perkItems.QueryAll(ctx, s.db, s.query(tenantID), &recs); err != nil {
		return nil, fmt.Errorf("list perks: %w", err)
	}
	return perks(recs)
}

// perks returns the perks that recs hold, in order.
func perks(recs []record) ([]Perk, error) {
	out := make([]Perk, len(recs))
	for i, rec := range recs {
		p, err := rec.perk()
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}
