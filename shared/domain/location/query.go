package location

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Include options of GET /locations: the optional fields a list item
// carries only when named (spec), plus extended and deliveryBoundaries
// (which can be large).
var includeOptions = func() map[string]string {
	out := map[string]string{}
	for _, f := range []string{
		"created", "updated", "state", "mainImageUrl", "alternativeOpeningHoursText", "buttons", "links",
		"description", "ordering", "VATnumber", "regions", "address", "tags", "zones",
		"extended", "deliveryBoundaries",
	} {
		out[strings.ToLower(f)] = f
	}
	return out
}()

// Limits of the list's query parameters.
const (
	maxSearchTerms = 20
	maxFilterItems = 50
	// maxPageBytes bounds the JSON of one page (Lambda responses are at most
	// 6 MB): a page ends early, with a nextKey, when its items reach it.
	maxPageBytes = 5 << 20
)

// ListQuery holds the query parameters of GET /locations.
type ListQuery struct {
	// States lists the states to show (any of them); empty is every state
	// for an admin and ACTIVE for everyone else.
	States []string
	// HasCentre says Lat and Long were given: the list is then ordered by
	// distance from them, nearest first, and items carry `distance`.
	HasCentre bool
	Lat, Long float64
	// Search lists lower-cased substrings; a title containing any matches.
	Search []string
	// Title is an exact title, matched ignoring case.
	Title string
	// Favourites keeps only the caller's favourite locations.
	Favourites bool
	// Tags keeps locations with any of these tags (ignoring case).
	Tags []string
	// Services keeps locations offering all of these services.
	Services []string
	Include  map[string]bool
	Limit    int
	StartKey string
}

// ParseListQuery reads and checks the query string of GET /locations.
func ParseListQuery(r *http.Request) (ListQuery, error) {
	limit, start, err := web.Paging(r)
	if err != nil {
		return ListQuery{}, err
	}
	v := r.URL.Query()
	q := ListQuery{Limit: limit, StartKey: start, Title: strings.TrimSpace(v.Get("title"))}
	for _, st := range web.ListParam(r, "state") {
		st = strings.ToUpper(st)
		switch st {
		case StatePending, StateActive, StateRetired:
			q.States = append(q.States, st)
		default:
			return ListQuery{}, apierr.Invalid("state", "each state must be PENDING, ACTIVE or RETIRED")
		}
	}
	lat, long := strings.TrimSpace(v.Get("lat")), strings.TrimSpace(v.Get("long"))
	switch {
	case lat == "" && long == "":
	case lat == "" || long == "":
		return ListQuery{}, apierr.Invalid("lat", "lat and long must be given together")
	default:
		q.HasCentre = true
		if q.Lat, err = strconv.ParseFloat(lat, 64); err != nil || math.IsNaN(q.Lat) || q.Lat < -90 || q.Lat > 90 {
			return ListQuery{}, apierr.Invalid("lat", "must be a latitude from -90 to 90")
		}
		if q.Long, err = strconv.ParseFloat(long, 64); err != nil || math.IsNaN(q.Long) || q.Long < -180 || q.Long > 180 {
			return ListQuery{}, apierr.Invalid("long", "must be a longitude from -180 to 180")
		}
	}
	for _, s := range web.ListParam(r, "search") {
		if err := checkText("search", s, MaxTitle, false); err != nil {
			return ListQuery{}, err
		}
		q.Search = append(q.Search, strings.ToLower(s))
	}
	if len(q.Search) > maxSearchTerms {
		return ListQuery{}, apierr.Invalid("search", "at most %d terms", maxSearchTerms)
	}
	if err := checkText("title", q.Title, MaxTitle, false); err != nil {
		return ListQuery{}, err
	}
	if q.Favourites, err = web.BoolParam(r, "favourites", false); err != nil {
		return ListQuery{}, err
	}
	for _, t := range web.ListParam(r, "tags") {
		if err := checkText("tags", t, MaxListItem, false); err != nil {
			return ListQuery{}, err
		}
		q.Tags = append(q.Tags, strings.ToLower(t))
	}
	if len(q.Tags) > maxFilterItems {
		return ListQuery{}, apierr.Invalid("tags", "at most %d tags", maxFilterItems)
	}
	for _, sv := range web.ListParam(r, "services") {
		if !serviceSet[sv] {
			return ListQuery{}, apierr.Invalid("services", "unknown service %q: one of %s", trunc(sv), strings.Join(Services, ", "))
		}
		q.Services = append(q.Services, sv)
	}
	if q.Include, err = parseInclude(web.ListParam(r, "include")); err != nil {
		return ListQuery{}, err
	}
	return q, nil
}

// parseInclude reads the include options (the items of web.ListParam:
// include and include[], comma lists, possibly repeated).
func parseInclude(items []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, p := range items {
		name, ok := includeOptions[strings.ToLower(p)]
		if !ok {
			return nil, apierr.Invalid("include", "unknown option %q", trunc(p))
		}
		out[name] = true
	}
	return out, nil
}

// scope binds a page key to the query (everything but include and limit),
// the caller's role and, for favourites, the caller.
func (q ListQuery) scope(caller actor.Actor) string {
	states := append([]string(nil), q.States...)
	sort.Strings(states)
	centre := ""
	if q.HasCentre {
		centre = strconv.FormatFloat(q.Lat, 'g', -1, 64) + "," + strconv.FormatFloat(q.Long, 'g', -1, 64)
	}
	fav := ""
	if q.Favourites {
		fav = "fav:" + caller.UserID
	}
	return strings.Join([]string{
		"locations", strconv.FormatBool(caller.IsAdmin()), strings.Join(states, ","), centre,
		strings.Join(q.Search, "\x1f"), strings.ToLower(q.Title), fav, strings.Join(q.Tags, "\x1f"), strings.Join(q.Services, ","),
	}, "\x00")
}

// matcher holds the filters of a list or an export.
type matcher struct {
	states   map[string]bool
	ids      map[string]bool
	title    string
	search   []string
	tags     []string
	regions  []string
	services uint32
}

func (m *matcher) match(s *summary) bool {
	if len(m.states) > 0 && !m.states[s.State] {
		return false
	}
	if m.ids != nil && !m.ids[s.ID] {
		return false
	}
	if m.title != "" || len(m.search) > 0 {
		title := titleOfIndexSK(s.SK)
		if m.title != "" && title != m.title {
			return false
		}
		if len(m.search) > 0 && !containsAny(title, m.search) {
			return false
		}
	}
	if len(m.tags) > 0 && !intersects(s.Tags, m.tags) {
		return false
	}
	if len(m.regions) > 0 && !intersects(s.Regions, m.regions) {
		return false
	}
	return s.Services&m.services == m.services
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func intersects(have, want []string) bool {
	for _, w := range want {
		if contains(have, w) {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// candidate is a summary that passed the filters, with its distance from
// the search centre when there is one.
type candidate struct {
	sum  *summary
	dist float64
}

// List returns a page of the tenant's locations (GET /locations). Anonymous
// callers of the tenant and users see ACTIVE locations only; asking them for
// another state is UNAUTHORIZED. favourites needs a user (UNAUTHORIZED
// otherwise). Without lat/long the order is by title (ignoring case, then
// id); with them by distance, nearest first.
func (s *Service) List(ctx context.Context, caller actor.Actor, q ListQuery) ([]Location, web.Page, error) {
	if err := caller.RequireTenant(); err != nil {
		return nil, web.Page{}, err
	}
	tenantID := caller.TenantID
	if !caller.IsAdmin() {
		for _, st := range q.States {
			if st != StateActive {
				return nil, web.Page{}, web.ErrAdminOnly("state " + st)
			}
		}
		q.States = []string{StateActive}
	}
	m := matcher{states: toSet(q.States), title: strings.ToLower(q.Title), search: q.Search, tags: q.Tags, services: serviceMask(toSet(q.Services))}
	if q.Favourites {
		if caller.UserID == "" {
			return nil, web.Page{}, apierr.New(apierr.Unauthorized, "favourites requires a user session")
		}
		m.ids = map[string]bool{}
		if s.Profiles != nil {
			p, err := s.Profiles.Get(ctx, tenantID, caller.UserID)
			ids := p.FavouriteLocations
			if apierr.CodeOf(err) == apierr.NotFound {
				ids, err = nil, nil // a deleted user has no favourites
			}
			if err != nil {
				return nil, web.Page{}, fmt.Errorf("list locations: favourites: %w", err)
			}
			for _, id := range ids {
				m.ids[id] = true
			}
		}
	}
	scope := q.scope(caller)
	start, err := s.Cursor.Decode(tenantID, scope, q.StartKey)
	if err != nil {
		return nil, web.Page{}, err
	}
	sums, err := s.summaries(ctx, tenantID)
	if err != nil {
		return nil, web.Page{}, err
	}
	cands := make([]candidate, 0, 64)
	for i := range sums {
		if m.match(&sums[i]) {
			c := candidate{sum: &sums[i]}
			if q.HasCentre {
				c.dist = Distance(q.Lat, q.Long, sums[i].Lat, sums[i].Lon)
			}
			cands = append(cands, c)
		}
	}
	if q.HasCentre {
		sort.Slice(cands, func(i, j int) bool { return distanceLess(cands[i], cands[j].dist, cands[j].sum.ID) })
	}
	from, err := resume(cands, start, q.HasCentre)
	if err != nil {
		return nil, web.Page{}, err
	}
	page := cands[from:min(from+q.Limit, len(cands))]
	ids := make([]string, len(page))
	for i, c := range page {
		ids[i] = c.sum.ID
	}
	recs, err := s.st().batchGet(ctx, tenantID, ids)
	if err != nil {
		return nil, web.Page{}, fmt.Errorf("list locations: %w", err)
	}
	items := make([]Location, 0, len(page))
	size, last := 0, -1
	for i, c := range page {
		r, ok := recs[c.sum.ID]
		if !ok {
			continue // written after the summaries were read and gone since
		}
		l := listView(r.Location, q.Include)
		if q.HasCentre {
			d := math.Round(c.dist)
			l.Distance = &d
		}
		b, err := json.Marshal(l)
		if err != nil {
			return nil, web.Page{}, fmt.Errorf("list locations: %w", err)
		}
		if size += len(b) + 1; size > maxPageBytes && len(items) > 0 {
			break
		}
		items = append(items, l)
		last = i
	}
	out := web.Page{Limit: q.Limit, StartKey: q.StartKey, Count: len(items)}
	if last >= 0 && from+last+1 < len(cands) {
		c := page[last]
		k := map[string]types.AttributeValue{"k": str(c.sum.SK)}
		if q.HasCentre {
			k = map[string]types.AttributeValue{
				"d": &types.AttributeValueMemberN{Value: strconv.FormatFloat(c.dist, 'g', -1, 64)},
				"i": str(c.sum.ID),
			}
		}
		if out.NextKey, err = s.Cursor.Encode(tenantID, scope, k); err != nil {
			return nil, web.Page{}, err
		}
	}
	return items, out, nil
}

func distanceLess(a candidate, d float64, id string) bool {
	if a.dist != d {
		return a.dist < d
	}
	return a.sum.ID < id
}

// resume returns the index of the first candidate after the page key (the
// sort key of the last item of the previous page), so pages stay right
// when locations are added or removed between calls.
func resume(cands []candidate, start map[string]types.AttributeValue, byDistance bool) (int, error) {
	if start == nil {
		return 0, nil
	}
	bad := apierr.Invalid("startKey", "is not a key returned by this query")
	if byDistance {
		d, ok1 := start["d"].(*types.AttributeValueMemberN)
		id, ok2 := start["i"].(*types.AttributeValueMemberS)
		if !ok1 || !ok2 {
			return 0, bad
		}
		dist, err := strconv.ParseFloat(d.Value, 64)
		if err != nil {
			return 0, bad
		}
		return sort.Search(len(cands), func(i int) bool {
			return !distanceLess(cands[i], dist, id.Value) && !(cands[i].dist == dist && cands[i].sum.ID == id.Value)
		}), nil
	}
	k, ok := start["k"].(*types.AttributeValueMemberS)
	if !ok {
		return 0, bad
	}
	return sort.Search(len(cands), func(i int) bool { return cands[i].sum.SK > k.Value }), nil
}

// listView drops the optional fields a list item carries only through
// include.
func listView(l Location, inc map[string]bool) Location {
	if !inc["created"] {
		l.Created = ""
	}
	if !inc["updated"] {
		l.Updated = ""
	}
	if !inc["state"] {
		l.State = ""
	}
	if !inc["mainImageUrl"] {
		l.MainImageURL = ""
	}
	if !inc["alternativeOpeningHoursText"] {
		l.AlternativeOpeningHoursText = ""
	}
	if !inc["buttons"] {
		l.Buttons = nil
	}
	if !inc["links"] {
		l.Links = nil
	}
	if !inc["description"] {
		l.Description = ""
	}
	if !inc["ordering"] {
		l.Ordering = nil
	}
	if !inc["VATnumber"] {
		l.VATNumber = ""
	}
	if !inc["regions"] {
		l.Regions = nil
	}
	if !inc["address"] {
		l.Address = nil
	}
	if !inc["tags"] {
		l.Tags = nil
	}
	if !inc["zones"] {
		l.Zones = nil
	}
	if !inc["extended"] {
		l.Extended = nil
	}
	if !inc["deliveryBoundaries"] {
		l.DeliveryBoundaries = nil
	}
	return l
}

// EarthRadius is the mean radius of the Earth in metres (IUGG).
const EarthRadius = 6371008.8

// Distance returns the great-circle distance in metres between two points
// given as latitude and longitude in degrees (haversine formula).
func Distance(lat1, long1, lat2, long2 float64) float64 {
	rad := math.Pi / 180
	φ1, φ2 := lat1*rad, lat2*rad
	dφ, dλ := (lat2-lat1)*rad, (long2-long1)*rad
	a := math.Sin(dφ/2)*math.Sin(dφ/2) + math.Cos(φ1)*math.Cos(φ2)*math.Sin(dλ/2)*math.Sin(dλ/2)
	return 2 * EarthRadius * math.Asin(math.Min(1, math.Sqrt(a)))
}

// --- summary cache ---

// Cache bounds. Every list checks the tenant's version item (one consistent
// GetItem) and reuses the summaries it read before when nothing was written
// since; writes bump the version after they commit, so a list never misses
// a write that completed before it started. cacheMaxAge only bounds the
// damage of a bump that failed after its write.
const (
	cacheMaxAge       = time.Minute
	cacheMaxSummaries = 200000
)

// summaryCache keeps the summaries of recently listed tenants in memory
// (per Lambda container).
type summaryCache struct {
	mu      sync.Mutex
	tenants map[string]*cachedSummaries
	size    int
}

type cachedSummaries struct {
	version int64
	loaded  time.Time
	used    time.Time
	items   []summary
}

func (c *summaryCache) get(tenantID string, version int64) ([]summary, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.tenants[tenantID]
	if !ok || e.version != version || time.Since(e.loaded) > cacheMaxAge {
		return nil, false
	}
	e.used = time.Now()
	return e.items, true
}

func (c *summaryCache) put(tenantID string, version int64, items []summary) {
	if len(items) > cacheMaxSummaries {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tenants == nil {
		c.tenants = map[string]*cachedSummaries{}
	}
	if old, ok := c.tenants[tenantID]; ok {
		c.size -= len(old.items)
		delete(c.tenants, tenantID)
	}
	for c.size+len(items) > cacheMaxSummaries && len(c.tenants) > 0 {
		var lru string
		var lruAt time.Time
		for id, e := range c.tenants {
			if lru == "" || e.used.Before(lruAt) {
				lru, lruAt = id, e.used
			}
		}
		c.size -= len(c.tenants[lru].items)
		delete(c.tenants, lru)
	}
	now := time.Now()
	c.tenants[tenantID] = &cachedSummaries{version: version, loaded: now, used: now, items: items}
	c.size += len(items)
}

func (c *summaryCache) forget(tenantID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.tenants[tenantID]; ok {
		c.size -= len(e.items)
		delete(c.tenants, tenantID)
	}
}

// summaries returns every summary of a tenant in title order, from the
// cache when the tenant's version has not moved. The slice is shared: never
// change it.
func (s *Service) summaries(ctx context.Context, tenantID string) ([]summary, error) {
	st := s.st()
	version, err := st.version(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	if items, ok := s.cache.get(tenantID, version); ok {
		return items, nil
	}
	items, err := st.summaries(ctx, tenantID)
	if err != nil {
		return nil, err
	}
	s.cache.put(tenantID, version, items)
	return items, nil
}
