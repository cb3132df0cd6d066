package testkit

import (
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// StreamImage converts an item to the attribute values of Lambda's
// DynamoDB event (as localstack/stack does for the stream poller), for a test that hands
// a stream-triggered function a record of an item it read.
func StreamImage(item map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for k, v := range item {
		out[k] = streamAttribute(v)
	}
	return out
}

func streamAttribute(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, 0, len(v.Value))
		for _, x := range v.Value {
			l = append(l, streamAttribute(x))
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(StreamImage(v.Value))
	}
	return events.NewNullAttribute()
}
