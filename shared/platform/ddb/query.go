package ddb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is one raw DynamoDB item.
type Item = map[string]types.AttributeValue

// Filter keeps (and may replace) the items of one query page in Go, for
// conditions a filter expression cannot say or for index entries that must
// be resolved to the items they point at. It returns at most len(items)
// items.
type Filter func(ctx context.Context, items []Item) ([]Item, error)

// QueryPage runs in (a Query, with any FilterExpression) from start until it
// has limit items or the query is exhausted, so a page is filled to limit
// even when filters drop items. next is the key to resume from, nil when
// nothing follows.
func QueryPage(ctx context.Context, api API, in dynamodb.QueryInput, start Item, limit int, keep Filter) (items []Item, next Item, err error) {
	in.ExclusiveStartKey = start
	for {
		remaining := limit - len(items)
		in.Limit = aws.Int32(int32(remaining))
		out, err := api.Query(ctx, &in)
		if err != nil {
			return nil, nil, fmt.Errorf("query %s: %w", aws.ToString(in.TableName), err)
		}
		page := out.Items
		if keep != nil && len(page) > 0 {
			if page, err = keep(ctx, page); err != nil {
				return nil, nil, err
			}
		}
		// The query read at most `remaining` items, so the page never
		// overfills and LastEvaluatedKey is the right place to resume.
		items = append(items, page...)
		if len(items) >= limit {
			next = out.LastEvaluatedKey
			break
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	if len(next) == 0 {
		return items, nil, nil
	}
	more, err := hasMore(ctx, api, in, next, keep)
	if err != nil {
		return nil, nil, err
	}
	if !more {
		return items, nil, nil
	}
	return items, next, nil
}

// hasMore reports whether the query yields any kept item after start.
func hasMore(ctx context.Context, api API, in dynamodb.QueryInput, start Item, keep Filter) (bool, error) {
	in.ExclusiveStartKey = start
	in.Limit = aws.Int32(25)
	for {
		out, err := api.Query(ctx, &in)
		if err != nil {
			return false, fmt.Errorf("query %s: %w", aws.ToString(in.TableName), err)
		}
		page := out.Items
		if keep != nil && len(page) > 0 {
			if page, err = keep(ctx, page); err != nil {
				return false, err
			}
		}
		if len(page) > 0 {
			return true, nil
		}
		if len(out.LastEvaluatedKey) == 0 {
			return false, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// PrefixQuery returns the strongly consistent query of the items of
// partition pk whose sort key (sk) starts with skPrefix, in sort key order:
// the items of one kind that a tenant's partition holds.
func PrefixQuery(table, pk, skPrefix string) dynamodb.QueryInput {
	return dynamodb.QueryInput{
		TableName:              aws.String(table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: pk},
			":sk": &types.AttributeValueMemberS{Value: skPrefix},
		},
		ConsistentRead: aws.Bool(true),
	}
}

// PageQuery is the request for one page of an API list served by a Query:
// the page key the client sent (StartKey, "" for the first page), which
// the Cursor binds to Tenant and Scope (the list and its filters, so a key
// of another list or tenant is refused), the page size and the filter in
// Go (Keep, nil for none; see QueryPage).
type PageQuery struct {
	Tenant   string
	Scope    string
	StartKey string
	Limit    int
	Keep     Filter
}

// QueryEach runs in (a Query) page after page to its end and calls each
// with every item in turn; an error of each stops it and is returned as
// it is.
func QueryEach(ctx context.Context, api API, in dynamodb.QueryInput, each func(Item) error) error {
	for {
		out, err := api.Query(ctx, &in)
		if err != nil {
			return fmt.Errorf("query %s: %w", aws.ToString(in.TableName), err)
		}
		for _, it := range out.Items {
			if err := each(it); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}
