package enrichment

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Item layout of the Loyalty table for award enrichments (every key
// starts with the tenant id):
//
//	pk = <t>#ENRICHMENTS   sk = ENRICH#<enrichmentId>   an enrichment
//
// A tenant's enrichments share one partition: they are few and the award
// lists read the INTERNAL ones together (Service.Internal), and a Query of
// the partition is strongly consistent. Ids start with their creation
// time, so the partition lists enrichments in creation order. The fields
// are stored as JSON text (`body`), returned exactly as validated; the
// reward they are for sits beside it.

const skEnrichPrefix = "ENRICH#"

func enrichmentsPK(t string) string { return t + "#ENRICHMENTS" }
func enrichmentSK(id string) string { return skEnrichPrefix + id }

func enrichmentKey(t, id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: enrichmentsPK(t)},
		"sk": &types.AttributeValueMemberS{Value: enrichmentSK(id)},
	}
}

// record is an enrichment as stored.
type record struct {
	PK              string `dynamodbav:"pk"`
	SK              string `dynamodbav:"sk"`
	ID              string `dynamodbav:"id"`
	TenantID        string `dynamodbav:"tenantId"`
	LoyaltyProvider string `dynamodbav:"loyaltyProvider"`
	LoyaltyRewardID string `dynamodbav:"loyaltyRewardId"`
	Body            string `dynamodbav:"body"`
	Created         string `dynamodbav:"created"`
	Updated         string `dynamodbav:"updated"`
	Version         int    `dynamodbav:"version"`
}

func newRecord(e Enrichment, version int) (record, error) {
	body, err := json.Marshal(e.Fields)
	if err != nil {
		return record{}, fmt.Errorf("encode enrichment %s: %w", e.ID, err)
	}
	return record{
		PK: enrichmentsPK(e.TenantID), SK: enrichmentSK(e.ID), ID: e.ID, TenantID: e.TenantID,
		LoyaltyProvider: e.LoyaltyProvider, LoyaltyRewardID: e.LoyaltyRewardID, Body: string(body),
		Created: e.Created, Updated: e.Updated, Version: version,
	}, nil
}

func (r record) enrichment() (Enrichment, error) {
	e := Enrichment{
		ID: r.ID, TenantID: r.TenantID, LoyaltyProvider: r.LoyaltyProvider, LoyaltyRewardID: r.LoyaltyRewardID,
		Created: r.Created, Updated: r.Updated,
	}
	if err := json.Unmarshal([]byte(r.Body), &e.Fields); err != nil {
		return Enrichment{}, fmt.Errorf("decode enrichment %s: %w", r.ID, err)
	}
	return e, nil
}

// store is the enrichment domain's access to DynamoDB.
type store struct {
	db    ddb.API
	table string
}

// enrichmentItems are the enrichment items of the table.
const enrichmentItems ddb.Kind = "enrichment"

// records are the enrichment items of the table, one at a time.
func (s *store) records() ddb.Records {
	return ddb.Records{API: s.db, Table: s.table, Kind: enrichmentItems, NotFound: ErrNotFound, Conflict: ErrConcurrent}
}

// put writes an enrichment: a create when version is 1 (the enrichment
// must not exist), else an update conditional on the stored version being
// version-1. A failed condition is ErrConcurrent.
func (s *store) put(ctx context.Context, e Enrichment, version int) error {
	rec, err := newRecord(e, version)
	if err != nil {
		return err
	}
	return s.records().Put(ctx, e.ID, rec, version)
}

// get reads one enrichment and its version.
func (s *store) get(ctx context.Context, tenantID, id string) (Enrichment, int, error) {
	var rec record
	if err := s.records().Get(ctx, id, enrichmentKey(tenantID, id), &rec); err != nil {
		return Enrichment{}, 0, err
	}
	e, err := rec.enrichment()
	return e, rec.Version, err
}

// delete removes an enrichment; one that does not exist is ErrNotFound.
func (s *store) delete(ctx context.Context, tenantID, id string) error {
	return s.records().Delete(ctx, id, enrichmentKey(tenantID, id))
}

// query returns the query of a tenant's enrichments in creation order.
func (s *store) query(tenantID string) dynamodb.QueryInput {
	return ddb.PrefixQuery(s.table, enrichmentsPK(tenantID), skEnrichPrefix)
}

// ofProvider returns every enrichment of a tenant for one loyalty
// provider, in creation order.
func (s *store) ofProvider(ctx context.Context, tenantID, provider string) ([]Enrichment, error) {
	in := s.query(tenantID)
	in.FilterExpression = aws.String("loyaltyProvider = :p")
	in.ExpressionAttributeValues[":p"] = &types.AttributeValueMemberS{Value: provider}
	var recs []record
	if err := enrichmentItems.QueryAll(ctx, s.db, in, &recs); err != nil {
		return nil, fmt.Errorf("list %s enrichments: %w", provider, err)
	}
	return enrichments(recs)
}

// enrichments returns the enrichments that recs hold, in order.
func enrichments(recs []record) ([]Enrichment, error) {
	out := make([]Enrichment, len(recs))
	for i, rec := range recs {
		e, err := rec.enrichment()
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}
