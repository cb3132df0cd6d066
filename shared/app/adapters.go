package app

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/action"
	"github.com/loyalty-platform/platform/shared/audience"
	"github.com/loyalty-platform/platform/shared/award"
	"github.com/loyalty-platform/platform/shared/enrichment"
	"github.com/loyalty-platform/platform/shared/location"
	"github.com/loyalty-platform/platform/shared/tenant"
	"github.com/loyalty-platform/platform/shared/user"
)

// awardUsers is what the award domain needs of the users domain.
type awardUsers struct{ u *user.Service }

func (a awardUsers) Person(ctx context.Context, tenantID, userID string) (award.Person, error) {
	p, err := a.u.Profile(ctx, tenantID, userID)
	if err != nil {
		return award.Person{}, err
	}
	return award.Person{ID: p.ID, Name: p.FullName, PrimaryPlatform: p.PrimaryPlatform}, nil
}

func (a awardUsers) LiveCheck(tenantID, userID string) types.TransactWriteItem {
	return a.u.LiveCheck(tenantID, userID)
}

// awardPlaces is what the award domain needs of the locations domain.
type awardPlaces struct{ l *location.Service }

func (a awardPlaces) Place(ctx context.Context, tenantID, id string) (award.Place, error) {
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
type tenantTitles struct{ s *tenant.Store }

func (t tenantTitles) Title(ctx context.Context, id string) (string, error) {
	tn, err := t.s.Get(ctx, id)
	return tn.Title, err
}

// awardOverlays shows INTERNAL award enrichments on awards.
type awardOverlays struct{ e *enrichment.Service }

func (a awardOverlays) Internal(ctx context.Context, tenantID string) (map[string]award.Overlay, error) {
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

// audienceUsers is what the audience domain needs of the users domain.
type audienceUsers struct{ u *user.Service }

func (a audienceUsers) People(ctx context.Context, tenantID string, ids []string) (map[string]audience.Person, error) {
	profiles, err := a.u.Profiles(ctx, tenantID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]audience.Person, len(profiles))
	for id, p := range profiles {
		out[id] = audience.Person{ID: p.ID, Name: p.FullName, PrimaryPlatform: p.PrimaryPlatform}
	}
	return out, nil
}
