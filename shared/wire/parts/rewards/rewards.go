// Package rewards builds the loyalty domains (perks, award enrichments,
// awards, segments) for the functions that serve or use them (loyalty,
// audiences, expiry, jobs, users, pos, rules) and joins them: perks check their
// segment, awards read memberships, enrichments show on awards, and
// joining or leaving a segment records the CLUB and LEVEL perks' actions
// in the membership's transaction (a hook). It links the small profile and
// location reads, never the users domain itself.
package rewards

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/awardcsv"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/enrichment"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/domain/segmentgrant"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Rewards are the loyalty domains, wired together.
type Rewards struct {
	Perks       *perk.Service
	Enrichments *enrichment.Service
	Awards      *award.Service
	Audiences   *audience.Service
	// Rules run on the actions the loyalty domains record (and on every
	// action the rules function reads from the stream).
	Rules *rule.Engine
}

// New builds the loyalty domains on b, recording actions with actions,
// with the rules engine, registered on actions (OnRecorded) so that it
// runs the rules on the actions a request records before the request
// answers.
func New(b *wire.Base, actions *action.Recorder) *Rewards {
	r := Domains(b, actions)
	r.Rules = &rule.Engine{
		DB: b.DB, Table: b.Config.Tables.Audiences, Clock: b.Clock, Cursor: b.Cursor, Log: b.Log,
		Perks: r.Perks, Awards: r.Awards, Audiences: r.Audiences, Cache: b.TenantCache,
		Tenants: b.Tenants(), Actions: actions,
	}
	actions.OnRecorded(r.Rules)
	return r
}

// Domains builds the loyalty domains on b without the rules engine (Rules
// is nil): the rules function applies the rules on what they record, from
// the actions stream. The jobs function builds them so.
func Domains(b *wire.Base, actions *action.Recorder) *Rewards {
	tables := b.Config.Tables
	profiles := b.Profiles()
	titles := TenantTitles{b}
	r := &Rewards{}
	locations := &location.Service{DB: b.DB, Tables: tables, Clock: b.Clock, Cursor: b.Cursor}
	r.Perks = &perk.Service{DB: b.DB, Table: tables.Loyalty, Clock: b.Clock, Cursor: b.Cursor, Locations: locations,
		Segments: audience.Segments{DB: b.DB, Table: tables.Audiences}}
	r.Enrichments = &enrichment.Service{DB: b.DB, Table: tables.Loyalty, Clock: b.Clock, Cursor: b.Cursor, Perks: r.Perks, Cache: b.TenantCache}
	r.Audiences = &audience.Service{
		DB: b.DB, Table: tables.Audiences, Clock: b.Clock, Cursor: b.Cursor, Log: b.Log,
		Users: people{profiles}, Perks: r.Perks, Actions: actions, Tenants: titles,
	}
	r.Awards = &award.Service{
		DB: b.DB, Table: tables.Loyalty, Clock: b.Clock, Cursor: b.Cursor,
		Perks: r.Perks, Users: Persons{profiles}, Memberships: r.Audiences,
		Places:  places{locations},
		Tenants: titles, Actions: actions, Enrichments: overlays{r.Enrichments},
		// Where a user is checked in (a redemption's time zone): the
		// check-in domain's read alone.
		Checkins: &checkin.Service{DB: b.DB, Table: tables.Checkins, Clock: b.Clock},
	}
	react := func(joined bool) func(context.Context, *ddb.Tx, audience.Change) error {
		return func(ctx context.Context, tx *ddb.Tx, c audience.Change) error {
			meta := map[string]any{}
			for _, k := range rule.ChainKeys {
				if v, ok := c.Actor.Metadata[k]; ok {
					meta[k] = v
				}
			}
			return r.Awards.OnSegment(ctx, tx, award.SegmentEvent{
				TenantID: c.TenantID, TenantTitle: c.TenantTitle, SegmentID: c.Segment.ID, Joined: joined, Reason: c.Reason,
				User: award.Person{ID: c.User.ID, Name: c.User.Name, PrimaryPlatform: c.User.PrimaryPlatform}, When: c.Actor.When,
				Meta: meta,
			})
		}
	}
	r.Audiences.OnJoin.Add(react(true))
	r.Audiences.OnLeave.Add(react(false))
	return r
}

// AwardImports builds the bulk award import (shared/domain/awardcsv) on r
// and jobs, able to run imports (the jobs function registers its Kinds).
func AwardImports(b *wire.Base, r *Rewards, jobs *job.Service) *awardcsv.Service {
	return &awardcsv.Service{
		Awards: r.Awards, Perks: r.Perks, Users: PersonsOf(b.Profiles()), Jobs: jobs, Clock: b.Clock,
		Tenants: b.Titles(),
	}
}

// SegmentGrants builds the legacy grant (shared/domain/segmentgrant), whose
// grant to a segment is a job, on r and jobs: the loyalty function serves
// its route (and starts its jobs), the jobs function runs them.
func SegmentGrants(r *Rewards, jobs *job.Service) *segmentgrant.Service {
	return &segmentgrant.Service{Awards: r.Awards, Jobs: jobs}
}

// Persons is what awards and the award import need of users: their
// profiles, read with p.
type Persons struct{ p *profile.Reader }

// PersonsOf returns the Persons read with p.
func PersonsOf(p *profile.Reader) Persons { return Persons{p} }

// Person reads one user as awards name them.
func (a Persons) Person(ctx context.Context, tenantID, userID string) (award.Person, error) {
	p, err := a.p.Get(ctx, tenantID, userID)
	if err != nil {
		return award.Person{}, err
	}
	return award.Person{ID: p.ID, Name: p.FullName, PrimaryPlatform: p.PrimaryPlatform}, nil
}

// LiveCheck is the transaction check that a user is live.
func (a Persons) LiveCheck(tenantID, userID string) types.TransactWriteItem {
	return a.p.LiveCheck(tenantID, userID)
}

// People reads several users as awards name them, by id.
func (a Persons) People(ctx context.Context, tenantID string, ids []string) (map[string]award.Person, error) {
	ps, err := a.p.Many(ctx, tenantID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]award.Person, len(ps))
	for id, p := range ps {
		out[id] = award.Person{ID: p.ID, Name: p.FullName, PrimaryPlatform: p.PrimaryPlatform}
	}
	return out, nil
}

// people is what segments need of users.
type people struct{ p *profile.Reader }

func (a people) People(ctx context.Context, tenantID string, ids []string) (map[string]audience.Person, error) {
	ps, err := a.p.Many(ctx, tenantID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]audience.Person, len(ps))
	for id, p := range ps {
		out[id] = audience.Person{ID: p.ID, Name: p.FullName, PrimaryPlatform: p.PrimaryPlatform}
	}
	return out, nil
}

// places is what awards need of locations.
type places struct{ l *location.Service }

func (a places) Place(ctx context.Context, tenantID, id string) (award.Place, error) {
	l, err := a.l.Get(ctx, tenantID, id)
	if err != nil {
		return award.Place{}, err
	}
	return award.Place{
		Ref:      action.LocationRef{ID: l.ID, Title: l.Title, Geo: l.Geo, Regions: l.Regions, Tags: l.Tags},
		Timezone: l.Timezone,
	}, nil
}

// TenantTitles names tenants and reads their currency, time zone and
// reminder days for the loyalty domains.
type TenantTitles struct{ b *wire.Base }

// TitlesOf returns the TenantTitles read on b.
func TitlesOf(b *wire.Base) TenantTitles { return TenantTitles{b} }

func (t TenantTitles) Title(ctx context.Context, id string) (string, error) {
	return t.b.TenantTitle(ctx, id)
}

// Currency is the tenant's currency (settings.currency, GBP without one).
func (t TenantTitles) Currency(ctx context.Context, id string) (money.Currency, error) {
	tn, err := t.b.Tenants().Get(ctx, id)
	if err != nil {
		return money.Currency{}, err
	}
	return tn.Settings.Money()
}

// Zone is the tenant's time zone (settings.timezone, Europe/London
// without one), from the tenant cache.
func (t TenantTitles) Zone(ctx context.Context, id string) (*time.Location, error) {
	tn, err := t.b.Tenants().Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return tn.Settings.Zone(), nil
}

// ExpiringDays is how many days ahead of an expiry the tenant's users are
// reminded (settings.pointsExpiringDays, 30 without one).
func (t TenantTitles) ExpiringDays(ctx context.Context, id string) (int, error) {
	tn, err := t.b.Tenants().Get(ctx, id)
	if err != nil {
		return 0, err
	}
	return tn.Settings.ExpiringDaysOrDefault(), nil
}

// overlays shows INTERNAL award enrichments on awards.
type overlays struct{ e *enrichment.Service }

func (a overlays) Internal(ctx context.Context, tenantID string) (map[string]award.Overlay, error) {
	all, err := a.e.Internal(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]award.Overlay, len(all))
	for perkID, e := range all {
		o := award.Overlay{
			ID: e.ID, Title: e.Title, Token: e.Token, Template: e.Template, BasketQualification: e.BasketQualification,
			DateTimeRestriction: e.DateTimeRestriction, Points: e.Points, Discount: e.Discount,
		}
		if e.Visualisation != nil {
			o.Visualisation = e.Visualisation.Perk()
		}
		if e.VisualisationOnCurrentStamp != nil {
			o.VisualisationOnCurrentStamp = map[string]any{}
			for k, v := range *e.VisualisationOnCurrentStamp {
				o.VisualisationOnCurrentStamp[k] = v
			}
		}
		if e.ExcludeDiscountIDs != nil {
			o.ExcludeDiscountIDs = *e.ExcludeDiscountIDs
		}
		out[perkID] = o
	}
	return out, nil
}
