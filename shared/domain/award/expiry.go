package award

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// The daily expiry run writes off the lots that expired and reminds of
// those about to. It finds its work without a Scan: every award whose
// lots expire carries a key of when the run next has work on it (its
// earliest expiry, or the tenant's reminder ahead of an expiry not yet reminded)
// in the Loyalty table's gsi2, spread over dueShards keys per tenant, and
// the tenants whose perks ever had an expiry policy are listed under one
// key (EXPIRY#LOTS). Each award is its own transaction, conditional on the
// award as read: a run cut off part way, or run twice, or racing a
// redemption, writes each EXPIRY entry once; the next run goes on from
// what is left.

// LotsReport is what one run of the points expiry did.
type LotsReport struct {
	Tenants int `json:"tenants"`
	// Awards counts the awards the run changed; Expired the points it
	// wrote off; Reminded the POINTS_EXPIRING actions it recorded.
	Awards   int `json:"awards"`
	Expired  int `json:"expired"`
	Reminded int `json:"reminded"`
}

// ErrLotsCutOff is returned by a run that stopped before its deadline
// with awards left: the invocation fails, Lambda retries it, and the retry
// goes on from what is left.
var ErrLotsCutOff = errors.New("points expiry cut off before its deadline; the retry continues")

// stopBefore is how long before the invocation's deadline a run stops.
const stopBefore = 10 * time.Second

// ExpiringPerks lists the tenants whose perks ever had a points expiry
// policy (the perk domain).
type ExpiringPerks interface {
	TenantsWithExpiry(ctx context.Context) ([]string, error)
}

// ExpireLots runs the points expiry for every tenant whose perks ever had
// an expiry policy (ExpireTenantLots). Running it twice changes nothing
// the second time.
func (s *Service) ExpireLots(ctx context.Context) (LotsReport, error) {
	var rep LotsReport
	lister, ok := s.Perks.(ExpiringPerks)
	if !ok {
		return rep, nil
	}
	tenants, err := lister.TenantsWithExpiry(ctx)
	if err != nil {
		return rep, fmt.Errorf("points expiry: %w", err)
	}
	for _, t := range tenants {
		r, err := s.ExpireTenantLots(ctx, t)
		rep.Tenants++
		rep.Awards += r.Awards
		rep.Expired += r.Expired
		rep.Reminded += r.Reminded
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// ExpireTenantLots writes off a tenant's expired lots (an EXPIRY entry and
// a POINTS_EXPIRED action per award) and records POINTS_EXPIRING for lots
// that expire within the tenant's reminder (settings.pointsExpiringDays),
// once per lot and expiry.
func (s *Service) ExpireTenantLots(ctx context.Context, tenantID string) (LotsReport, error) {
	rep := LotsReport{Tenants: 1}
	now := s.Clock.Now()
	title := ""
	if s.Tenants != nil {
		var err error
		if title, err = s.Tenants.Title(ctx, tenantID); err != nil {
			return rep, fmt.Errorf("points expiry %s: %w", tenantID, err)
		}
	}
	perks := map[string]perk.Perk{}
	for shard := 0; shard < dueShards; shard++ {
		in := dynamodb.QueryInput{
			TableName: aws.String(s.Table), IndexName: aws.String("gsi2"),
			KeyConditionExpression: aws.String("gsi2pk = :pk AND gsi2sk < :bound"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": str(fmt.Sprintf("%s#LOTDUE#%d", tenantID, shard)),
				// Keys are <dueAt>#<userId>#<perkId>; '$' sorts after '#'.
				":bound": str(clock.Stamp(now) + "$"),
			},
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < stopBefore {
			return rep, ErrLotsCutOff
		}
		err := ddb.QueryEach(ctx, s.DB, in, func(it ddb.Item) error {
			if dl, ok := ctx.Deadline(); ok && time.Until(dl) < stopBefore {
				return ErrLotsCutOff
			}
			pk, _ := it["pk"].(*types.AttributeValueMemberS)
			sk, _ := it["sk"].(*types.AttributeValueMemberS)
			if pk == nil || sk == nil {
				return nil
			}
			uid := strings.TrimPrefix(pk.Value, userPK(tenantID, ""))
			perkID := strings.TrimPrefix(sk.Value, skAwardPrefix)
			p, ok := perks[perkID]
			if !ok {
				var err error
				p, err = s.Perks.Find(ctx, tenantID, perkID)
				if errors.Is(err, perk.ErrNotFound) {
					// A deleted perk's award: its lots expire all the same.
					p, err = perk.Perk{ID: perkID}, nil
				}
				if err != nil {
					return err
				}
				perks[perkID] = p
			}
			person := Person{ID: uid}
			if got, err := s.Users.Person(ctx, tenantID, uid); err == nil {
				person = got
			} else if apierr.CodeOf(err) != apierr.NotFound {
				return err
			}
			sub := Subject{TenantID: tenantID, TenantTitle: title, Perk: p, Person: person}
			r, err := s.expireAward(ctx, sub)
			if err != nil {
				return err
			}
			rep.Awards += r.Awards
			rep.Expired += r.Expired
			rep.Reminded += r.Reminded
			return nil
		})
		switch {
		case errors.Is(err, ErrLotsCutOff):
			return rep, ErrLotsCutOff
		case err != nil:
			return rep, fmt.Errorf("points expiry %s: %w", tenantID, err)
		}
	}
	return rep, nil
}

// expireAward writes off an award's expired lots and records the
// reminder of those about to expire, in one transaction conditional on
// the award as read (a lost race reads again).
func (s *Service) expireAward(ctx context.Context, sub Subject) (LotsReport, error) {
	var rep LotsReport
	var awardAt int
	err := s.writeTx(ctx, func(now time.Time) (*ddb.Tx, error) {
		rep = LotsReport{}
		tx := &ddb.Tx{}
		at, out, p, err := s.change(ctx, tx, sub, op{kind: opExpire}, now)
		if err != nil {
			return nil, err
		}
		awardAt = at
		rep.Expired = out.expired
		soon := p.cur.remind(now, reminderOf(p))
		if len(soon) > 0 {
			total := 0
			list := make([]any, 0, len(soon))
			for _, e := range soon {
				total += e.Points
				list = append(list, map[string]any{"points": e.Points, "expiresAt": e.ExpiresAt})
			}
			meta := map[string]any{"awardId": ID(p.uid, p.perk), "perkId": p.perk, "points": total, "expiring": list, "pointsAvailable": p.cur.Available}
			if _, err := s.record(tx, sub, ActionPointsExpiring, now, meta); err != nil {
				return nil, err
			}
			rep.Reminded = 1
			if awardAt, err = s.writeAward(tx, p, now); err != nil {
				return nil, err
			}
		}
		if rep.Expired > 0 || rep.Reminded > 0 {
			rep.Awards = 1
		}
		return tx, nil
	}, func(err error) (bool, error) {
		if ddb.Failed(err, awardAt) {
			return true, nil
		}
		return ledgerRace(err)
	})
	if errors.Is(err, ErrNotFound) {
		return LotsReport{}, nil
	}
	return rep, err
}

// remind marks the lots that expire within before of now and were not yet
// reminded of, and returns their points by expiry.
func (r *record) remind(now time.Time, before time.Duration) []Expiring {
	bound := clock.Stamp(now.Add(before))
	by := map[string]int{}
	var order []string
	for i := range r.Lots {
		l := &r.Lots[i]
		if l.ExpiresAt == "" || l.Reminded || l.Remaining <= 0 || l.ExpiresAt > bound {
			continue
		}
		l.Reminded = true
		if _, ok := by[l.ExpiresAt]; !ok {
			order = append(order, l.ExpiresAt)
		}
		by[l.ExpiresAt] += l.Remaining
	}
	out := make([]Expiring, 0, len(order))
	for _, at := range order {
		out = append(out, Expiring{Points: by[at], ExpiresAt: at})
	}
	return out
}
