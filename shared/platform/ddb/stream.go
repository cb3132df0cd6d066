package ddb

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamItem converts the image of a DynamoDB stream record, as Lambda
// delivers it, to an item the SDK's attributevalue package decodes.
func StreamItem(image map[string]events.DynamoDBAttributeValue) Item {
	item := make(Item, len(image))
	for k, v := range image {
		item[k] = StreamValue(v)
	}
	return item
}

// StreamValue converts one attribute value of a stream record to the SDK's.
func StreamValue(v events.DynamoDBAttributeValue) types.AttributeValue {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}
	case events.DataTypeList:
		out := make([]types.AttributeValue, 0, len(v.List()))
		for _, x := range v.List() {
			out = append(out, StreamValue(x))
		}
		return &types.AttributeValueMemberL{Value: out}
	case events.DataTypeMap:
		out := make(map[string]types.AttributeValue, len(v.Map()))
		for k, x := range v.Map() {
			out[k] = StreamValue(x)
		}
		return &types.AttributeValueMemberM{Value: out}
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}
