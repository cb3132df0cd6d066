package stack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// CreateTables creates every table of the template as template.yaml
// declares it: on-demand billing, its key schema, its global secondary
// indexes (projecting all attributes), its stream where the template
// declares one (StreamSpecification) and, where the template names a TTL
// attribute, time to live. name maps a logical id to the physical table
// name; nil means TableName. Tables that exist already are left as they
// are, so it can run on every start and from every test, except that one
// missing the stream the template declares gets it.
func CreateTables(ctx context.Context, db *dynamodb.Client, t *sam.Template, name func(logicalID string) string) error {
	if name == nil {
		name = TableName
	}
	for _, tbl := range t.Tables {
		if err := createTable(ctx, db, tbl, name(tbl.LogicalID)); err != nil {
			return err
		}
	}
	return nil
}

func createTable(ctx context.Context, db *dynamodb.Client, tbl sam.Table, physical string) error {
	in, err := createTableInput(tbl, physical)
	if err != nil {
		return err
	}
	_, err = db.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	existed := errors.As(err, &inUse)
	if err != nil && !existed {
		return fmt.Errorf("create table %s (%s): %w", physical, tbl.LogicalID, err)
	}
	// DynamoDB Local creates tables at once; LocalStack and AWS take a
	// moment, and TTL can only be set on an active table.
	if err := waitActive(ctx, db, physical); err != nil {
		return err
	}
	if existed && tbl.StreamView != "" {
		// The table was there already, perhaps created without its
		// stream by an earlier run on the same DynamoDB Local.
		if err := enableStream(ctx, db, physical, types.StreamViewType(tbl.StreamView)); err != nil {
			return fmt.Errorf("enable the stream of table %s (%s): %w", physical, tbl.LogicalID, err)
		}
	}
	if tbl.TTL != "" {
		_, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
			TableName: aws.String(physical),
			TimeToLiveSpecification: &types.TimeToLiveSpecification{
				AttributeName: aws.String(tbl.TTL),
				Enabled:       aws.Bool(true),
			},
		})
		if err != nil {
			// Already enabled, or an emulator without TTL: items then
			// simply do not expire, which the code never relies on.
			slog.Debug("time to live not updated", "table", physical, "err", err)
		}
	}
	return nil
}

// enableStream gives an existing table a stream of the view type, unless it
// has one already. A stream of another view type is replaced (DynamoDB
// changes a view type only by disabling the stream and enabling a new one).
func enableStream(ctx context.Context, db *dynamodb.Client, physical string, view types.StreamViewType) error {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(physical)})
	if err != nil {
		return err
	}
	if spec := out.Table.StreamSpecification; spec != nil && aws.ToBool(spec.StreamEnabled) {
		if spec.StreamViewType == view {
			return nil
		}
		slog.Warn("replacing a table's stream of another view type", "table", physical, "view", spec.StreamViewType, "want", view)
		if err := updateStream(ctx, db, physical, &types.StreamSpecification{StreamEnabled: aws.Bool(false)}); err != nil {
			return err
		}
	}
	err = updateStream(ctx, db, physical, &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: view})
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ValidationException" && strings.Contains(api.ErrorMessage(), "already has an enabled stream") {
		// Another process sharing the emulator enabled it meanwhile.
		return nil
	}
	return err
}

// updateStream sets a table's stream specification and waits until the
// table is active again (at once on DynamoDB Local).
func updateStream(ctx context.Context, db *dynamodb.Client, physical string, spec *types.StreamSpecification) error {
	if _, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(physical), StreamSpecification: spec}); err != nil {
		return err
	}
	return waitActive(ctx, db, physical)
}

func waitActive(ctx context.Context, db *dynamodb.Client, physical string) error {
	if err := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 200 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	}).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(physical)}, 2*time.Minute); err != nil {
		return fmt.Errorf("wait for table %s: %w", physical, err)
	}
	return nil
}

// createTableInput builds the CreateTable request for tbl. Only attributes
// used by a key are defined, as DynamoDB requires.
func createTableInput(tbl sam.Table, physical string) (*dynamodb.CreateTableInput, error) {
	if tbl.HashKey == "" {
		return nil, fmt.Errorf("table %s: no hash key in the template", tbl.LogicalID)
	}
	var defs []types.AttributeDefinition
	defined := map[string]bool{}
	define := func(attr string) error {
		if attr == "" || defined[attr] {
			return nil
		}
		typ, ok := tbl.Attributes[attr]
		if !ok {
			return fmt.Errorf("table %s: key attribute %s has no AttributeDefinition", tbl.LogicalID, attr)
		}
		defined[attr] = true
		defs = append(defs, types.AttributeDefinition{
			AttributeName: aws.String(attr),
			AttributeType: types.ScalarAttributeType(typ),
		})
		return nil
	}
	keys := func(hash, rng string) ([]types.KeySchemaElement, error) {
		if err := define(hash); err != nil {
			return nil, err
		}
		if err := define(rng); err != nil {
			return nil, err
		}
		ks := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
		if rng != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange})
		}
		return ks, nil
	}
	ks, err := keys(tbl.HashKey, tbl.RangeKey)
	if err != nil {
		return nil, err
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(physical),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   ks,
	}
	for _, idx := range tbl.Indexes {
		if idx.HashKey == "" {
			return nil, fmt.Errorf("table %s: index %s has no hash key", tbl.LogicalID, idx.Name)
		}
		iks, err := keys(idx.HashKey, idx.RangeKey)
		if err != nil {
			return nil, err
		}
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(idx.Name),
			KeySchema:  iks,
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	in.AttributeDefinitions = defs
	if tbl.StreamView != "" {
		in.StreamSpecification = &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewType(tbl.StreamView),
		}
	}
	return in, nil
}
