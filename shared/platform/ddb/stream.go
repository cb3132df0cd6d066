package ddb

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamItem converts an image of a DynamoDB stream record (the Lambda
// event's NewImage or OldImage) to the SDK's item, for the decoders that
// read items (attributevalue.UnmarshalMap, a domain's own).
func StreamItem(image map[string]events.DynamoDBAttributeValue) Item {
	item := make(Item, len(image))
	for k, v := range image {
		item[k] = streamValue(v)
	}
	return item
}

// streamValue converts a stream attribute value to the SDK's.
func streamValue(v events.DynamoDBAttributeValue) types.AttributeValue {
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
			out = append(out, streamValue(x))
		}
		return &types.AttributeValueMemberL{Value: out}
	case events.DataTypeMap:
		out := make(map[string]types.AttributeValue, len(v.Map()))
		for k, x := range v.Map() {
			out[k] = streamValue(x)
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
