package award

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/ledger"
	"github.com/loyalty-platform/platform/shared/perk"
)

// ImportGrant is one grant of a bulk award import: Points of Perk to User
// (the import resolves the default, the perk's points.initial).
type ImportGrant struct {
	User   Person
	Perk   perk.Perk
	Points int
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
	out := make([]ImportWrite, len(grants))
	for i, g := range grants {
		p, uid := g.Perk, g.User.ID
		cur, found := current[awardKeyString(uid, p.ID)]
		base := 0
		switch {
		case found:
			base = cur.Available
		case p.IsGlobal || p.HeldThroughSegment():
			base = p.Points.InitialOr()
		}
		next := base + g.Points
		if limit := ceiling(p.Points.Max); next > limit {
			next = max(limit, base)
		}
		delta := next - base
		// The ledger entries: a virtual award's initial points when this
		// grant stores it, and the grant's EARN.
		var entries []ledger.Entry
		if !found && (p.IsGlobal || p.HeldThroughSegment()) && base != 0 {
			entries = append(entries, ledger.Entry{Type: ledger.Earn, Points: base, BalanceAfter: base, Cause: ledger.Cause{Source: SourceInitial}})
		}
		cause := ledger.Cause{Source: SourceImport, OperationID: opt.OperationID}
		if delta != 0 {
			entries = append(entries, ledger.Entry{Type: ledger.Earn, Points: delta, BalanceAfter: next, Cause: cause})
		}
		seq := cur.Seq + len(entries)
		c := change{set: "available = :avail, seq = :seq", add: "granted :delta", values: map[string]types.AttributeValue{":avail": num(next), ":delta": num(delta), ":seq": num(seq)}}
		switch {
		case !found:
			c.condition = "attribute_not_exists(pk)"
		case cur.Seq == 0:
			// Stored before the ledger, or by changes that moved no
			// points (seq 0).
			c.condition = "(attribute_not_exists(seq) OR seq = :cseq) AND available = :cur"
			c.values[":cseq"], c.values[":cur"] = num(0), num(base)
		default:
			c.condition = "seq = :cseq AND available = :cur"
			c.values[":cseq"], c.values[":cur"] = num(cur.Seq), num(base)
		}
		w := ImportWrite{Key: awardKeyString(uid, p.ID), AwardID: ID(uid, p.ID), Granted: delta, Available: next, MemberAt: -1}
		w.Items = append(w.Items, st.item(tenantID, uid, p.ID, stamp(now), c))
		if p.HeldThroughSegment() {
			w.MemberAt = len(w.Items)
			w.Items = append(w.Items, s.Memberships.MemberCheck(tenantID, p.SegmentID, uid, now))
		}
		if !opt.Silent {
			sub := Subject{TenantID: tenantID, TenantTitle: tenantTitle, Perk: p, Person: g.User}
			meta := map[string]any{"awardId": w.AwardID, "perkId": p.ID, "points": g.Points, "pointsGranted": delta, "pointsAvailable": next, "source": SourceImport}
			if opt.OperationID != "" {
				meta["operationId"] = opt.OperationID
			}
			a := s.act(sub, ActionGranted, now, meta)
			it, err := s.Actions.TransactItem(a)
			if err != nil {
				return nil, err
			}
			w.Items = append(w.Items, it)
			if delta != 0 {
				entries[len(entries)-1].Cause.ActionID = a.ID
			}
		}
		for j, e := range entries {
			e.Seq, e.Created = cur.Seq+j+1, stamp(now)
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
