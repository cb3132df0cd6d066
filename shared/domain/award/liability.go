package award

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// The points liability. Each perk keeps what its stored awards hold in
// LiabilityShards aggregate items (see store.go for the keys): the
// points outstanding (the sum of the awards' available) and, per expiry
// instant, the points of the awards' lots that expire then. Every write of
// an award adds its delta (the award after the write minus the award as
// read) to one shard in the award's own transaction, with ADD, so the
// aggregate is exactly the sum of the awards whatever the concurrency; the
// report reads the perk's shards (one Query) and sums them. The shard of a
// request's write is chosen at random (several writes of one perk in one
// transaction merge into one Update of the first one's shard); the award
// import merges the deltas of a batch into one Update per perk
// (ImportWrite.Liability, LiabilityWrite).
//
// An award item the aggregate holds carries the marker liabilityCounted.
// Awards stored before the marker existed lack it and are not in the
// aggregate (they predate it): the first write of such an award adds the
// whole award (liabilityDelta) and sets the marker, and the rebuild
// (rebuild.go, POST /reports/points-liability/rebuild) counts every award
// still without it. Both write conditional on the marker being absent as
// read, so an award is added once whatever the race. Virtual awards that
// never changed (a global, CLUB or LEVEL perk's points.initial before the
// award's first change) are not stored and not in the aggregate either.

// LiabilityShards is how many aggregate items a perk's liability spreads
// over.
const LiabilityShards = 16

// LiabilityMonths is how many months of expiries the report lists.
const LiabilityMonths = 12

// LiabilityDelta is what a write of one award changes in its perk's
// liability: the points outstanding and, by expiry instant (stamp), the
// points of lots that expire then.
type LiabilityDelta struct {
	Outstanding int
	Expiring    map[string]int
}

// Zero reports whether d changes nothing.
func (d LiabilityDelta) Zero() bool {
	if d.Outstanding != 0 {
		return false
	}
	for _, v := range d.Expiring {
		if v != 0 {
			return false
		}
	}
	return true
}

// Plus returns d + o.
func (d LiabilityDelta) Plus(o LiabilityDelta) LiabilityDelta {
	out := LiabilityDelta{Outstanding: d.Outstanding + o.Outstanding, Expiring: map[string]int{}}
	for _, m := range []map[string]int{d.Expiring, o.Expiring} {
		for k, v := range m {
			out.Expiring[k] += v
		}
	}
	return out
}

// liabilityDelta is what award p's write changes in its perk's liability:
// cur minus as, where an award as read that the liability does not hold
// yet (new, or stored before the marker: liabilityCounted unset) counts
// as empty, so that its write adds the whole award. The write sets the
// marker, conditional on the award still lacking it when read so (see
// awardWrite): of this write and a rebuild's count, one adds the award.
func (p *pending) liabilityDelta() LiabilityDelta {
	as := p.as
	if !as.LiabilityCounted {
		as = record{}
	}
	return liabilityChange(as, p.cur)
}

// liabilityChange is what an award changes in its perk's liability from
// as to cur: available, and the remaining points of the lots by expiry
// instant.
func liabilityChange(as, cur record) LiabilityDelta {
	d := LiabilityDelta{Outstanding: cur.Available - as.Available, Expiring: map[string]int{}}
	for _, l := range cur.Lots {
		if l.ExpiresAt != "" && l.Remaining != 0 {
			d.Expiring[l.ExpiresAt] += l.Remaining
		}
	}
	for _, l := range as.Lots {
		if l.ExpiresAt != "" && l.Remaining != 0 {
			d.Expiring[l.ExpiresAt] -= l.Remaining
		}
	}
	maps.DeleteFunc(d.Expiring, func(_ string, v int) bool { return v == 0 })
	return d
}

// liabilityState is what a transaction keeps of the liability shard it
// writes for a perk: each award's delta so far (an award written again
// replaces its delta), summed into one Update.
type liabilityState struct {
	shard   int
	byAward map[string]LiabilityDelta
}

// liabilityItemKey is the identity of a liability shard in a transaction.
func (s *Service) liabilityItemKey(t, perkID string, shard int) string {
	return ddb.Key(s.Table, liabilityKey(t, perkID, shard))
}

// writeLiability adds award p's delta to its perk's liability in tx: to
// the shard tx writes for the perk already, merged into that Update, or
// to a shard chosen at random.
func (s *Service) writeLiability(tx *ddb.Tx, p *pending, now time.Time) error {
	d := p.liabilityDelta()
	shard := -1
	for n := range LiabilityShards {
		if _, ok := tx.State(s.liabilityItemKey(p.tenant, p.perk, n)); ok {
			shard = n
			break
		}
	}
	if shard < 0 {
		if d.Zero() {
			return nil
		}
		shard = rand.IntN(LiabilityShards)
	}
	id := ID(p.uid, p.perk)
	_, err := tx.Merge("award", s.liabilityItemKey(p.tenant, p.perk, shard), func(prev any) (types.TransactWriteItem, any, error) {
		st := &liabilityState{shard: shard, byAward: map[string]LiabilityDelta{}}
		if old, ok := prev.(*liabilityState); ok {
			maps.Copy(st.byAward, old.byAward)
		}
		st.byAward[id] = d
		var sum LiabilityDelta
		for _, k := range slices.Sorted(maps.Keys(st.byAward)) {
			sum = sum.Plus(st.byAward[k])
		}
		return s.st().liabilityItem(p.tenant, p.perk, shard, sum, clock.Stamp(now)), st, nil
	})
	if err != nil {
		return fmt.Errorf("liability of perk %s: %w", p.perk, err)
	}
	return nil
}

// LiabilityWrite returns the Update that adds d to shard (taken modulo
// LiabilityShards) of perk perkID's liability: for a batch of the award
// import, the sum of its rows' ImportWrite.Liability of the perk.
func (s *Service) LiabilityWrite(tenantID, perkID string, shard int, d LiabilityDelta) types.TransactWriteItem {
	shard = ((shard % LiabilityShards) + LiabilityShards) % LiabilityShards
	return s.st().liabilityItem(tenantID, perkID, shard, d, clock.Stamp(s.Clock.Now()))
}

// RandomShard returns a liability shard chosen at random.
func RandomShard() int { return rand.IntN(LiabilityShards) }

// liabilityItem returns the Update of a liability shard that adds d: ADD
// outstanding and each expiry instant's attribute.
func (s *store) liabilityItem(t, perkID string, shard int, d LiabilityDelta, now string) types.TransactWriteItem {
	names := map[string]string{}
	values := map[string]types.AttributeValue{
		":t": str(t), ":p": str(perkID), ":now": str(now), ":o": num(d.Outstanding),
	}
	add := []string{"outstanding :o"}
	for i, at := range slices.Sorted(maps.Keys(d.Expiring)) {
		if d.Expiring[at] == 0 {
			continue
		}
		n, v := "#x"+strconv.Itoa(i), ":x"+strconv.Itoa(i)
		names[n], values[v] = expiryAttr(at), num(d.Expiring[at])
		add = append(add, n+" "+v)
	}
	u := &types.Update{
		TableName: aws.String(s.table), Key: liabilityKey(t, perkID, shard),
		UpdateExpression:          aws.String("SET tenantId = :t, perkId = :p, updatedAt = :now ADD " + strings.Join(add, ", ")),
		ExpressionAttributeValues: values,
	}
	if len(names) > 0 {
		u.ExpressionAttributeNames = names
	}
	return types.TransactWriteItem{Update: u}
}

// liabilitySum reads the shards of a perk's liability and sums them.
func (s *store) liabilitySum(ctx context.Context, t, perkID string) (LiabilityDelta, error) {
	in := dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(liabilityPK(t, perkID))},
		ConsistentRead:            aws.Bool(true),
	}
	sum := LiabilityDelta{Expiring: map[string]int{}}
	err := ddb.QueryEach(ctx, s.db, in, func(it ddb.Item) error {
		for name, v := range it {
			n, ok := v.(*types.AttributeValueMemberN)
			if !ok {
				continue
			}
			x, err := strconv.Atoi(n.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			if name == "outstanding" {
				sum.Outstanding += x
			} else if at, ok := strings.CutPrefix(name, expiryAttrPrefix); ok {
				sum.Expiring[at] += x
			}
		}
		return nil
	})
	if err != nil {
		return LiabilityDelta{}, fmt.Errorf("liability of perk %s: %w", perkID, err)
	}
	return sum, nil
}

// Liability is the answer of GET /reports/points-liability.
type Liability struct {
	AsOf  string          `json:"asOf"`
	Perks []PerkLiability `json:"perks"`
	// Months are the months of each perk's expiring (for the CSV
	// export's header).
	Months []string `json:"-"`
}

// PerkLiability is one perk's points liability at asOf: the points
// outstanding and those that expire in each of the LiabilityMonths months
// from asOf's month (in the tenant's time zone), by the month of a lot's
// last valid day.
type PerkLiability struct {
	PerkID      string          `json:"perkId"`
	Title       string          `json:"title"`
	Outstanding int             `json:"outstanding"`
	Expiring    []MonthExpiring `json:"expiring"`
}

// MonthExpiring is the points that expire in one month ("2027-01").
type MonthExpiring struct {
	Month  string `json:"month"`
	Points int    `json:"points"`
}

// LiabilityQuery is what the report asks: asOf (RFC 3339; "": now) and
// one perk ("": every perk of the tenant).
type LiabilityQuery struct {
	AsOf   string
	PerkID string
}

// ParseAsOf reads a report's asOf at now: an RFC 3339 date-time not
// before now (to the second; "" is now). The aggregates hold the awards
// as they are, so a past asOf cannot be answered exactly: 422.
func ParseAsOf(v string, now time.Time) (time.Time, error) {
	now = now.UTC().Truncate(time.Second)
	if v == "" {
		return now, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, apierr.Invalid("asOf", "must be an RFC 3339 date-time such as 2027-01-01T00:00:00Z")
	}
	t = t.UTC().Truncate(time.Second)
	if t.Before(now) {
		return time.Time{}, apierr.Invalid("asOf", "must not be before now (%s): the report holds the balances as they are, projected forward", now.Format(time.RFC3339))
	}
	if t.After(now.AddDate(100, 0, 0)) {
		return time.Time{}, apierr.Invalid("asOf", "must be within 100 years from now")
	}
	return t, nil
}

// Liability returns the tenant's points liability at q.AsOf (GET
// /reports/points-liability; admin): per perk, the points the stored
// awards hold minus those of lots expired at asOf (whether or not the
// expiry run wrote them off yet), and the points expiring in each of the
// LiabilityMonths months from asOf's month. A future asOf projects the
// awards as they are now (no later activity). An unknown perk is 404.
func (s *Service) Liability(ctx context.Context, caller actor.Actor, q LiabilityQuery) (Liability, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Liability{}, err
	}
	asOf, err := ParseAsOf(q.AsOf, s.Clock.Now())
	if err != nil {
		return Liability{}, err
	}
	return s.LiabilityAt(ctx, caller.TenantID, q.PerkID, asOf)
}

// LiabilityAt is the liability of tenant t's perk perkID ("": every
// perk) at asOf, which the caller checked (ParseAsOf).
func (s *Service) LiabilityAt(ctx context.Context, t, perkID string, asOf time.Time) (Liability, error) {
	var perks []perk.Perk
	if perkID != "" {
		p, err := s.Perks.Find(ctx, t, perkID)
		if errors.Is(err, perk.ErrNotFound) {
			return Liability{}, ErrPerkNotFound
		}
		if err != nil {
			return Liability{}, fmt.Errorf("liability of perk %s: %w", perkID, err)
		}
		perks = []perk.Perk{p}
	} else {
		all, err := s.Perks.All(ctx, t)
		if err != nil {
			return Liability{}, fmt.Errorf("liability: perks of %s: %w", t, err)
		}
		perks = all
	}
	zone := time.UTC
	if s.Tenants != nil {
		z, err := s.Tenants.Zone(ctx, t)
		if err != nil {
			return Liability{}, fmt.Errorf("liability: time zone of tenant %s: %w", t, err)
		}
		zone = zoneOr(z)
	}
	out := Liability{AsOf: asOf.UTC().Format(time.RFC3339), Perks: make([]PerkLiability, 0, len(perks))}
	months := liabilityMonths(asOf, zone)
	out.Months = months
	at := clock.Stamp(asOf)
	// The perks' shards are read 8 perks at a time.
	sums := make([]LiabilityDelta, len(perks))
	errs := make([]error, len(perks))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, p := range perks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			sums[i], errs[i] = s.st().liabilitySum(ctx, t, p.ID)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Liability{}, err
	}
	for i, p := range perks {
		sum := sums[i]
		pl := PerkLiability{PerkID: p.ID, Title: p.Title, Outstanding: sum.Outstanding, Expiring: make([]MonthExpiring, len(months))}
		for i, m := range months {
			pl.Expiring[i].Month = m
		}
		for exp, pts := range sum.Expiring {
			if exp <= at {
				// Expired at asOf: not outstanding, written off or not.
				pl.Outstanding -= pts
				continue
			}
			if i := slices.Index(months, lastValidMonth(exp, zone)); i >= 0 {
				pl.Expiring[i].Points += pts
			}
		}
		out.Perks = append(out.Perks, pl)
	}
	return out, nil
}

// liabilityMonths are the LiabilityMonths months ("2006-01") from asOf's
// month in zone.
func liabilityMonths(asOf time.Time, zone *time.Location) []string {
	l := asOf.In(zone)
	first := time.Date(l.Year(), l.Month(), 1, 12, 0, 0, 0, zone)
	out := make([]string, LiabilityMonths)
	for i := range out {
		out[i] = first.AddDate(0, i, 0).Format("2006-01")
	}
	return out
}

// lastValidMonth is the month ("2006-01") of the last day a lot that
// expires at stamp exp (a midnight in zone) is valid.
func lastValidMonth(exp string, zone *time.Location) string {
	t, err := time.Parse(clock.Format, exp)
	if err != nil {
		return ""
	}
	return t.In(zone).Add(-time.Nanosecond).Format("2006-01")
}

// handleLiability serves GET /reports/points-liability (admin): the
// points liability at asOf (default now; before now 422), of every perk
// or of perkId (an unknown one 404).
func (s *Service) handleLiability(r *http.Request, caller actor.Actor) (Liability, error) {
	q := r.URL.Query()
	for k := range q {
		if k != "asOf" && k != "perkId" {
			return Liability{}, apierr.Invalid(k, "is not a parameter of this report (asOf, perkId)")
		}
	}
	in := LiabilityQuery{AsOf: q.Get("asOf"), PerkID: q.Get("perkId")}
	if in.PerkID != "" && !web.ValidID(in.PerkID) {
		return Liability{}, ErrPerkNotFound
	}
	return s.Liability(r.Context(), caller, in)
}
