// Package rewards builds the loyalty domains (perks, award enrichments,
// awards, segments) for the functions that serve or use them (loyalty,
// audiences, expiry, jobs, users) and joins them: perks check their
// segment, awards read memberships, enrichments show on awards, and
// joining or leaving a segment records the CLUB and LEVEL perks' actions
// in the membership's transaction (a hook). It links the small profile and
// location reads, never the users domain itself.
package rewards

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/audience"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/enrichment"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/perk"
	"github.com/loyalty-platform/platform/shared/domain/pos"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/domain/rule"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
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

// New builds the loyalty domains on b, recording actions with actions.
func New(b *wire.Base, actions *action.Recorder) *Rewards {
	tables := b.Config.Tables
	profiles := b.Profiles()
	titles := tenantTitles{b}
	r := &Rewards{}
	locations := &location.Service{DB: b.DB, Tables: tables, Clock: b.Clock, Cursor: b.Cursor}
	r.Perks = &perk.Service{DB: b.DB, Table: tables.Loyalty, Clock: b.Clock, Cursor: b.Cursor, Locations: locations}
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
	r.Perks.Segments = r.Audiences
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
	r.Rules = &rule.Engine{
		DB: b.DB, Table: tables.Audiences, Clock: b.Clock, Cursor: b.Cursor, Log: b.Log,
		Perks: r.Perks, Awards: r.Awards, Audiences: r.Audiences, Cache: b.TenantCache,
		Tenants: b.Tenants(), Actions: actions,
	}
	r.Awards.Rules, r.Audiences.Rules = r.Rules, r.Rules
	return r
}

// POS builds the pay-at-POS domain on the loyalty domains (redemptions,
// credits, the rules an order triggers) and check-ins (a purchase checks
// out), and records on an order the points the rules grant on it.
func (r *Rewards) POS(b *wire.Base, checkins *checkin.Service, actions *action.Recorder) *pos.Service {
	tables := b.Config.Tables
	s := &pos.Service{
		DB: b.DB, Table: tables.Pos, UsersTable: tables.Users, Clock: b.Clock, Cursor: b.Cursor, Log: b.Log,
		Users: b.Profiles(), Places: r.Awards.Places, Tenants: tenantTitles{b}, Awards: r.Awards,
		Checkins: checkins, Actions: actions, Rules: r.Rules,
	}
	r.Rules.OnGrant.Add(func(ctx context.Context, tx *ddb.Tx, g rule.Granted) error {
		return s.AddEarned(ctx, tx, g.TenantID, g.UserID, g.OrderID, g.AwardID, g.Points)
	})
	return s
}

// LoyaltyRoutes are the routes of the loyalty function: perks, awards and
// enrichments.
func (r *Rewards) LoyaltyRoutes() []web.Route {
	return slices.Concat(r.Perks.Routes(), r.Awards.Routes(), r.Enrichments.Routes())
}

// AudienceRoutes are the routes of the audiences function: segments and
// rules.
func (r *Rewards) AudienceRoutes() []web.Route {
	return slices.Concat(r.Audiences.Routes(), r.Rules.Routes())
}

// ExpiryReport is what one run of the expiry function did: the segment
// memberships it removed (at the top level, as before points expired)
// and the points it expired.
type ExpiryReport struct {
	audience.ExpiryReport
	Points award.LotsReport `json:"points"`
}

// ExpiryHandler is the handler of the expiry function: the segment
// memberships that ended, then the points that expired (each goes on
// when the other fails; a failure of either fails the run, and Lambda's
// retry goes on from what is left).
func (r *Rewards) ExpiryHandler() func(context.Context, events.EventBridgeEvent) (ExpiryReport, error) {
	return func(ctx context.Context, ev events.EventBridgeEvent) (ExpiryReport, error) {
		var rep ExpiryReport
		var errSeg error
		rep.ExpiryReport, errSeg = r.Audiences.HandleSchedule(ctx, ev)
		var errPts error
		rep.Points, errPts = r.Awards.ExpireLots(ctx)
		slog.Default().InfoContext(ctx, "points expiry run", "tenants", rep.Points.Tenants, "awards", rep.Points.Awards,
			"expired", rep.Points.Expired, "reminded", rep.Points.Reminded, "ok", errPts == nil)
		return rep, errors.Join(errSeg, errPts)
	}
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

// tenantTitles names tenants for actions.
type tenantTitles struct{ b *wire.Base }

func (t tenantTitles) Title(ctx context.Context, id string) (string, error) {
	return t.b.TenantTitle(ctx, id)
}

// Currency is the tenant's currency (settings.currency, GBP without one).
func (t tenantTitles) Currency(ctx context.Context, id string) (money.Currency, error) {
	tn, err := t.b.Tenants().Get(ctx, id)
	if err != nil {
		return money.Currency{}, err
	}
	return tn.Settings.Money()
}

// Zone is the tenant's time zone (settings.timezone, Europe/London
// without one), from the tenant cache.
func (t tenantTitles) Zone(ctx context.Context, id string) (*time.Location, error) {
	tn, err := t.b.Tenants().Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return tn.Settings.Zone(), nil
}

// ExpiringDays is how many days ahead of an expiry the tenant's users are
// reminded (settings.pointsExpiringDays, 30 without one).
func (t tenantTitles) ExpiringDays(ctx context.Context, id string) (int, error) {
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
