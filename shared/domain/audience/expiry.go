package audience

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// ExpiryReport is what one expiry run did.
type ExpiryReport struct {
	Tenants int `json:"tenants"`
	// Removed counts the memberships removed (SEGMENT_LEFT recorded);
	// Skipped those renewed or removed by another request meanwhile, or
	// of segments since deleted.
	Removed int `json:"removed"`
	Skipped int `json:"skipped"`
}

// ErrCutOff is returned by a run that stopped before its deadline with
// memberships left: the invocation fails, Lambda retries it, and the retry
// goes on from what is left (every removal is its own transaction).
var ErrCutOff = errors.New("expiry run cut off before its deadline; the retry continues")

// stopBefore is how long before the invocation's deadline a run stops.
const stopBefore = 10 * time.Second

// HandleSchedule is the expiry function's handler: EventBridge invokes it
// daily at 00:00 UTC (template.yaml) and it runs Expire.
func (s *Service) HandleSchedule(ctx context.Context, ev events.EventBridgeEvent) (ExpiryReport, error) {
	rep, err := s.Expire(ctx)
	s.log().Info("expiry run", "source", ev.Source, "tenants", rep.Tenants, "removed", rep.Removed, "skipped", rep.Skipped, "ok", err == nil)
	return rep, err
}

// Expire removes, for every tenant with expiring segments, each membership
// whose end has passed (ExpireTenant). Running it twice changes nothing the
// second time.
func (s *Service) Expire(ctx context.Context) (ExpiryReport, error) {
	var rep ExpiryReport
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.Table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(directoryPK)},
	}
	for {
		page, err := s.DB.Query(ctx, in)
		if err != nil {
			return rep, fmt.Errorf("expiry: list tenants: %w", err)
		}
		for _, it := range page.Items {
			var d struct {
				TenantID string `dynamodbav:"tenantId"`
			}
			if err := attributevalue.UnmarshalMap(it, &d); err != nil {
				return rep, fmt.Errorf("expiry: %w", err)
			}
			r, err := s.ExpireTenant(ctx, d.TenantID)
			rep.Tenants++
			rep.Removed += r.Removed
			rep.Skipped += r.Skipped
			if err != nil {
				return rep, err
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return rep, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// ExpireTenant removes a tenant's memberships whose end has passed: each
// with its SEGMENT_LEFT action (reason EXPIRED) and the OnLeave hooks, in
// one transaction conditional on the membership still ending then (a
// renewal in between keeps it).
func (s *Service) ExpireTenant(ctx context.Context, tenantID string) (ExpiryReport, error) {
	rep := ExpiryReport{Tenants: 1}
	now := s.Clock.Now()
	title := ""
	if s.Tenants != nil {
		var err error
		if title, err = s.Tenants.Title(ctx, tenantID); err != nil {
			return rep, fmt.Errorf("expiry %s: %w", tenantID, err)
		}
	}
	segments := map[string]*Segment{}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.Table), IndexName: aws.String("gsi2"),
		KeyConditionExpression: aws.String("gsi2pk = :pk AND gsi2sk < :bound"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(expiresPK(tenantID)),
			// Keys are <endsAt>#<segmentId>#<userId>; '$' sorts after '#'.
			":bound": str(clock.Stamp(now) + "$"),
		},
	}
	for {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < stopBefore {
			return rep, ErrCutOff
		}
		page, err := s.DB.Query(ctx, in)
		if err != nil {
			return rep, fmt.Errorf("expiry %s: %w", tenantID, err)
		}
		var ms []membership
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &ms); err != nil {
			return rep, fmt.Errorf("expiry %s: %w", tenantID, err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.UserID)
		}
		people, err := s.Users.People(ctx, tenantID, ids)
		if err != nil {
			return rep, fmt.Errorf("expiry %s: %w", tenantID, err)
		}
		for _, m := range ms {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < stopBefore {
				return rep, ErrCutOff
			}
			removed, err := s.expireOne(ctx, title, segments, people, m, now)
			if err != nil {
				return rep, fmt.Errorf("expiry %s: %w", tenantID, err)
			}
			if removed {
				rep.Removed++
			} else {
				rep.Skipped++
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return rep, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// expireOne removes one ended membership; false when another request
// changed it first or its segment is gone (then it is only deleted).
func (s *Service) expireOne(ctx context.Context, title string, segments map[string]*Segment, people map[string]Person, m membership, now time.Time) (bool, error) {
	seg, known := segments[m.SegmentID]
	if !known {
		sg, _, err := s.st().getSegment(ctx, m.TenantID, m.SegmentID)
		switch {
		case errors.Is(err, ErrNotFound):
			seg = nil
		case err != nil:
			return false, err
		default:
			seg = &sg
		}
		segments[m.SegmentID] = seg
	}
	tx := &ddb.Tx{}
	tx.Add("membership", s.st().memberDelete(m.TenantID, m.SegmentID, m.UserID, m.EndsAt, now))
	var left action.Action
	if seg != nil {
		p, ok := people[m.UserID]
		if !ok {
			p = Person{ID: m.UserID}
		}
		var err error
		if left, err = s.addChange(ctx, tx, ActionLeft, title, *seg, p, ReasonExpired, nil, now, &s.OnLeave); err != nil {
			return false, err
		}
	}
	for attempt := 0; ; attempt++ {
		err := tx.Run(ctx, s.DB)
		switch {
		case err == nil:
			s.react(ctx, left)
			return seg != nil, nil
		case ddb.Failed(err, 0):
			return false, nil
		case ddb.IsTransactionConflict(err) && attempt < 3:
			continue
		default:
			return false, err
		}
	}
}
