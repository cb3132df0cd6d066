// Package places builds the locations domains for the functions that serve
// or use them (locations, checkins, pos, rules, jobs, users): locations and
// their tag groups, and check-ins. The location CSV import and export are
// (LocationFiles), for the locationfiles and jobs functions.
package places

import (
	"context"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/checkin"
	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/domain/locationcsv"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/wire"
)

// Locations builds the locations domain; a user's favourites come from
// their profile.
func Locations(b *wire.Base) *location.Service {
	return &location.Service{DB: b.DB, Tables: b.Config.Tables, Clock: b.Clock, Cursor: b.Cursor, Profiles: b.Profiles()}
}

// Checkins builds the check-in domain: users' profiles (a check-in is
// written only while its user is live), locations, tenants, the actions
// log and the tenants' POS.
func Checkins(b *wire.Base, locations *location.Service, actions *action.Recorder) *checkin.Service {
	return &checkin.Service{
		DB: b.DB, Table: b.Config.Tables.Checkins, UsersTable: b.Config.Tables.Users,
		Users: b.Profiles(), Tenants: b.Tenants(), Actions: actions, Clock: b.Clock,
		POS: &checkin.POSNotifier{Clock: b.Clock}, Places: placesOf(locations),
	}
}

// LocationFiles builds the location CSV import and export
// (shared/domain/locationcsv) on locations and jobs: the locationfiles
// function starts them and serves their files, the jobs function runs
// them (files.Register of the service's Kinds).
func LocationFiles(b *wire.Base, locations *location.Service, jobs *job.Service, actions *action.Recorder) *locationcsv.Service {
	return &locationcsv.Service{Locations: locations, Jobs: jobs, Actions: actions, Clock: b.Clock, Tenants: b.Titles()}
}

// CheckinRemover builds the check-in domain's part of deleting a user
// (removing the user's check-in) without the rest of the domain, for the
// function that deletes users.
func CheckinRemover(b *wire.Base) func(ctx context.Context, tenantID, userID string) error {
	return (&checkin.Service{DB: b.DB, Table: b.Config.Tables.Checkins, Clock: b.Clock}).Remove
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
