package location_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/location"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// The service calls other domains make: check-ins (Get) and the location
// import and export jobs (Create, Replace, FindByTitle, Each).
func TestServiceForOtherDomains(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	svc := h.Deps.Locations
	tenantID := h.Tenant.ID

	created, err := svc.Create(ctx, tenantID, location.Location{Title: "  Corner Shop ", Geo: []float64{1, 2}, Tags: []string{"x"}, ID: "ignored", TenantID: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("CreateAssignsServerFields", func(t *testing.T) {
		if created.ID == "ignored" || created.TenantID != tenantID || created.State != location.StateActive || created.Title != "Corner Shop" || created.Created == "" {
			t.Errorf("created %+v", created)
		}
	})
	t.Run("CreateValidates", func(t *testing.T) {
		_, err := svc.Create(ctx, tenantID, location.Location{Title: "No geo"})
		if apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("Get", func(t *testing.T) {
		got, err := svc.Get(ctx, tenantID, created.ID)
		if err != nil || !reflect.DeepEqual(got, created) {
			t.Errorf("got %+v, %v", got, err)
		}
		if _, err := svc.Get(ctx, "another-tenant", created.ID); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("other tenant: err = %v", err)
		}
		if _, err := svc.Get(ctx, tenantID, ""); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("empty id: err = %v", err)
		}
	})
	t.Run("FindByTitle", func(t *testing.T) {
		got, err := svc.FindByTitle(ctx, tenantID, "CORNER shop ")
		if err != nil || got.ID != created.ID {
			t.Errorf("got %+v, %v", got, err)
		}
		if _, err := svc.FindByTitle(ctx, tenantID, "Corner"); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("prefix: err = %v", err)
		}
		if _, err := svc.FindByTitle(ctx, tenantID, "Corner Shop 2"); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("longer title: err = %v", err)
		}
		if _, err := svc.FindByTitle(ctx, "another-tenant", "Corner Shop"); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("other tenant: err = %v", err)
		}
	})
	t.Run("FindByTitleAmbiguous", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			if _, err := svc.Create(ctx, tenantID, location.Location{Title: "Twin", Geo: []float64{0, 0}}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.FindByTitle(ctx, tenantID, "twin"); apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		in := location.Location{ID: created.ID, Title: "Corner Shop Renamed", Geo: []float64{3, 4}, Description: "whole"}
		got, err := svc.Replace(ctx, tenantID, in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Created != created.Created || got.State != location.StateActive || got.Tags != nil || got.Description != "whole" {
			t.Errorf("replaced %+v", got)
		}
		if _, err := svc.FindByTitle(ctx, tenantID, "Corner Shop"); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("old title still found: %v", err)
		}
		if f, err := svc.FindByTitle(ctx, tenantID, "corner shop renamed"); err != nil || f.ID != created.ID {
			t.Errorf("new title: %+v, %v", f, err)
		}
	})
	t.Run("ReplaceRules", func(t *testing.T) {
		if _, err := svc.Replace(ctx, tenantID, location.Location{ID: "5f1c0a9b2d3e4f5a6b7c8d9e", Title: "x", Geo: []float64{0, 0}}); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("unknown id: err = %v", err)
		}
		if _, err := svc.Replace(ctx, tenantID, location.Location{ID: created.ID, Title: "x", Geo: []float64{0, 0}, State: location.StatePending}); apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Errorf("ACTIVE to PENDING: err = %v", err)
		}
		if _, err := svc.Replace(ctx, "another-tenant", location.Location{ID: created.ID, Title: "x", Geo: []float64{0, 0}}); !errors.Is(err, location.ErrNotFound) {
			t.Errorf("other tenant: err = %v", err)
		}
	})
	t.Run("UpdateTyped", func(t *testing.T) {
		got, err := svc.Update(ctx, tenantID, created.ID, map[string]json.RawMessage{"tags": json.RawMessage(`["a","b"]`)})
		if err != nil || strings.Join(got.Tags, ",") != "a,b" || got.Description != "whole" {
			t.Errorf("got %+v, %v", got, err)
		}
	})
}

func TestEach(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	svc := h.Deps.Locations
	var want []string
	var locs []location.Location
	for i := 0; i < 250; i++ {
		l := location.Location{Title: fmt.Sprintf("Shop %03d", i), Geo: []float64{0, 0}}
		switch i % 5 {
		case 0:
			l.State, l.Tags, l.Regions = location.StateRetired, []string{"Outlet"}, []string{"north"}
		case 1:
			l.State, l.Regions = location.StatePending, []string{"South"}
		default:
			want = append(want, l.Title)
		}
		locs = append(locs, l)
	}
	if _, err := svc.Seed(ctx, h.Tenant.ID, locs); err != nil {
		t.Fatal(err)
	}
	collect := func(t *testing.T, f location.Filter) []string {
		t.Helper()
		var out []string
		if err := svc.Each(ctx, h.Tenant.ID, f, func(l location.Location) error { out = append(out, l.Title); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Run("ByState", func(t *testing.T) {
		if got := collect(t, location.Filter{States: []string{"ACTIVE"}}); !reflect.DeepEqual(got, want) {
			t.Errorf("got %d locations, want %d", len(got), len(want))
		}
	})
	t.Run("All", func(t *testing.T) {
		got := collect(t, location.Filter{})
		if len(got) != 250 || !sort.StringsAreSorted(got) {
			t.Errorf("got %d locations (sorted %v)", len(got), sort.StringsAreSorted(got))
		}
	})
	t.Run("TagsAndRegionsIgnoreCase", func(t *testing.T) {
		if got := collect(t, location.Filter{Tags: []string{"outlet"}}); len(got) != 50 {
			t.Errorf("tags: %d", len(got))
		}
		if got := collect(t, location.Filter{Regions: []string{"NORTH", "south"}}); len(got) != 100 {
			t.Errorf("regions: %d", len(got))
		}
	})
	t.Run("StopsOnError", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := svc.Each(ctx, h.Tenant.ID, location.Filter{}, func(location.Location) error {
			if n++; n == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || n != 3 {
			t.Errorf("err = %v after %d", err, n)
		}
	})
	t.Run("BadState", func(t *testing.T) {
		if err := svc.Each(ctx, h.Tenant.ID, location.Filter{States: []string{"OPEN"}}, func(location.Location) error { return nil }); apierr.CodeOf(err) != apierr.ValidationFailed {
			t.Errorf("err = %v", err)
		}
	})
}

// Concurrent updates of different fields of one location both apply: the
// loser of the conditional write re-reads and re-applies its fields.
func TestConcurrentUpdates(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	id := createAt(t, h, "Busy", london, nil)
	var wg sync.WaitGroup
	fields := []string{"description", "VATnumber", "timezone", "alternativeOpeningHoursText"}
	values := []string{"desc", "GB1", "Europe/Paris", "<p>late</p>"}
	for i := range fields {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := h.Do("PUT", "/locations/"+id, map[string]any{fields[i]: values[i]}, h.Admin())
			if r.Status != 200 {
				t.Errorf("status %d: %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	got := h.Do("GET", "/locations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	applied := 0
	for i, f := range fields {
		if got[f] == values[i] {
			applied++
		}
	}
	if applied != len(fields) {
		t.Errorf("%d of %d concurrent updates applied: %v", applied, len(fields), got)
	}
	if l := list(t, h, "?title=busy", h.Admin()); len(l.Items) != 1 {
		t.Errorf("summaries after concurrent updates: %v", l.titles())
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                   string
		lat1, lon1, lat2, lon2 float64
		want                   float64
	}{
		{"LondonParis", 51.5074, -0.1278, 48.8566, 2.3522, 343556.5},
		{"LondonNewYork", 51.5074, -0.1278, 40.7128, -74.0060, 5570229.9},
		{"LondonSydney", 51.5074, -0.1278, -33.8688, 151.2093, 16993956.9},
		{"Same", 10, 10, 10, 10, 0},
		{"QuarterMeridian", 0, 0, 90, 0, math.Pi / 2 * location.EarthRadius},
		{"Antipodes", 0, 0, 0, 180, math.Pi * location.EarthRadius},
		{"AcrossAntimeridian", 0, 179.9, 0, -179.9, 22239.0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := location.Distance(tc.lat1, tc.lon1, tc.lat2, tc.lon2); math.Abs(got-tc.want) > 0.5 {
				t.Errorf("Distance = %.1f, want %.1f", got, tc.want)
			}
		})
	}
}

func TestCheckTransition(t *testing.T) {
	t.Parallel()
	states := []string{location.StatePending, location.StateActive, location.StateRetired}
	allowed := map[string]bool{"PENDING>ACTIVE": true, "ACTIVE>RETIRED": true, "RETIRED>ACTIVE": true}
	for _, from := range states {
		for _, to := range states {
			t.Run(from+"To"+to, func(t *testing.T) {
				err := location.CheckTransition(from, to)
				if ok := from == to || allowed[from+">"+to]; ok != (err == nil) {
					t.Errorf("CheckTransition(%s, %s) = %v", from, to, err)
				}
			})
		}
	}
}
