package location_test

import (
	"math"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/web"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestListLocationsFilters(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token := activeUser(t, h)
	createAt(t, h, "Alpha Kitchen", london, map[string]any{"tags": []string{"Pizza", "late"}, "services": map[string]any{"checkins": true, "delivery": true}})
	createAt(t, h, "beta bar", paris, map[string]any{"tags": []string{"bar"}, "services": map[string]any{"checkins": true, "delivery": false}})
	createAt(t, h, "Gamma Kitchen", newYork, map[string]any{"state": "PENDING", "tags": []string{"pizza"}, "services": map[string]any{"delivery": true}})
	createAt(t, h, "Delta", sydney, map[string]any{"state": "RETIRED", "services": map[string]any{"checkins": true, "delivery": true, "tab": true}})
	createAt(t, h, "Epsilon Kitchen", london, nil)

	for _, tc := range []struct {
		name    string
		query   string
		headers ts.Headers
		want    string
	}{
		{"AdminAllByTitle", "", h.Admin(), "Alpha Kitchen,beta bar,Delta,Epsilon Kitchen,Gamma Kitchen"},
		{"AnonymousActiveOnly", "", h.Anon(), "Alpha Kitchen,beta bar,Epsilon Kitchen"},
		{"UserActiveOnly", "", ts.Token(token), "Alpha Kitchen,beta bar,Epsilon Kitchen"},
		{"AnonymousStateActive", "?state=ACTIVE", h.Anon(), "Alpha Kitchen,beta bar,Epsilon Kitchen"},
		{"StateList", "?state=PENDING,retired", h.Admin(), "Delta,Gamma Kitchen"},
		{"StateRepeated", "?state=PENDING&state=RETIRED", h.Admin(), "Delta,Gamma Kitchen"},
		{"SearchSubstringAnyCase", "?search=KITCH", h.Admin(), "Alpha Kitchen,Epsilon Kitchen,Gamma Kitchen"},
		{"SearchAnyTerm", "?search=bar,delt", h.Admin(), "beta bar,Delta"},
		{"SearchNoMatch", "?search=zzz", h.Admin(), ""},
		{"TitleExactAnyCase", "?title=BETA%20BAR", h.Admin(), "beta bar"},
		{"TitleNotSubstring", "?title=beta", h.Admin(), ""},
		{"TagsAny", "?tags=bar,LATE", h.Admin(), "Alpha Kitchen,beta bar"},
		{"TagsCaseInsensitive", "?tags=PIZZA", h.Admin(), "Alpha Kitchen,Gamma Kitchen"},
		{"ServicesAll", "?services=checkins,delivery", h.Admin(), "Alpha Kitchen,Delta"},
		{"ServicesOne", "?services=tab", h.Admin(), "Delta"},
		{"Combined", "?search=kitchen&tags=pizza&state=ACTIVE,PENDING&services=delivery", h.Admin(), "Alpha Kitchen,Gamma Kitchen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := list(t, h, tc.query, tc.headers)
			if got := strings.Join(l.titles(), ","); got != tc.want {
				t.Errorf("titles = %q, want %q", got, tc.want)
			}
			if l.Page.Count != len(l.Items) || l.Page.Limit != 100 || l.Page.NextKey != "" {
				t.Errorf("page = %+v", l.Page)
			}
		})
	}
	t.Run("OtherTenantSeesNone", func(t *testing.T) {
		if l := list(t, h, "", otherTenant(h)); len(l.Items) != 0 {
			t.Errorf("another tenant lists %v", l.titles())
		}
	})
}

func TestListLocationsInclude(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	create(t, h, full("Everything"))
	h.Do("PUT", "/locations/"+list(t, h, "", h.Admin()).Items[0]["_id"].(string), map[string]any{"state": "ACTIVE"}, h.Admin()).Expect(t, 200, "")
	base := []string{"_id", "tenantId", "title", "geo", "listingImageUrl", "mapPinImageUrl", "openingHours", "facilities", "services", "contacts", "beacons", "timezone"}
	optional := []string{"created", "updated", "state", "mainImageUrl", "alternativeOpeningHoursText", "buttons", "links", "description", "ordering", "VATnumber", "regions", "address", "tags", "zones", "extended", "deliveryBoundaries"}
	keys := func(m map[string]any) string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	sorted := func(list ...[]string) string {
		var out []string
		for _, l := range list {
			out = append(out, l...)
		}
		sort.Strings(out)
		return strings.Join(out, ",")
	}
	t.Run("Default", func(t *testing.T) {
		if got := keys(list(t, h, "", h.Anon()).Items[0]); got != sorted(base) {
			t.Errorf("fields = %s, want %s", got, sorted(base))
		}
	})
	t.Run("Some", func(t *testing.T) {
		if got := keys(list(t, h, "?include=state,TAGS&include=address", h.Anon()).Items[0]); got != sorted(base, []string{"state", "tags", "address"}) {
			t.Errorf("fields = %s", got)
		}
	})
	t.Run("All", func(t *testing.T) {
		if got := keys(list(t, h, "?include="+strings.Join(optional, ","), h.Anon()).Items[0]); got != sorted(base, optional) {
			t.Errorf("fields = %s", got)
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		h.Do("GET", "/locations?include=secrets", nil, h.Anon()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func TestListLocationsByDistance(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	createAt(t, h, "New York", newYork, nil)
	createAt(t, h, "Sydney", sydney, nil)
	createAt(t, h, "Paris", paris, nil)
	createAt(t, h, "London", london, nil)
	// Reference distances from London (haversine, mean Earth radius).
	want := map[string]float64{"London": 0, "Paris": 343556.5, "New York": 5570229.9, "Sydney": 16993956.9}

	t.Run("FromLondon", func(t *testing.T) {
		l := list(t, h, "?lat=51.5074&long=-0.1278", h.Anon())
		if got := strings.Join(l.titles(), ","); got != "London,Paris,New York,Sydney" {
			t.Fatalf("order = %s", got)
		}
		for _, it := range l.Items {
			d, ok := it["distance"].(float64)
			if !ok {
				t.Fatalf("%v has no distance", it["title"])
			}
			if math.Abs(d-want[it["title"].(string)]) > 1 {
				t.Errorf("distance to %v = %v, want %v", it["title"], d, want[it["title"].(string)])
			}
		}
	})
	t.Run("FromNewYork", func(t *testing.T) {
		// Paris is farther from New York than London is (5837 km vs 5570 km).
		if got := strings.Join(list(t, h, "?lat=40.7128&long=-74.0060", h.Anon()).titles(), ","); got != "New York,London,Paris,Sydney" {
			t.Errorf("order = %s", got)
		}
	})
	t.Run("AcrossTheAntimeridian", func(t *testing.T) {
		t.Parallel()
		h := ts.New(t)
		createAt(t, h, "Far west", []float64{170, 0}, nil)
		createAt(t, h, "Just across", []float64{-179.9, 0}, nil)
		l := list(t, h, "?lat=0&long=179.9", h.Anon())
		if got := strings.Join(l.titles(), ","); got != "Just across,Far west" {
			t.Fatalf("order = %s", got)
		}
		if d := l.Items[0]["distance"].(float64); math.Abs(d-22239) > 1 {
			t.Errorf("distance across the antimeridian = %v, want 22239", d)
		}
	})
	t.Run("NoDistanceWithoutCentre", func(t *testing.T) {
		for _, it := range list(t, h, "", h.Anon()).Items {
			if _, ok := it["distance"]; ok {
				t.Errorf("distance without lat/long: %v", it)
			}
		}
	})
	t.Run("PagedByDistance", func(t *testing.T) {
		var got []string
		key := ""
		for i := 0; i < 5; i++ {
			l := list(t, h, "?lat=48.8566&long=2.3522&limit=1&startKey="+url.QueryEscape(key), h.Anon())
			got = append(got, l.titles()...)
			if key = l.Page.NextKey; key == "" {
				break
			}
		}
		if strings.Join(got, ",") != "Paris,London,New York,Sydney" {
			t.Errorf("pages = %v", got)
		}
	})
}

func TestListLocationsPaging(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	var kitchens []string
	for _, name := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		createAt(t, h, "Kitchen "+name, london, nil)
		kitchens = append(kitchens, "Kitchen "+name)
		createAt(t, h, "Bar "+name, london, nil)
	}
	page := func(t *testing.T, query, key string) locList {
		t.Helper()
		return list(t, h, query+"&startKey="+url.QueryEscape(key), h.Admin())
	}

	t.Run("FilledPagesWithFilter", func(t *testing.T) {
		var got []string
		key := ""
		for pages := 1; ; pages++ {
			l := page(t, "?search=kitchen&limit=3", key)
			got = append(got, l.titles()...)
			if l.Page.StartKey != key {
				t.Errorf("startKey = %q, want %q", l.Page.StartKey, key)
			}
			if l.Page.NextKey == "" {
				if pages != 3 || l.Page.Count != 1 {
					t.Errorf("last page %d has %d items", pages, l.Page.Count)
				}
				break
			}
			if l.Page.Count != 3 {
				t.Errorf("page %d has %d items, want 3", pages, l.Page.Count)
			}
			key = l.Page.NextKey
		}
		if strings.Join(got, ",") != strings.Join(kitchens, ",") {
			t.Errorf("paged = %v", got)
		}
	})
	t.Run("ExactLastPageHasNoNextKey", func(t *testing.T) {
		if l := list(t, h, "?search=kitchen&limit=7", h.Admin()); l.Page.NextKey != "" || l.Page.Count != 7 {
			t.Errorf("page = %+v", l.Page)
		}
	})
	t.Run("InsertBetweenPagesDoesNotShift", func(t *testing.T) {
		first := list(t, h, "?search=kitchen&limit=2", h.Admin())
		createAt(t, h, "Kitchen 0", london, nil) // sorts before every page
		second := page(t, "?search=kitchen&limit=2", first.Page.NextKey)
		if got := strings.Join(second.titles(), ","); got != "Kitchen c,Kitchen d" {
			t.Errorf("second page = %s", got)
		}
	})
	t.Run("KeyOfAnotherQuery", func(t *testing.T) {
		first := list(t, h, "?search=kitchen&limit=2", h.Admin())
		h.Do("GET", "/locations?search=bar&limit=2&startKey="+url.QueryEscape(first.Page.NextKey), nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		h.Do("GET", "/locations?search=kitchen&limit=2&startKey="+url.QueryEscape(first.Page.NextKey), nil, h.Anon()).Expect(t, 422, "VALIDATION_FAILED")
		h.Do("GET", "/locations?search=kitchen&lat=1&long=1&startKey="+url.QueryEscape(first.Page.NextKey), nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("KeyOfAnotherTenant", func(t *testing.T) {
		first := list(t, h, "?limit=2", h.Admin())
		h.Do("GET", "/locations?limit=2&startKey="+url.QueryEscape(first.Page.NextKey), nil, otherTenant(h)).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("TamperedKey", func(t *testing.T) {
		first := list(t, h, "?limit=2", h.Admin())
		bad := "x" + first.Page.NextKey
		h.Do("GET", "/locations?limit=2&startKey="+url.QueryEscape(bad), nil, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func TestListLocationsFavourites(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	userID, token := activeUser(t, h)
	a := createAt(t, h, "Fav A", london, nil)
	createAt(t, h, "Not fav", london, nil)
	c := createAt(t, h, "Fav C", paris, nil)
	retired := createAt(t, h, "Fav retired", paris, map[string]any{"state": "RETIRED"})
	h.Do("PUT", "/users/"+userID, map[string]any{"favouriteLocations": []string{c, a, retired, "unknown-id"}}, ts.Token(token)).Expect(t, 200, "")

	t.Run("User", func(t *testing.T) {
		if got := strings.Join(list(t, h, "?favourites=true", ts.Token(token)).titles(), ","); got != "Fav A,Fav C" {
			t.Errorf("favourites = %s", got)
		}
	})
	t.Run("WithDistance", func(t *testing.T) {
		if got := strings.Join(list(t, h, "?favourites=true&lat=48.85&long=2.35", ts.Token(token)).titles(), ","); got != "Fav C,Fav A" {
			t.Errorf("favourites = %s", got)
		}
	})
	t.Run("FalseListsAll", func(t *testing.T) {
		if got := len(list(t, h, "?favourites=false", ts.Token(token)).Items); got != 3 {
			t.Errorf("%d locations", got)
		}
	})
	t.Run("UserWithoutFavourites", func(t *testing.T) {
		_, other := activeUser(t, h)
		if got := list(t, h, "?favourites=true", ts.Token(other)); len(got.Items) != 0 {
			t.Errorf("favourites = %v", got.titles())
		}
	})
	t.Run("Anonymous", func(t *testing.T) {
		h.Do("GET", "/locations?favourites=true", nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("ServiceKey", func(t *testing.T) {
		h.Do("GET", "/locations?favourites=true", nil, h.Admin()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("NotABoolean", func(t *testing.T) {
		h.Do("GET", "/locations?favourites=yes", nil, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func TestListLocationsRejects(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token := activeUser(t, h)
	for _, tc := range []struct {
		name    string
		query   string
		headers ts.Headers
		status  int
		code    string
	}{
		{"NoTenant", "", nil, 401, "UNAUTHORIZED"},
		{"UnknownTenant", "", ts.Headers{"x-application-id", "no-such-tenant"}, 401, "UNAUTHORIZED"},
		{"AnonymousPending", "?state=PENDING", h.Anon(), 401, "UNAUTHORIZED"},
		{"UserRetired", "?state=ACTIVE,RETIRED", ts.Token(token), 401, "UNAUTHORIZED"},
		{"BadState", "?state=OPEN", h.Admin(), 422, "VALIDATION_FAILED"},
		{"LatWithoutLong", "?lat=51.5", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LongWithoutLat", "?long=0", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LatNotNumber", "?lat=north&long=0", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LatOutOfRange", "?lat=91&long=0", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LongOutOfRange", "?lat=0&long=-181", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LatNaN", "?lat=NaN&long=0", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LongInf", "?lat=0&long=Inf", h.Anon(), 422, "VALIDATION_FAILED"},
		{"SearchTooLong", "?search=" + strings.Repeat("s", 201), h.Anon(), 422, "VALIDATION_FAILED"},
		{"TooManySearchTerms", "?search=" + strings.Repeat("a,", 21), h.Anon(), 422, "VALIDATION_FAILED"},
		{"TitleTooLong", "?title=" + strings.Repeat("t", 201), h.Anon(), 422, "VALIDATION_FAILED"},
		{"TooManyTags", "?tags=" + strings.Repeat("t,", 51), h.Anon(), 422, "VALIDATION_FAILED"},
		{"UnknownService", "?services=valet", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LimitZero", "?limit=0", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LimitTooLarge", "?limit=1001", h.Anon(), 422, "VALIDATION_FAILED"},
		{"LimitNotNumber", "?limit=ten", h.Anon(), 422, "VALIDATION_FAILED"},
		{"ForgedStartKey", "?startKey=eyJrIjoiUzp4In0.AAAA", h.Anon(), 422, "VALIDATION_FAILED"},
		{"BadApiVersion", "", append(h.Anon(), "x-api-version", "0"), 422, "VALIDATION_FAILED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do("GET", "/locations"+tc.query, nil, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("ApiVersionAccepted", func(t *testing.T) {
		h.Do("GET", "/locations", nil, append(h.Anon(), "x-api-version", "9")).Expect(t, 200, "")
	})
	t.Run("StartKeyTooLong", func(t *testing.T) {
		got := h.Do("GET", "/locations?startKey="+strings.Repeat("k", web.MaxStartKey+1), nil, h.Anon()).Expect(t, 422, "VALIDATION_FAILED").Map(t)
		if msg, _ := got["message"].(string); !strings.Contains(msg, "startKey") || !strings.Contains(msg, "at most 4096") {
			t.Fatalf("message = %q, want the startKey limit", msg)
		}
	})
}
