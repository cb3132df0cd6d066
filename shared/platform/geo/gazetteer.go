package geo

import (
	"context"
	_ "embed"
	"encoding/csv"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// placesCSV is the Gazetteer's data: real cities (their centre) and a few
// street-level landmarks, with coordinates checked against public
// gazetteers. Columns: kind (city or street), name, line1, line2, city,
// region (display name first, then aliases, |-separated), postal_code,
// country (ISO alpha-2), lat, lon, aliases (|-separated: other names of the
// city, or other spellings of the landmark's line1 or name).
//
//go:embed places.csv
var placesCSV string

// Kinds of gazetteer places.
const (
	kindCity   = "city"
	kindStreet = "street"
)

// Gazetteer is the offline Geocoder: it knows the places of the embedded
// places.csv and nothing else, and needs no account or network. Locate
// gives a landmark's own coordinates for an exact street match (line1,
// city and postal code agree), else the centre of the city (city-level
// precision), else ErrNotResolved; in the US, Canada, Australia and Brazil
// a given region (state) must agree too. Results are deterministic.
type Gazetteer struct {
	places []place
	// cities maps country + "|" + canonical city name (or alias) to the
	// indexes of its city places, in file order.
	cities map[string][]int
}

type place struct {
	kind    string
	name    string // a landmark's name, or ""
	addr    Address
	pos     []float64 // [longitude, latitude]
	id      string
	label   string
	regions map[string]bool // canonical region names and codes
	// lines are a landmark's canonical line1 spellings; cityKeys the
	// canonical names of its city.
	lines    map[string]bool
	cityKeys map[string]bool
	// exact are the folded and canonical primary names (city names,
	// landmark names and lines); phrases are the folded words of a primary
	// name followed by the rest of the label, and texts the same joined by
	// spaces; tokens are all the words of the place, folded and canonical.
	exact   map[string]bool
	phrases [][]string
	texts   []string
	tokens  []string
	order   int // file order
}

var gazetteer = sync.OnceValue(func() *Gazetteer {
	g, err := parseGazetteer(placesCSV)
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return g
})

// NewGazetteer returns the offline geocoder over the embedded places. The
// data is parsed once per process.
func NewGazetteer() *Gazetteer { return gazetteer() }

// regionCountries lists the countries (ISO alpha-2) where a given region
// must agree with the place's: their states share city names (Portland,
// Oregon and Portland, Maine), and their region names and codes are
// standard. Elsewhere the region is free text ("Greater London") and is
// not compared.
var regionCountries = map[string]bool{"US": true, "CA": true, "AU": true, "BR": true}

// regionAgrees reports whether the canonical region of an address (empty
// when not given) is compatible with place p.
func (p *place) regionAgrees(region string) bool {
	return region == "" || !regionCountries[p.addr.Country] || p.regions[region]
}

// Locate implements Geocoder.
func (g *Gazetteer) Locate(ctx context.Context, a Address) ([]float64, error) {
	if err := a.ValidateLocatable(""); err != nil {
		return nil, err
	}
	c, _ := LookupCountry(a.Country)
	city, region := canonical(a.City), canonical(a.Region)
	lines := map[string]bool{canonical(a.Line1): true}
	if strings.TrimSpace(a.Line2) != "" {
		lines[canonical(a.Line1+" "+a.Line2)] = true
		lines[canonical(a.Line2+" "+a.Line1)] = true
	}
	for i := range g.places {
		p := &g.places[i]
		if p.kind != kindStreet || p.addr.Country != c.Alpha2 || !p.cityKeys[city] || !p.regionAgrees(region) || !postalMatches(a.PostalCode, p.addr.PostalCode) {
			continue
		}
		for l := range lines {
			if p.lines[l] {
				return clonePos(p.pos), nil
			}
		}
	}
	for _, i := range g.cities[c.Alpha2+"|"+city] {
		p := &g.places[i]
		if p.regionAgrees(region) {
			return clonePos(p.pos), nil
		}
	}
	return nil, fmt.Errorf("geo: gazetteer: no known street or city %q in %s: %w", a.City, c.Alpha2, ErrNotResolved)
}

// Suggest implements Geocoder. A place matches when the text, folded, is
// one of its names (best), starts one of its labels, has every word start
// a word of the place, or is part of a label (worst). Equal matches are
// ordered by distance to bias when given, then cities before landmarks,
// then file order.
func (g *Gazetteer) Suggest(ctx context.Context, text string, bias []float64, max int) ([]Suggestion, error) {
	if err := CheckSuggest(text, bias); err != nil {
		return nil, err
	}
	q := fold(text)
	if q == "" {
		return []Suggestion{}, nil // nothing but punctuation: nothing to match
	}
	qc := canonical(text)
	words := strings.Fields(q)
	type hit struct {
		p       *place
		quality int
		dist    float64
	}
	var hits []hit
	for i := range g.places {
		p := &g.places[i]
		quality := p.match(q, qc, words)
		if quality < 0 {
			continue
		}
		h := hit{p: p, quality: quality}
		if bias != nil {
			h.dist = haversine(bias, p.pos)
		}
		hits = append(hits, h)
	}
	sort.SliceStable(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.quality != b.quality {
			return a.quality < b.quality
		}
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		if a.p.kind != b.p.kind {
			return a.p.kind == kindCity
		}
		return a.p.order < b.p.order
	})
	n := min(SuggestLimit(max), len(hits))
	out := make([]Suggestion, 0, n)
	for _, h := range hits[:n] {
		out = append(out, Suggestion{Text: h.p.label, Address: h.p.addr, Position: clonePos(h.p.pos), PlaceID: h.p.id})
	}
	return out, nil
}

// Match qualities, best first.
const (
	matchExact   = iota // the text is a name of the place
	matchPrefix         // the text starts a label of the place, word by word
	matchWords          // every word of the text starts a word of the place
	matchContain        // the text is inside a label of the place
)

// match returns how well folded text q (canonical form qc, words) matches
// the place, or -1. Canonical spellings ("st" for "street") count only for
// whole words, so that "street" does not match "Stockholm".
func (p *place) match(q, qc string, words []string) int {
	if p.exact[q] || (qc != "" && p.exact[qc]) {
		return matchExact
	}
	for _, ph := range p.phrases {
		if startsWords(ph, words) {
			return matchPrefix
		}
	}
	if p.hasWords(words) {
		return matchWords
	}
	for _, t := range p.texts {
		if strings.Contains(t, q) {
			return matchContain
		}
	}
	return -1
}

// startsWords reports whether words start phrase: each word equal to the
// phrase's word at its place (or the same in canonical spelling), the last
// one possibly a prefix of it.
func startsWords(phrase, words []string) bool {
	if len(words) > len(phrase) {
		return false
	}
	for i, w := range words {
		pw := phrase[i]
		switch {
		case sameWord(w, pw):
		case i == len(words)-1 && strings.HasPrefix(pw, w):
		default:
			return false
		}
	}
	return true
}

// sameWord reports whether two folded words are equal or have the same
// canonical spelling ("avenue" and "ave").
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	ca, okA := canonicalWords[a]
	if !okA {
		ca = a
	}
	cb, okB := canonicalWords[b]
	if !okB {
		cb = b
	}
	return (okA || okB) && ca == cb
}

// hasWords reports whether each word starts a word of the place, or is a
// word of the place in its canonical spelling.
func (p *place) hasWords(words []string) bool {
	for _, w := range words {
		cw, hasCanon := canonicalWords[w]
		found := false
		for _, t := range p.tokens {
			if strings.HasPrefix(t, w) || (hasCanon && cw != "" && t == cw) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func clonePos(p []float64) []float64 { return []float64{p[0], p[1]} }

func parseGazetteer(data string) (*Gazetteer, error) {
	r := csv.NewReader(strings.NewReader(data))
	r.FieldsPerRecord = 11
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("geo: places.csv: %w", err)
	}
	g := &Gazetteer{cities: map[string][]int{}}
	for i, row := range rows[1:] {
		p, err := parsePlace(row)
		if err != nil {
			return nil, fmt.Errorf("geo: places.csv line %d: %w", i+2, err)
		}
		p.order = i
		g.places = append(g.places, p)
	}
	// City names and aliases index the city places; a landmark also
	// answers to the aliases of its city ("Roma" for Rome).
	aliases := map[string]map[string]bool{}
	for i := range g.places {
		p := &g.places[i]
		if p.kind != kindCity {
			continue
		}
		for k := range p.cityKeys {
			key := p.addr.Country + "|" + k
			g.cities[key] = append(g.cities[key], i)
		}
		aliases[p.addr.Country+"|"+canonical(p.addr.City)] = p.cityKeys
	}
	ids := map[string]bool{}
	for i := range g.places {
		p := &g.places[i]
		if p.kind == kindStreet {
			for k := range aliases[p.addr.Country+"|"+canonical(p.addr.City)] {
				p.cityKeys[k] = true
			}
		}
		if ids[p.id] {
			return nil, fmt.Errorf("geo: places.csv: duplicate place %s", p.id)
		}
		ids[p.id] = true
	}
	return g, nil
}

func parsePlace(row []string) (place, error) {
	kind, name, line1, line2, city, region, postal, country, latS, lonS, aliasS := row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10]
	c, ok := countries().byAlpha2[country]
	if !ok {
		return place{}, fmt.Errorf("unknown country %q", country)
	}
	lat, err1 := strconv.ParseFloat(latS, 64)
	lon, err2 := strconv.ParseFloat(lonS, 64)
	if err1 != nil || err2 != nil {
		return place{}, fmt.Errorf("bad coordinates %q, %q", latS, lonS)
	}
	pos := []float64{lon, lat}
	if err := ValidatePosition("position", pos); err != nil {
		return place{}, err
	}
	if city == "" {
		return place{}, fmt.Errorf("city is required")
	}
	regionNames := splitList(region)
	aliases := splitList(aliasS)
	p := place{
		kind:     kind,
		name:     name,
		pos:      pos,
		regions:  map[string]bool{},
		lines:    map[string]bool{},
		cityKeys: map[string]bool{canonical(city): true},
		exact:    map[string]bool{},
	}
	p.addr = Address{Line1: line1, Line2: line2, City: city, PostalCode: postal, Country: c.Alpha2}
	if len(regionNames) > 0 {
		p.addr.Region = regionNames[0]
	}
	for _, r := range regionNames {
		p.regions[canonical(r)] = true
	}
	var primary []string
	switch kind {
	case kindCity:
		if name != "" || line1 != "" || line2 != "" || postal != "" {
			return place{}, fmt.Errorf("a city has no name, lines or postal code")
		}
		primary = append([]string{city}, aliases...)
		for _, a := range aliases {
			p.cityKeys[canonical(a)] = true
		}
		p.id = "gazetteer:" + strings.ToLower(c.Alpha2) + ":" + slug(city)
	case kindStreet:
		if line1 == "" {
			return place{}, fmt.Errorf("a street place needs line1")
		}
		for _, l := range append([]string{line1}, aliases...) {
			p.lines[canonical(l)] = true
		}
		if line2 != "" {
			p.lines[canonical(line1+" "+line2)] = true
			p.lines[canonical(line2+" "+line1)] = true
		}
		if name != "" {
			primary = append(primary, name)
		}
		primary = append(primary, line1)
		primary = append(primary, aliases...)
		p.id = "gazetteer:" + strings.ToLower(c.Alpha2) + ":" + slug(firstNonEmpty(name, line1))
	default:
		return place{}, fmt.Errorf("unknown kind %q", kind)
	}
	// A phrase is a primary name followed by the rest of the address, so
	// that "10 downing street lon" and "eiffel tower 5 av" are prefixes.
	tail := []string{p.addr.Region, c.Name}
	if kind == kindStreet {
		tail = []string{line2, city, p.addr.Region, postal, c.Name}
	}
	labelParts := []string{}
	if name != "" && name != line1 {
		labelParts = append(labelParts, name)
	}
	if kind == kindStreet {
		labelParts = append(labelParts, line1, line2, city, p.addr.Region, postal)
	} else {
		labelParts = append(labelParts, city, p.addr.Region)
	}
	labelParts = append(labelParts, c.Name)
	p.label = JoinNonEmpty(", ", labelParts...)
	for _, pr := range primary {
		p.exact[fold(pr)] = true
		p.exact[canonical(pr)] = true
		rest := tail
		if kind == kindStreet && pr != line1 {
			rest = append([]string{line1}, tail...)
		}
		ph := fold(pr + " " + JoinNonEmpty(" ", rest...))
		p.phrases = append(p.phrases, strings.Fields(ph))
		p.texts = append(p.texts, ph)
	}
	seen := map[string]bool{}
	all := append(append([]string{}, primary...), line1, line2, city, postal, c.Name, c.Alpha2, c.Alpha3)
	all = append(all, regionNames...)
	for _, s := range all {
		for _, w := range strings.Fields(fold(s)) {
			for _, t := range []string{w, canonicalWords[w]} {
				if t != "" && !seen[t] {
					seen[t] = true
					p.tokens = append(p.tokens, t)
				}
			}
		}
	}
	return p, nil
}

// slug returns s folded with dashes for spaces: "10 Downing Street" ->
// "10-downing-street".
func slug(s string) string { return strings.ReplaceAll(fold(s), " ", "-") }

// JoinNonEmpty joins the parts that are not blank, trimmed, with sep.
func JoinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
