package award

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/clock"
)

// ImportGrant is one grant of a bulk award import: Points of Perk to User
// (the import resolves the default, the perk's points.initial).
type ImportGrant struct {
	User   Person
	Perk   perk.Perk
	Points int
	// EarnedAt is when the points were earned (zero: now): a merchant
	// migrating from another platform brings lots with their real dates.
	EarnedAt time.Time
}

// ImportWrite is how one ImportGrant applies: the items it adds to the
// job's transaction (with the checkpoint, so a row applies exactly once)
// and what the results file reports.
type ImportWrite struct {
	Items []types.TransactWriteItem
	// AwardAt and MemberAt are the indexes in Items of the award's
	// conditional update and, for a CLUB or LEVEL perk, of the membership
	// check (-1 when there is none): a failed condition of the award means
	// it changed since it was read (prepare the row again), of the
	// membership that the user does not hold the perk.
	AwardAt  int
	MemberAt int
	// Key identifies the award: a transaction may hold each award once.
	Key     string
	AwardID string
	// Granted is what the grant adds after the perk's max; Available what
	// the award holds after it.
	Granted   int
	Available int
	// Liability is what the grant changes in its perk's liability: the
	// importer adds the sum of a batch's rows, per perk, to one shard in
	// the batch's transaction (LiabilityWrite).
	Liability LiabilityDelta
	PerkID    string
	// Actions are the actions whose Puts Items holds, as stored: the
	// importer adds their feed heads to the transaction, one per user
	// (action.Recorder.Heads of all the actions of the transaction).
	Actions []action.Action
}

// PrepareImport reads the current awards of the grants (BatchGetItem, 100
// at a time) and returns each grant's write, as Grant would apply it: a
// new award holds the points granted, a virtual one starts from
// points.initial, the result is clamped to points.max, and the update is
// conditional on the award being unchanged since this read. With
// opt.Silent no action is added; else each grant records AWARD_GRANTED
// (source IMPORT with opt.OperationID). Two grants of one award in one
// call are prepared from the same read: the caller puts them in separate
// transactions (Key) and prepares the later one again after the earlier
// one committed.
func (s *Service) PrepareImport(ctx context.Context, tenantID, tenantTitle string, grants []ImportGrant, opt GrantOptions, now time.Time) ([]ImportWrite, error) {
	st := s.st()
	current, err := st.getMany(ctx, tenantID, grants)
	if err != nil {
		return nil, err
	}
	var zone *time.Location
	out := make([]ImportWrite, len(grants))
	for i, g := range grants {
		p, uid := g.Perk, g.User.ID
		rec, found := current[awardKeyString(uid, p.ID)]
		if !found {
			rec = record{ID: ID(uid, p.ID), TenantID: tenantID, UserID: uid, PerkID: p.ID, Created: clock.Stamp(now)}
		}
		rec.reconcile()
		pend := &pending{found: found, exists: found, as: rec, cur: rec.clone(), tenant: tenantID, uid: uid, perk: p.ID}
		o := op{kind: opGrant, points: g.Points, virtual: p.IsGlobal || p.HeldThroughSegment(), initial: p.Points.InitialOr(), max: p.Points.Max,
			now: now, earnedAt: g.EarnedAt, policy: p.Points.Expiry}
		if o.policy.Expires() && zone == nil && s.Tenants != nil {
			if zone, err = s.Tenants.Zone(ctx, tenantID); err != nil {
				return nil, fmt.Errorf("time zone of tenant %s: %w", tenantID, err)
			}
		}
		o.zone = zone
		res, err := pend.apply(o)
		if err != nil {
			return nil, fmt.Errorf("import grant of %s to %s: %w", p.ID, uid, err)
		}
		pend.cur.Seq = pend.as.Seq + pend.entries
		award, err := s.awardWrite(pend, now)
		if err != nil {
			return nil, err
		}
		w := ImportWrite{Key: awardKeyString(uid, p.ID), AwardID: ID(uid, p.ID), Granted: res.granted, Available: res.available, MemberAt: -1,
			Liability: pend.liabilityDelta(), PerkID: p.ID}
		w.Items = append(w.Items, award)
		if p.HeldThroughSegment() {
			w.MemberAt = len(w.Items)
			w.Items = append(w.Items, s.Memberships.MemberCheck(tenantID, p.SegmentID, uid, now))
		}
		sub := Subject{TenantID: tenantID, TenantTitle: tenantTitle, Perk: p, Person: g.User}
		// The ledger entries: the EXPIRY of lots that expired and a
		// virtual award's initial points (before), the grant's EARN, and
		// the EXPIRY of a lot earned long enough ago to have expired.
		cause := ledger.Cause{Source: SourceImport, OperationID: opt.OperationID}
		if !opt.Silent {
			meta := map[string]any{"awardId": w.AwardID, "perkId": p.ID, "points": g.Points, "pointsGranted": res.granted, "pointsAvailable": res.available, "balanceAfter": res.available, "source": SourceImport}
			if opt.OperationID != "" {
				meta["operationId"] = opt.OperationID
			}
			a, err := s.importAction(&w, s.act(sub, ActionGranted, now, meta))
			if err != nil {
				return nil, err
			}
			cause.ActionID = a.ID
		}
		entries := slices.Clone(res.pre)
		if res.moved != 0 {
			entries = append(entries, ledger.Entry{Seq: res.seq, Type: ledger.Earn, Points: res.moved, BalanceAfter: res.after, Lots: res.lots, Renews: res.renews, Cause: cause})
		}
		entries = append(entries, res.post...)
		if res.expired > 0 {
			var lots []ledger.LotPoints
			for _, e := range entries {
				if e.Type == ledger.Expiry {
					lots = append(lots, e.Lots...)
				}
			}
			a, err := s.importAction(&w, s.act(sub, ActionPointsExpired, now, map[string]any{"awardId": w.AwardID, "perkId": p.ID, "points": res.expired, "lots": lotsMeta(lots), "pointsAvailable": res.available, "balanceAfter": res.available}))
			if err != nil {
				return nil, err
			}
			for j := range entries {
				if entries[j].Type == ledger.Expiry {
					entries[j].Cause.ActionID = a.ID
				}
			}
		}
		for _, e := range entries {
			e.Created = clock.Stamp(now)
			it, err := ledger.Item(s.Table, tenantID, uid, p.ID, e)
			if err != nil {
				return nil, err
			}
			w.Items = append(w.Items, it)
		}
		out[i] = w
	}
	return out, nil
}

// importAction adds the Put of a to w's items (its head is the
// importer's, see ImportWrite.Actions) and returns it as stored.
func (s *Service) importAction(w *ImportWrite, a action.Action) (action.Action, error) {
	puts, as, err := s.Actions.Puts(a)
	if err != nil {
		return action.Action{}, err
	}
	w.Items = append(w.Items, puts...)
	w.Actions = append(w.Actions, as...)
	return as[0], nil
}

func awardKeyString(uid, perkID string) string { return uid + "|" + perkID }

// getMany reads the stored awards of grants, by awardKeyString.
func (s *store) getMany(ctx context.Context, t string, grants []ImportGrant) (map[string]record, error) {
	out := map[string]record{}
	seen := map[string]bool{}
	var keys []map[string]types.AttributeValue
	for _, g := range grants {
		k := awardKeyString(g.User.ID, g.Perk.ID)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, awardKey(t, g.User.ID, g.Perk.ID))
		}
	}
	for i := 0; i < len(keys); i += 100 {
		req := map[string]types.KeysAndAttributes{s.table: {Keys: keys[i:min(i+100, len(keys))], ConsistentRead: aws.Bool(true)}}
		for len(req) > 0 {
			res, err := s.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("read awards: %w", err)
			}
			var recs []record
			if err := attributevalue.UnmarshalListOfMaps(res.Responses[s.table], &recs); err != nil {
				return nil, fmt.Errorf("read awards: %w", err)
			}
			for _, r := range recs {
				out[awardKeyString(r.UserID, r.PerkID)] = r
			}
			req = res.UnprocessedKeys
		}
	}
	return out, nil
}
