package callcount_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/loyalty-platform/platform/shared/platform/callcount"
)

func TestAccesses(t *testing.T) {
	s := aws.String
	tests := []struct {
		name      string
		operation string
		input     any
		want      []callcount.Access
	}{
		{"GetItem", "GetItem", &dynamodb.GetItemInput{TableName: s("Users")}, []callcount.Access{{"GetItem", "Users"}}},
		{"PutItem", "PutItem", &dynamodb.PutItemInput{TableName: s("Users")}, []callcount.Access{{"PutItem", "Users"}}},
		{"UpdateItem", "UpdateItem", &dynamodb.UpdateItemInput{TableName: s("Users")}, []callcount.Access{{"UpdateItem", "Users"}}},
		{"DeleteItem", "DeleteItem", &dynamodb.DeleteItemInput{TableName: s("Users")}, []callcount.Access{{"DeleteItem", "Users"}}},
		{"QueryTable", "Query", &dynamodb.QueryInput{TableName: s("Actions")}, []callcount.Access{{"Query", "Actions"}}},
		{"QueryIndex", "Query", &dynamodb.QueryInput{TableName: s("Actions"), IndexName: s("gsi3")}, []callcount.Access{{"Query", "Actions/index/gsi3"}}},
		{"ScanIndex", "Scan", &dynamodb.ScanInput{TableName: s("Actions"), IndexName: s("gsi1")}, []callcount.Access{{"Scan", "Actions/index/gsi1"}}},
		{"BatchGetItem", "BatchGetItem", &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"Users": {}, "Loyalty": {}}},
			[]callcount.Access{{"BatchGetItem", "Loyalty"}, {"BatchGetItem", "Users"}}},
		{"BatchWriteItem", "BatchWriteItem", &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"Locations": nil}},
			[]callcount.Access{{"BatchWriteItem", "Locations"}}},
		{"TransactWriteItems", "TransactWriteItems", &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: s("Locations")}},
			{Update: &types.Update{TableName: s("Operations")}},
			{Delete: &types.Delete{TableName: s("Locations")}},
			{ConditionCheck: &types.ConditionCheck{TableName: s("Operations")}},
		}}, []callcount.Access{{"PutItem", "Locations"}, {"UpdateItem", "Operations"}, {"DeleteItem", "Locations"}, {"ConditionCheckItem", "Operations"}}},
		{"TransactGetItems", "TransactGetItems", &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
			{Get: &types.Get{TableName: s("Users")}}, {Get: &types.Get{TableName: s("Tenants")}},
		}}, []callcount.Access{{"GetItem", "Users"}, {"GetItem", "Tenants"}}},
		{"OtherOperation", "DescribeTable", &dynamodb.DescribeTableInput{TableName: s("Users")}, []callcount.Access{{"DescribeTable", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := callcount.Accesses(tc.operation, tc.input); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// fakeDynamoDB answers every DynamoDB request with an empty body.
type fakeDynamoDB struct{}

func (fakeDynamoDB) Do(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: http.NoBody, Request: r}, nil
}

// TestMiddlewareRecords: through a real client, a recording counter gets
// the accesses of the calls it counts; a plain counter only counts.
func TestMiddlewareRecords(t *testing.T) {
	client := dynamodb.New(dynamodb.Options{
		Region: "eu-west-1", HTTPClient: &fakeDynamoDB{}, BaseEndpoint: aws.String("http://dynamodb.local"),
		Credentials: aws.AnonymousCredentials{}, APIOptions: []func(*middleware.Stack) error{callcount.Middleware},
	})
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}
	call := func(c *callcount.Counter) {
		ctx := callcount.With(context.Background(), c)
		if _, err := client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("Actions"), IndexName: aws.String("gsi1")}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String("Locations"), Item: key}},
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String("Operations"), Key: key, ConditionExpression: aws.String("attribute_exists(pk)")}},
		}}); err != nil {
			t.Fatal(err)
		}
	}
	rec := callcount.NewRecording()
	call(rec)
	want := map[callcount.Access]int{{"Query", "Actions/index/gsi1"}: 1, {"PutItem", "Locations"}: 1, {"ConditionCheckItem", "Operations"}: 1}
	if got := rec.Accesses(); !reflect.DeepEqual(got, want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	if got := rec.String(); got != "DynamoDB.Query=1 DynamoDB.TransactWriteItems=1" {
		t.Errorf("counted %s", got)
	}
	plain := callcount.New()
	call(plain)
	if got := plain.Accesses(); len(got) != 0 {
		t.Errorf("a plain counter recorded %v", got)
	}
	if got := plain.Service(callcount.DynamoDB); got != 2 {
		t.Errorf("a plain counter counted %d calls, want 2", got)
	}
	rec.Reset()
	if got := rec.Accesses(); len(got) != 0 {
		t.Errorf("after Reset: %v", got)
	}
}
