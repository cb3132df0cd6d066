package rule

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// HandleStream is the rules function's handler: the Actions table's
// stream delivers every new action (INSERT records, NEW_IMAGE), and the
// rules whose trigger is its type run on it; the records of the table's
// other items (the feed heads, whose first write is an INSERT too) are
// skipped. Each (rule, action) applies at most once, so a record
// delivered again, or an action whose rules the request that recorded it
// already ran, changes nothing; and as on the request's path, each rule
// applies at most once per originating action (metadata.originActionId of
// the record) and the chain's effects stay within the tenant's
// rulesBudget, counted on items both paths share. A record that fails is
// reported (ReportBatchItemFailures) so that Lambda retries from it.
func (e *Engine) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	for _, rec := range ev.Records {
		if rec.EventName != "INSERT" {
			continue
		}
		a, ok := actionOf(rec.Change.NewImage)
		if !ok {
			if sk := rec.Change.NewImage["sk"]; sk.DataType() == events.DataTypeString && sk.String() == "ACTION" {
				// An action item that does not decode: nothing can run
				// on it, and retrying would not help.
				e.log().Error("stream record of an undecodable action skipped", "eventId", rec.EventID, "sequenceNumber", rec.Change.SequenceNumber)
			}
			continue
		}
		// The rules are as fresh as on the request's path: the cache is
		// checked against the tenant's rules version (see rulesOf).
		if _, err := e.Run(ctx, a); err != nil {
			e.log().Error("rules failed on an action", "actionId", a.ID, "type", a.Type, "error", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
			// Later records wait: Lambda retries from the first failure.
			return resp, nil
		}
	}
	return resp, nil
}

// actionOf decodes the action of a stream image: only the Actions
// table's action items (sk ACTION) are actions; the feed heads (sk FEED,
// see action.FeedOf) and any other item are not.
func actionOf(image map[string]events.DynamoDBAttributeValue) (action.Action, bool) {
	if image["sk"].DataType() != events.DataTypeString || image["sk"].String() != "ACTION" {
		return action.Action{}, false
	}
	var a action.Action
	if err := attributevalue.UnmarshalMap(ddb.StreamItem(image), &a); err != nil {
		return action.Action{}, false
	}
	return a, a.ID != "" && a.Type != ""
}
