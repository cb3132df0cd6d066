package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// The points liability (shared/domain/award liability.go): every write of an
// award adds its change to one of a perk's 16 shard items, in the award's
// own transaction. Its cost is measured on the raw side: grants of one
// perk by liabilityWriters writers at once, each a grant's transaction
// (award, user check, AWARD_GRANTED, ledger entry) with the ADD to a
// random shard, against the same transactions without it (same reads,
// same item sizes, same concurrency).

// liabilityWriters is how many writers grant the perk at once.
const liabilityWriters = 8

// liabilityShards is the shards of a perk's liability (award.LiabilityShards).
const liabilityShards = 16

// withLiability returns items with, unless r leaves it out, the ADD of
// points to a random shard of the perk's liability, as the API writes it.
func (r *raw) withLiability(points int64, items ...types.TransactWriteItem) []types.TransactWriteItem {
	if r.noLiability {
		return items
	}
	t := r.e.tenant
	return append(items, types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(r.e.tables.Loyalty),
		Key:                       key(t+"#LIABILITY#"+r.fx.perk, fmt.Sprintf("SHARD#%02d", rand.IntN(liabilityShards))),
		UpdateExpression:          aws.String("SET tenantId = :t, perkId = :p, updatedAt = :now ADD outstanding :o"),
		ExpressionAttributeValues: item{":t": s(t), ":p": s(r.fx.perk), ":now": s(clock.Stamp(time.Now())), ":o": n(points)},
	}})
}

// benchLiability measures the grants of one perk with the liability
// aggregate against the same grants without it, taking turns.
func benchLiability(ctx context.Context, e *env, set settings, rep *report) error {
	fmt.Fprintf(os.Stderr, "bench: grants of one perk by %d writers, with and without the liability aggregate\n", liabilityWriters)
	fx, err := e.setup(ctx, 2*liabilityWriters)
	if err != nil {
		return err
	}
	if err := (&raw{e: e, fx: fx}).prepare(ctx); err != nil {
		return err
	}
	with := &raw{e: e, fx: fx, checkins: map[int]string{}}
	without := &raw{e: e, fx: fx, checkins: map[int]string{}, noLiability: true}
	grants := func(r *raw, requests int) load {
		return load{workers: liabilityWriters, requests: requests, seq: []string{opGrant}, users: len(fx.users), do: r.do}
	}
	per := (set.Requests + rounds - 1) / rounds
	// Warm both up alike (DynamoDB Local's JIT, the shard items).
	for _, r := range []*raw{with, without} {
		if x := grants(r, 4*liabilityWriters).run(ctx); x.Errors > 0 {
			return fmt.Errorf("warm-up: %v", x.FirstErrors[0])
		}
	}
	var a, b result
	for range rounds {
		x := grants(with, per).run(ctx)
		if x.Errors > 0 {
			return fmt.Errorf("grants with the liability: %v", x.FirstErrors[0])
		}
		y := grants(without, per).run(ctx)
		if y.Errors > 0 {
			return fmt.Errorf("grants without the liability: %v", y.FirstErrors[0])
		}
		a, b = a.merge(x), b.merge(y)
	}
	name := fmt.Sprintf("grants of one perk, %d writers, with the liability aggregate (vs without)", liabilityWriters)
	all, ref := a.All(), b.All()
	rep.Rows = append(rep.Rows,
		higher("liability", name, a.ReqPerSec(), b.ReqPerSec(), "grants/s", ""),
		lower("liability", name+" p50", ms(quantile(all, 0.5)), ms(quantile(ref, 0.5)), "ms", ""),
		lower("liability", name+" p99", ms(quantile(all, 0.99)), ms(quantile(ref, 0.99)), "ms", ""))
	rep.Notes = append(rep.Notes, fmt.Sprintf("liability: %d of %d grants with the aggregate and %d of %d without were tried again after a TransactionConflict",
		with.conflicts.Load(), a.Requests, without.conflicts.Load(), b.Requests))
	return nil
}
