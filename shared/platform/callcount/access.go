package callcount

import (
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Access is one IAM action a DynamoDB call needs on one table: Action is
// the action without its "dynamodb:" prefix (GetItem, ConditionCheckItem),
// Table the table's name as the call names it, followed by
// "/index/<name>" for a call that reads an index (IAM checks a Query or
// Scan of an index against the index's ARN, not the table's).
type Access struct {
	Action string
	Table  string
}

// Accesses returns the IAM accesses a DynamoDB call of operation needs,
// from its input (the operation's input struct, as the SDK middleware sees
// it):
//   - GetItem, PutItem, UpdateItem, DeleteItem, Query, Scan: the action on
//     the input's TableName (with its IndexName, if any);
//   - BatchGetItem, BatchWriteItem: the action on each table of
//     RequestItems;
//   - TransactWriteItems: PutItem, UpdateItem, DeleteItem or
//     ConditionCheckItem on each item's table (IAM has no action of the
//     transaction itself);
//   - TransactGetItems: GetItem on each item's table.
//
// Any other operation (DescribeTable, PartiQL) is its name on the empty
// table, so that a check of the accesses names it rather than missing it.
func Accesses(operation string, input any) []Access {
	var out []Access
	add := func(action string, table *string) {
		out = append(out, Access{Action: action, Table: aws.ToString(table)})
	}
	onIndex := func(action string, table, index *string) {
		t := aws.ToString(table)
		if i := aws.ToString(index); i != "" {
			t += "/index/" + i
		}
		out = append(out, Access{Action: action, Table: t})
	}
	switch in := input.(type) {
	case *dynamodb.GetItemInput:
		add("GetItem", in.TableName)
	case *dynamodb.PutItemInput:
		add("PutItem", in.TableName)
	case *dynamodb.UpdateItemInput:
		add("UpdateItem", in.TableName)
	case *dynamodb.DeleteItemInput:
		add("DeleteItem", in.TableName)
	case *dynamodb.QueryInput:
		onIndex("Query", in.TableName, in.IndexName)
	case *dynamodb.ScanInput:
		onIndex("Scan", in.TableName, in.IndexName)
	case *dynamodb.BatchGetItemInput:
		for _, t := range sortedKeys(in.RequestItems) {
			add("BatchGetItem", &t)
		}
	case *dynamodb.BatchWriteItemInput:
		for _, t := range sortedKeys(in.RequestItems) {
			add("BatchWriteItem", &t)
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				add("PutItem", it.Put.TableName)
			case it.Update != nil:
				add("UpdateItem", it.Update.TableName)
			case it.Delete != nil:
				add("DeleteItem", it.Delete.TableName)
			case it.ConditionCheck != nil:
				add("ConditionCheckItem", it.ConditionCheck.TableName)
			}
		}
	case *dynamodb.TransactGetItemsInput:
		for _, it := range in.TransactItems {
			if it.Get != nil {
				add("GetItem", it.Get.TableName)
			}
		}
	default:
		out = append(out, Access{Action: operation})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
