package action

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/timefilter"
)

// Scope is whose actions a list reads: a user's (UserID), a location's or
// several locations' (LocationIDs), else the tenant's.
type Scope struct {
	UserID      string
	LocationIDs []string
}

// Filter narrows a list of actions.
type Filter struct {
	// Time are conditions on when.timestamp (key conditions of every
	// index read, neq checked after).
	Time []timefilter.Cond
	// Types and NotTypes keep or drop action types; PaymentTypes and
	// NotPaymentTypes do the same with metadata.paymentType (actions
	// without one are dropped by PaymentTypes, kept by NotPaymentTypes).
	Types, NotTypes               []string
	PaymentTypes, NotPaymentTypes []string
	// LocationIDs keeps the actions at these locations (with a user
	// scope: the tenant and location scopes read the locations' indexes).
	LocationIDs []string
}

// keeps reports whether a stored action passes the filter.
func (f Filter) keeps(r record) bool {
	if !timefilter.HoldAll(f.Time, r.When.Timestamp) {
		return false
	}
	if len(f.Types) > 0 && !slices.Contains(f.Types, r.Type) || slices.Contains(f.NotTypes, r.Type) {
		return false
	}
	pt, _ := r.Metadata["paymentType"].(string)
	if len(f.PaymentTypes) > 0 && !slices.Contains(f.PaymentTypes, pt) || pt != "" && slices.Contains(f.NotPaymentTypes, pt) {
		return false
	}
	if len(f.LocationIDs) > 0 && (r.Context.Location == nil || !slices.Contains(f.LocationIDs, r.Context.Location.ID)) {
		return false
	}
	return true
}

// streams returns the index queries a scope reads, newest first, narrowed
// by the time conditions.
func (r *Recorder) streams(tenantID string, scope Scope, f Filter) []ddb.Stream {
	one := func(index, attr, pk string) ddb.Stream {
		values := map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}}
		sk := index + "sk"
		cond := attr + " = :pk"
		if kc := timefilter.KeyCondition(sk, f.Time, values); kc != "" {
			cond += " AND " + kc
		}
		return ddb.Stream{
			In: dynamodb.QueryInput{
				TableName: aws.String(r.Table), IndexName: aws.String(index),
				KeyConditionExpression: aws.String(cond), ExpressionAttributeValues: values,
				ScanIndexForward: aws.Bool(false),
			},
			KeyAttr: []string{"pk", "sk", attr, sk},
		}
	}
	var out []ddb.Stream
	switch {
	case scope.UserID != "":
		out = append(out, one("gsi1", "gsi1pk", userPK(tenantID, scope.UserID)))
	case len(scope.LocationIDs) > 0:
		for _, l := range scope.LocationIDs {
			out = append(out, one("gsi2", "gsi2pk", locationPK(tenantID, l)))
		}
	default:
		for shard := 0; shard < Shards; shard++ {
			out = append(out, one("gsi3", "gsi3pk", tenantPK(tenantID, shard)))
		}
	}
	return out
}

// sortAttr is the index sort key a stream of a scope orders by.
func sortAttr(scope Scope) string {
	switch {
	case scope.UserID != "":
		return "gsi1sk"
	case len(scope.LocationIDs) > 0:
		return "gsi2sk"
	}
	return "gsi3sk"
}

// List returns up to limit actions of a scope, newest first, from start (a
// key List returned; nil for the first page), and the key of the next page
// (nil when nothing follows). Several index partitions (the tenant index's
// shards, several locations) are read at once and merged.
func (r *Recorder) List(ctx context.Context, tenantID string, scope Scope, f Filter, start ddb.Item, limit int) ([]Action, ddb.Item, error) {
	keep := func(it ddb.Item) bool {
		var rec record
		if attributevalue.UnmarshalMap(it, &rec) != nil {
			return false
		}
		return f.keeps(rec)
	}
	items, next, err := ddb.Merge(ctx, r.DB, r.streams(tenantID, scope, f), sortAttr(scope), true, start, limit, keep)
	if err != nil {
		return nil, nil, fmt.Errorf("list actions: %w", err)
	}
	var recs []record
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return nil, nil, fmt.Errorf("list actions: %w", err)
	}
	out := make([]Action, len(recs))
	for i, rec := range recs {
		out[i] = rec.Action
	}
	return out, next, nil
}
