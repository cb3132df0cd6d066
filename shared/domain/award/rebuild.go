package award

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// The liability rebuild (POST /reports/points-liability/rebuild, run by
// the jobs function: shared/domain/awardcsv) counts the awards the liability
// does not hold: those stored before the marker liabilityCounted existed
// and not written since. It reads the tenant's awards through the tenant
// index (gsi1: gsi1pk = <t>#AWARDS, gsi1sk = <updatedAt>#<awardId>,
// oldest change first; no Scan) a page at a time, and counts each award
// without the marker in one transaction of its own: the marker set on the
// award, conditional on the award being as read (its entry count, balance
// and last change) and still without the marker, and the whole award
// (available, and its lots' remaining points by expiry instant) added to
// a random shard of its perk. A lost race (a write of the award since the
// read, which counted it if it was the platform's) reads the award again:
// an award is added to the liability once, by its first write since the
// marker or by the rebuild, whichever commits first. A second rebuild
// finds every award counted.
//
// The read stops at the awards last changed when the rebuild was asked
// for (until): every write sets the award's index key to the write's
// time, so an award written since has moved past until, and that write
// (of this version) counted it. The rebuild reads each award once however
// busy the tenant is, and ends. (A write by a version without the marker,
// during a deployment, moves an award past until uncounted: run the
// rebuild once every function runs this version, or run it again.)
//
// The count names its operation on the award (liabilityCountedBy): a run
// resumed after a crash finds the awards the crashed run counted past its
// checkpoint naming the operation, and reports them counted (not counted
// already).

// RebuildPage is what the rebuild did with one page of the tenant's
// awards: Read is how many awards the page held, Counted how many of them
// the rebuild's operation counted (in this run or an earlier one), and
// Skipped how many were counted already by other writes.
type RebuildPage struct {
	Read, Counted, Skipped int
}

// rebuildWidth is how many awards of a page the rebuild counts at once
// (each its own transaction).
const rebuildWidth = 8

// RebuildLiability reads up to limit of tenant t's stored awards last
// changed at or before until, after start (nil: from the oldest change),
// and counts in their perks' liability each one the liability does not
// hold yet, as operation opID. It returns what it did and the key to read
// on from (nil: the awards are read to the end).
func (s *Service) RebuildLiability(ctx context.Context, t, opID string, until time.Time, start ddb.Item, limit int) (RebuildPage, ddb.Item, error) {
	in := s.tenantQuery(t, nil)
	in.ScanIndexForward = aws.Bool(true)
	// Every award id sorts before "~": the awards changed in until's
	// millisecond are read.
	in.KeyConditionExpression = aws.String("gsi1pk = :pk AND gsi1sk <= :until")
	in.ExpressionAttributeValues[":until"] = str(clock.Stamp(until) + "#~")
	items, next, err := ddb.QueryPage(ctx, s.DB, in, start, limit, nil)
	if err != nil {
		return RebuildPage{}, nil, fmt.Errorf("rebuild liability %s: %w", t, err)
	}
	var recs []record
	if err := attributevalue.UnmarshalListOfMaps(items, &recs); err != nil {
		return RebuildPage{}, nil, fmt.Errorf("rebuild liability %s: %w", t, err)
	}
	counted := make([]bool, len(recs))
	errs := make([]error, len(recs))
	sem := make(chan struct{}, rebuildWidth)
	var wg sync.WaitGroup
	for i, rec := range recs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			counted[i], errs[i] = s.countAward(ctx, t, opID, rec)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return RebuildPage{}, nil, fmt.Errorf("rebuild liability %s: %w", t, err)
	}
	page := RebuildPage{Read: len(recs)}
	for _, c := range counted {
		if c {
			page.Counted++
		} else {
			page.Skipped++
		}
	}
	return page, next, nil
}

// countAward counts award rec (as read) in its perk's liability for
// operation opID unless the liability holds it already, and reports
// whether opID counted it (now, or in an earlier run of the operation
// that stopped before its checkpoint: the award still names opID).
// A lost race reads the award again (the item DynamoDB returns with the
// failed condition, else a consistent read), at most maxAttempts times.
func (s *Service) countAward(ctx context.Context, t, opID string, rec record) (bool, error) {
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if attempt > 0 {
			backoff(ctx, attempt)
		}
		if rec.LiabilityCounted {
			return opID != "" && rec.LiabilityCountedBy == opID, nil
		}
		as := rec.clone()
		as.reconcile()
		tx := &ddb.Tx{}
		awardAt := tx.Add("award", s.st().countItem(t, rec, opID))
		if d := liabilityChange(record{}, as); !d.Zero() {
			tx.Add("liability", s.st().liabilityItem(t, rec.PerkID, RandomShard(), d, clock.Stamp(s.Clock.Now())))
		}
		err := tx.Run(ctx, s.DB)
		switch {
		case err == nil:
			return true, nil
		case ddb.Failed(err, awardAt):
			if old, ok := oldItem(err, awardAt); ok {
				rec = old
				continue
			}
		case !ddb.IsTransactionConflict(err):
			return false, fmt.Errorf("count award %s: %w", rec.ID, err)
		}
		got, found, err := s.st().get(ctx, t, rec.UserID, rec.PerkID)
		if err != nil {
			return false, fmt.Errorf("count award %s: %w", rec.ID, err)
		}
		if !found {
			return false, nil
		}
		rec = got
	}
	return false, fmt.Errorf("count award %s: %w", rec.ID, ErrConcurrent)
}

// countItem returns the Update that marks award rec counted in the
// liability by operation opID, conditional on the award being as read
// (its entry count, balance and last change) and not counted yet.
func (s *store) countItem(t string, rec record, opID string) types.TransactWriteItem {
	set := "liabilityCounted = :counted"
	values := map[string]types.AttributeValue{
		":counted": &types.AttributeValueMemberBOOL{Value: true}, ":ca": num(rec.Available), ":cseq": num(rec.Seq),
	}
	cond := "attribute_not_exists(liabilityCounted) AND available = :ca"
	if rec.Seq == 0 {
		// An award stored before the ledger has no entry count.
		cond += " AND (attribute_not_exists(seq) OR seq = :cseq)"
	} else {
		cond += " AND seq = :cseq"
	}
	if rec.UpdatedAt != "" {
		cond += " AND updatedAt = :cu"
		values[":cu"] = str(rec.UpdatedAt)
	} else {
		cond += " AND attribute_not_exists(updatedAt)"
	}
	if opID != "" {
		set += ", liabilityCountedBy = :by"
		values[":by"] = str(opID)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.table), Key: awardKey(t, rec.UserID, rec.PerkID),
		UpdateExpression: aws.String("SET " + set), ConditionExpression: aws.String(cond),
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}
