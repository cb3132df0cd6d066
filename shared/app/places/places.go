// Package places builds the locations domains for the functions that serve
// or use them (locations, checkins, jobs, users): locations and their tag
// groups, the location CSV import and export, and check-ins.
package places

import (
	"context"
	"slices"

	"github.com/loyalty-platform/platform/shared/action"
	"github.com/loyalty-platform/platform/shared/app"
	"github.com/loyalty-platform/platform/shared/checkin"
	"github.com/loyalty-platform/platform/shared/job"
	"github.com/loyalty-platform/platform/shared/location"
	"github.com/loyalty-platform/platform/shared/locationcsv"
	"github.com/loyalty-platform/platform/shared/web"
)

// Locations builds the locations domain; a user's favourites come from
// their profile.
func Locations(b *app.Base) *location.Service {
	profiles := b.Profiles()
	return &location.Service{
		DB: b.DB, Tables: b.Config.Tables, Clock: b.Clock, Cursor: b.Cursor,
		Favourites: func(ctx context.Context, tenantID, userID string) ([]string, error) {
			p, err := profiles.Get(ctx, tenantID, userID)
			return p.FavouriteLocations, err
		},
	}
}

// LocationJobs builds the location import and export on jobs (and
// registers their job kinds with them).
func LocationJobs(b *app.Base, locations *location.Service, jobs *job.Service, actions *action.Recorder) *locationcsv.Service {
	s := &locationcsv.Service{Locations: locations, Jobs: jobs, Actions: actions, Clock: b.Clock, TenantTitle: b.TenantTitle}
	for k, v := range s.Kinds() {
		jobs.Kinds[k] = v
	}
	return s
}

// LocationRoutes are the routes of the locations function.
func LocationRoutes(locations *location.Service, jobs *locationcsv.Service) []web.Route {
	return slices.Concat(locations.Routes(), jobs.Routes())
}

// Checkins builds the check-in domain: users' profiles (a check-in is
// written only while its user is live), locations, tenants, the actions
// log and the tenants' POS.
func Checkins(b *app.Base, locations *location.Service, actions *action.Recorder) *checkin.Service {
	return &checkin.Service{
		DB: b.DB, Table: b.Config.Tables.Checkins, UsersTable: b.Config.Tables.Users,
		Users: b.Profiles(), Tenants: b.Tenants(), Actions: actions, Clock: b.Clock,
		POS: &checkin.POSNotifier{Clock: b.Clock}, Places: placesOf(locations),
	}
}

// placesOf adapts the locations domain to what a check-in needs of a
// location.
func placesOf(locations *location.Service) checkin.Places {
	return checkin.PlacesFunc(func(ctx context.Context, tenantID, id string) (checkin.Place, error) {
		l, err := locations.Get(ctx, tenantID, id)
		if err != nil {
			return checkin.Place{}, err
		}
		return checkin.Place{
			ID: l.ID, Title: l.Title, State: l.State, Checkins: l.Services[checkin.ServiceName],
			Geo: l.Geo, Regions: l.Regions, Tags: l.Tags, Timezone: l.Timezone,
		}, nil
	})
}
