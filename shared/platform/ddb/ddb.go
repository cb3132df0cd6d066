// Package ddb holds the DynamoDB plumbing the domain stores share: the client
// built once per cold start, table names from the environment, signed paging
// keys, the filled-page query loop, condition-failure checks and the items of
// one kind (Kind: decoded queries and pages; Records: versioned put,
// consistent get, delete). Domain packages build their own keys; this
// package never does.
package ddb

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// API is the subset of the DynamoDB client the stores use.
type API interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// NewClient returns a DynamoDB client for cfg, at the endpoint the
// environment names (Endpoint). Against such a local endpoint (DynamoDB
// Local) the CRC32 check of responses is off: DynamoDB Local's checksum of a cancelled
// transaction that returns the old items does not match its body, and the
// SDK logs a warning for each.
func NewClient(cfg aws.Config) *dynamodb.Client {
	endpoint := Endpoint("DYNAMODB")
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.DisableValidateResponseChecksum = true
		}
	})
}

// Endpoint returns the endpoint the environment names for a service
// (AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL), or "" for AWS's own.
// Clients set it themselves, so that it applies however the configuration
// was loaded.
func Endpoint(service string) string {
	if v := os.Getenv("AWS_ENDPOINT_URL_" + service); v != "" {
		return v
	}
	return os.Getenv("AWS_ENDPOINT_URL")
}

// Tables holds the physical table names, read from the environment that
// template.yaml sets. Locally the names default to the template's logical
// ids.
type Tables struct {
	Tenants    string
	Users      string
	Sessions   string
	Locations  string
	Checkins   string
	Loyalty    string
	Audiences  string
	Pos        string
	Actions    string
	Operations string
	Webhooks   string
}

// TablesFromEnv reads the table names from the environment.
func TablesFromEnv() Tables {
	get := func(env, def string) string {
		if v := os.Getenv(env); v != "" {
			return v
		}
		return def
	}
	return Tables{
		Tenants:    get("TENANTS_TABLE", "TenantsTable"),
		Users:      get("USERS_TABLE", "UsersTable"),
		Sessions:   get("SESSIONS_TABLE", "SessionsTable"),
		Locations:  get("LOCATIONS_TABLE", "LocationsTable"),
		Checkins:   get("CHECKINS_TABLE", "CheckinsTable"),
		Loyalty:    get("LOYALTY_TABLE", "LoyaltyTable"),
		Audiences:  get("AUDIENCES_TABLE", "AudiencesTable"),
		Pos:        get("POS_TABLE", "PosTable"),
		Actions:    get("ACTIONS_TABLE", "ActionsTable"),
		Operations: get("OPERATIONS_TABLE", "OperationsTable"),
		Webhooks:   get("WEBHOOKS_TABLE", "WebhooksTable"),
	}
}

// IsConditionFailed reports whether err is a failed condition of a single
// write.
func IsConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// CanceledReasons returns the cancellation reason codes of a failed
// transaction, one per item in order ("None", "ConditionalCheckFailed", ...),
// or nil when err is not a cancelled transaction.
func CanceledReasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	out := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		out[i] = aws.ToString(r.Code)
	}
	return out
}

// IsTransactionConflict reports whether a transaction failed because another
// transaction touched the same items at the same time; callers may retry.
func IsTransactionConflict(err error) bool {
	for _, r := range CanceledReasons(err) {
		if r == "TransactionConflict" {
			return true
		}
	}
	var api smithy.APIError
	if errors.As(err, &api) && strings.Contains(api.ErrorCode(), "TransactionConflict") {
		return true
	}
	return false
}

// transactAttempts bounds the tries of a transaction that keeps losing
// races: a user's concurrent changes all write the user's feed head
// (shared/domain/action), so they meet more often than their own items
// would.
const transactAttempts = 8

// conflictPause is the pause after lost race n (from 0): a random part of
// a window that doubles from 20 ms up to 640 ms, so that the writers that
// met do not meet again at once.
func conflictPause(n int) time.Duration {
	window := 20 * time.Millisecond << min(n, 5)
	return window/2 + time.Duration(rand.Int64N(int64(window/2)))
}

// Transact runs TransactWriteItems, retrying (with a random, growing
// pause) when it lost a race with another transaction on the same items. A failed condition is returned at once: the caller reads again.
//
// When ctx carries a Claim (a request with an Idempotency-Key), its item
// is appended after items, so the indexes of items (Failed) are
// unchanged; a failure of its condition is ErrClaimLost, whatever else
// failed.
func Transact(ctx context.Context, api API, items []types.TransactWriteItem) error {
	var err error
	for attempt := 0; attempt < transactAttempts; attempt++ {
		err = transactOnce(ctx, api, items)
		if err == nil || !IsTransactionConflict(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(conflictPause(attempt)):
		}
	}
	return err
}

// transactOnce runs TransactWriteItems once, with the Claim ctx carries.
func transactOnce(ctx context.Context, api API, items []types.TransactWriteItem) error {
	c := ClaimOf(ctx)
	all, at := c.with(items)
	_, err := api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: all})
	return c.outcome(err, at)
}

// FailedConditions returns the indexes of the items of a cancelled
// transaction whose condition failed.
func FailedConditions(err error) []int {
	var out []int
	for i, r := range CanceledReasons(err) {
		if r == "ConditionalCheckFailed" {
			out = append(out, i)
		}
	}
	return out
}

// CanceledItem returns the item DynamoDB returned for transaction item i
// of a cancelled transaction (its ReturnValuesOnConditionCheckFailure), or
// nil.
func CanceledItem(err error, i int) map[string]types.AttributeValue {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || i < 0 || i >= len(tce.CancellationReasons) {
		return nil
	}
	return tce.CancellationReasons[i].Item
}
