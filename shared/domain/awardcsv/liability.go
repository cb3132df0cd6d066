package awardcsv

import (
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/award"
)

// The points liability of an import (see shared/domain/award liability.go): each
// grant's ImportWrite carries what it changes in its perk's liability, and
// each transaction of a batch adds the sum of its rows' changes to one
// shard per perk, chosen at random per batch, so that a transaction names
// each shard once however many rows grant the perk (each perk a row grants
// counts as one item of the chunk: job.Plan.Shared).

// shared returns the chunk's Shared writes: the liability shards' updates
// (liability) and the feed heads of the actions of the rows [lo, hi) that
// still grant (a row failed or prepared again counts as it is now), one
// per user, each holding the user's actions of the transaction in input
// order (action.Recorder.Heads).
func (imp *importer) shared(entries []*entry) func(lo, hi int) ([]types.TransactWriteItem, error) {
	if imp.params.DryRun {
		return nil
	}
	liability := imp.liability(entries)
	return func(lo, hi int) ([]types.TransactWriteItem, error) {
		out := liability(lo, hi)
		var as []action.Action
		for _, e := range entries[lo:hi] {
			if !e.ok() {
				continue
			}
			for _, w := range e.writes {
				as = append(as, w.Actions...)
			}
		}
		heads, err := imp.s.Awards.Actions.Heads(as...)
		if err != nil {
			return nil, err
		}
		return append(out, heads...), nil
	}
}

// liability returns, for the rows [lo, hi) that still grant, per perk the
// Update that adds the sum of their liability changes to the shard the
// batch chose for the perk.
func (imp *importer) liability(entries []*entry) func(lo, hi int) []types.TransactWriteItem {
	shards := map[string]int{}
	return func(lo, hi int) []types.TransactWriteItem {
		sums := map[string]award.LiabilityDelta{}
		for _, e := range entries[lo:hi] {
			if !e.ok() {
				continue
			}
			for _, w := range e.writes {
				sums[w.PerkID] = sums[w.PerkID].Plus(w.Liability)
			}
		}
		var out []types.TransactWriteItem
		for _, id := range slices.Sorted(maps.Keys(sums)) {
			if sums[id].Zero() {
				continue
			}
			shard, ok := shards[id]
			if !ok {
				shard = award.RandomShard()
				shards[id] = shard
			}
			out = append(out, imp.s.Awards.LiabilityWrite(imp.tenantID, id, shard, sums[id]))
		}
		return out
	}
}
