package pos

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/metadata"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// MaxSearchLimit is the largest page of a metadata search (one
// BatchGetItem reads a page's transactions).
const MaxSearchLimit = 100

// TransactionPage is a page of transactions (GET
// /transactions?metadata[key]=value).
type TransactionPage struct {
	Items []Transaction `json:"items"`
	Page  web.Page      `json:"page"`
}

// metaPK is the partition of the transactions whose metadata has key k
// with value v. The pair is hashed: a key (40 characters) and a value (500)
// of 4-byte characters would not fit DynamoDB's 2,048-byte partition key.
func metaPK(t, k, v string) string {
	sum := sha256.Sum256([]byte(k + "\x00" + v))
	return t + "#TXNMETA#" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// metaRecord points from one metadata pair to a transaction that has it;
// its sort key is the transaction's id, so a partition lists its
// transactions in creation order (ids begin with their time).
type metaRecord struct {
	PK            string `dynamodbav:"pk"`
	SK            string `dynamodbav:"sk"`
	TransactionID string `dynamodbav:"transactionId"`
}

// metaItems adds to tx the index items of t's metadata: one an entry, in
// the transaction's own DynamoDB transaction, so a transaction is found by
// its metadata as soon as it exists (at most metadata.MaxKeys items).
func (st *store) metaItems(tx *ddb.Tx, t Transaction) error {
	for k, v := range t.Metadata {
		it, err := st.put(metaRecord{PK: metaPK(t.TenantID, k, v), SK: t.ID, TransactionID: t.ID}, "", nil)
		if err != nil {
			return fmt.Errorf("index transaction %s: %w", t.ID, err)
		}
		tx.Add("metadata", it)
	}
	return nil
}

// MetadataQuery reads the one metadata[key]=value pair of a query string;
// ok is false when the query names no metadata.
func MetadataQuery(q url.Values) (key, value string, ok bool, err error) {
	for name, values := range q {
		k, isMeta := strings.CutPrefix(name, metadata.Field+"[")
		if !isMeta {
			continue
		}
		if ok || len(values) != 1 || !strings.HasSuffix(k, "]") {
			return "", "", true, apierr.Invalid(metadata.Field, "search by one metadata[key]=value")
		}
		key, value, ok = strings.TrimSuffix(k, "]"), values[0], true
	}
	if !ok {
		return "", "", false, nil
	}
	if err := metadata.CheckKey(key); err != nil {
		return "", "", true, err
	}
	if value == "" || !utf8.ValidString(value) || utf8.RuneCountInString(value) > metadata.MaxValueLen {
		return "", "", true, apierr.Invalid(metadata.Field+"["+key+"]", "must be 1 to %d characters", metadata.MaxValueLen)
	}
	return key, value, true, nil
}

// SearchTransactions returns the tenant's transactions whose metadata has
// key with value exactly, newest first, a page of at most limit (GET
// /transactions?metadata[key]=value, admin).
func (s *Service) SearchTransactions(ctx context.Context, caller actor.Actor, key, value string, limit int, startKey string) (TransactionPage, error) {
	if err := caller.RequireAdmin(); err != nil {
		return TransactionPage{}, err
	}
	if limit > MaxSearchLimit {
		return TransactionPage{}, apierr.Invalid("limit", "must be an integer from 1 to %d when searching by metadata", MaxSearchLimit)
	}
	pk := metaPK(caller.TenantID, key, value)
	scope := "transactions-metadata|" + pk
	start, err := s.Cursor.Decode(caller.TenantID, scope, startKey)
	if err != nil {
		return TransactionPage{}, err
	}
	in := dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": sv(pk)},
		ScanIndexForward:          aws.Bool(false),
	}
	items, next, err := ddb.QueryPage(ctx, s.DB, in, start, limit, nil)
	if err != nil {
		return TransactionPage{}, fmt.Errorf("search transactions by metadata: %w", err)
	}
	ids := make([]string, 0, len(items))
	for _, it := range items {
		var r metaRecord
		if err := attributevalue.UnmarshalMap(it, &r); err != nil {
			return TransactionPage{}, fmt.Errorf("search transactions by metadata: %w", err)
		}
		ids = append(ids, r.TransactionID)
	}
	txns, err := s.st().txns(ctx, caller.TenantID, ids)
	if err != nil {
		return TransactionPage{}, err
	}
	nk, err := s.Cursor.Encode(caller.TenantID, scope, next)
	if err != nil {
		return TransactionPage{}, err
	}
	return TransactionPage{Items: txns, Page: web.Page{Limit: limit, Count: len(txns), StartKey: startKey, NextKey: nk}}, nil
}

// txns reads the transactions of ids (at most MaxSearchLimit, so one
// BatchGetItem), in the order of ids.
func (st *store) txns(ctx context.Context, t string, ids []string) ([]Transaction, error) {
	out := make([]Transaction, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	keys := make([]map[string]types.AttributeValue, 0, len(ids))
	for _, id := range ids {
		keys = append(keys, key(txnPK(t, id), "TXN"))
	}
	items, err := ddb.BatchGet(ctx, st.db, st.table, types.KeysAndAttributes{Keys: keys, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get transactions: %w", err)
	}
	var page []txnRecord
	if err := attributevalue.UnmarshalListOfMaps(items, &page); err != nil {
		return nil, fmt.Errorf("get transactions: %w", err)
	}
	byID := make(map[string]Transaction, len(page))
	for _, r := range page {
		byID[r.ID] = r.Transaction
	}
	for _, id := range ids {
		if tr, ok := byID[id]; ok {
			out = append(out, tr)
		}
	}
	return out, nil
}
