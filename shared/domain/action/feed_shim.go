package action

import "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

type Sequenced struct {
	Action
	Scope    string
	Sequence int64
}

func FeedOf(item map[string]types.AttributeValue) ([]Sequenced, bool, error) { return nil, false, nil }
