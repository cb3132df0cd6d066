package geo

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// near reports whether two [lon, lat] positions agree to within tol degrees.
func near(a, b []float64, tol float64) bool {
	return len(a) == 2 && len(b) == 2 && math.Abs(a[0]-b[0]) <= tol && math.Abs(a[1]-b[1]) <= tol
}

func TestGazetteerData(t *testing.T) {
	g, err := parseGazetteer(placesCSV)
	if err != nil {
		t.Fatal(err)
	}
	cities, streets := 0, 0
	byCity := map[string]*place{}
	for i := range g.places {
		p := &g.places[i]
		switch p.kind {
		case kindCity:
			cities++
			byCity[p.addr.Country+"|"+p.addr.City] = p
		case kindStreet:
			streets++
		}
	}
	if cities < 60 || streets < 4 {
		t.Fatalf("%d cities and %d streets, want at least 60 and 4", cities, streets)
	}
	// Every landmark lies within 40 km of the centre of its city, when the
	// gazetteer knows the city: a swapped latitude and longitude, or a sign
	// error, would put it thousands of kilometres away.
	for i := range g.places {
		p := &g.places[i]
		c, ok := byCity[p.addr.Country+"|"+p.addr.City]
		if p.kind != kindStreet || !ok {
			continue
		}
		if d := haversine(p.pos, c.pos); d > 40 {
			t.Errorf("%s is %.0f km from the centre of %s", p.label, d, c.addr.City)
		}
	}
	// Reference coordinates of well-known city centres.
	refs := []struct {
		country, city string
		pos           []float64
	}{
		{"GB", "London", []float64{-0.1278, 51.5074}},
		{"FR", "Paris", []float64{2.3522, 48.8566}},
		{"US", "New York", []float64{-74.0060, 40.7128}},
		{"US", "Los Angeles", []float64{-118.2437, 34.0522}},
		{"DE", "Berlin", []float64{13.4050, 52.5200}},
		{"ES", "Madrid", []float64{-3.7038, 40.4168}},
		{"IT", "Rome", []float64{12.4964, 41.9028}},
		{"JP", "Tokyo", []float64{139.6917, 35.6895}},
		{"AU", "Sydney", []float64{151.2093, -33.8688}},
		{"BR", "São Paulo", []float64{-46.6333, -23.5505}},
		{"ZA", "Cape Town", []float64{18.4241, -33.9249}},
		{"NZ", "Wellington", []float64{174.7756, -41.2866}},
	}
	for _, r := range refs {
		c, ok := byCity[r.country+"|"+r.city]
		if !ok {
			t.Errorf("no city %s in %s", r.city, r.country)
			continue
		}
		if !near(c.pos, r.pos, 0.01) {
			t.Errorf("%s at %v, want %v", r.city, c.pos, r.pos)
		}
	}
}

func TestGazetteerParseErrors(t *testing.T) {
	const header = "kind,name,line1,line2,city,region,postal_code,country,lat,lon,aliases\n"
	tests := []struct{ name, row string }{
		{"unknown country", "city,,,,Atlantis,,,XX,1,1,\n"},
		{"latitude out of range", "city,,,,London,England,,GB,91,0,\n"},
		{"not a number", "city,,,,London,England,,GB,north,0,\n"},
		{"street without line1", "street,Somewhere,,,London,England,,GB,51.5,-0.1,\n"},
		{"city with a line", "city,,1 High Street,,London,England,,GB,51.5,-0.1,\n"},
		{"unknown kind", "village,,,,Grantchester,England,,GB,52.18,0.09,\n"},
		{"missing city", "city,,,,,England,,GB,51.5,-0.1,\n"},
		{"duplicate place", "city,,,,London,England,,GB,51.5,-0.1,\ncity,,,,London,England,,GB,51.5,-0.1,\n"},
		{"wrong column count", "city,,,,London\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseGazetteer(header + tt.row); err == nil {
				t.Fatal("parsed, want an error")
			}
		})
	}
}

func TestGazetteerLocate(t *testing.T) {
	var (
		downing   = []float64{-0.1276, 51.5034}
		white     = []float64{-77.0365, 38.8977}
		eiffel    = []float64{2.2945, 48.8584}
		empire    = []float64{-73.9857, 40.7484}
		reichstag = []float64{13.3762, 52.5186}
		colosseum = []float64{12.4922, 41.8902}
		london    = []float64{-0.1278, 51.5074}
		paris     = []float64{2.3522, 48.8566}
	)
	tests := []struct {
		name string
		a    Address
		want []float64 // nil when not resolved
	}{
		{"10 Downing Street", Address{Line1: "10 Downing Street", City: "London", PostalCode: "SW1A 2AA", Country: "GB"}, downing},
		{"10 Downing St without postal code, alpha-3 country", Address{Line1: "10 downing st.", City: "LONDON", Country: "GBR"}, downing},
		{"10 Downing Street, country by name, squashed postal code", Address{Line1: "10 Downing Street", City: "London", PostalCode: "sw1a2aa", Country: "United Kingdom"}, downing},
		{"10 Downing Street, UK", Address{Line1: "10 Downing Street", City: "London", Country: "UK"}, downing},
		{"White House", Address{Line1: "1600 Pennsylvania Avenue NW", City: "Washington", Region: "DC", PostalCode: "20500", Country: "US"}, white},
		{"White House abbreviated", Address{Line1: "1600 Pennsylvania Ave. N.W.", City: "Washington, D.C.", PostalCode: "20500-0003", Country: "USA"}, white},
		{"Eiffel Tower in one line", Address{Line1: "Champ de Mars, 5 Avenue Anatole France", City: "Paris", PostalCode: "75007", Country: "FR"}, eiffel},
		{"Eiffel Tower over two lines", Address{Line1: "5 Av. Anatole France", Line2: "Champ de Mars", City: "paris", Country: "France"}, eiffel},
		{"Empire State Building", Address{Line1: "350 Fifth Avenue", City: "New York", Region: "NY", PostalCode: "10118", Country: "US"}, empire},
		{"Empire State Building as 5th Ave", Address{Line1: "350 5th Ave", City: "New York City", Country: "United States"}, empire},
		{"Reichstag", Address{Line1: "Platz der Republik 1", City: "Berlin", PostalCode: "11011", Country: "DE"}, reichstag},
		{"Colosseum under the city's own name", Address{Line1: "Piazza del Colosseo, 1", City: "Roma", Country: "IT"}, colosseum},
		{"known street with another postal code gives the city", Address{Line1: "10 Downing Street", City: "London", PostalCode: "SW1A 9ZZ", Country: "GB"}, london},
		{"known street in another city gives that city", Address{Line1: "10 Downing Street", City: "Manchester", Country: "GB"}, []float64{-2.2426, 53.4808}},
		{"unknown street gives the city centre", Address{Line1: "1 High Street", City: "London", Country: "GB"}, london},
		{"unknown street in Paris", Address{Line1: "12 Rue de la Paix", City: "Paris", PostalCode: "75002", Country: "FR"}, paris},
		{"city with diacritics typed without", Address{Line1: "Bahnhofstrasse 1", City: "Zurich", Country: "CH"}, []float64{8.5417, 47.3769}},
		{"city by local name", Address{Line1: "Domkloster 4", City: "Köln", Country: "Germany"}, []float64{6.9603, 50.9375}},
		{"city by local name, country by code", Address{Line1: "Domkloster 4", City: "Koln", Country: "DE"}, []float64{6.9603, 50.9375}},
		{"city alias", Address{Line1: "Rua Augusta 1", City: "Lisboa", Country: "PT"}, []float64{-9.1393, 38.7223}},
		{"region agrees", Address{Line1: "1 Main Street", City: "Portland", Region: "Oregon", Country: "US"}, []float64{-122.6784, 45.5152}},
		{"region code agrees", Address{Line1: "1 Main Street", City: "Portland", Region: "OR", Country: "US"}, []float64{-122.6784, 45.5152}},
		{"region differs: another Portland", Address{Line1: "1 Main Street", City: "Portland", Region: "ME", Country: "US"}, nil},
		{"landmark street in another state", Address{Line1: "350 Fifth Avenue", City: "New York", Region: "NJ", Country: "US"}, nil},
		{"free-text region elsewhere is not compared", Address{Line1: "1 High Street", City: "London", Region: "Greater London", Country: "GB"}, london},
		{"free-text region with a landmark", Address{Line1: "10 Downing Street", City: "London", Region: "Westminster", Country: "GB"}, downing},
		{"unknown city", Address{Line1: "742 Evergreen Terrace", City: "Springfield", Country: "US"}, nil},
		{"known city name in another country", Address{Line1: "1 Main Street", City: "Paris", Country: "US"}, nil},
		{"landmark street in another country", Address{Line1: "10 Downing Street", City: "London", Country: "AU"}, nil},
		{"landmark street in another country's city of the same name", Address{Line1: "10 Downing Street", City: "London", Country: "CA"}, []float64{-81.2453, 42.9849}},
	}
	g := NewGazetteer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := g.Locate(context.Background(), tt.a)
			if tt.want == nil {
				if !errors.Is(err, ErrNotResolved) || got != nil {
					t.Fatalf("Locate = %v, %v; want ErrNotResolved", got, err)
				}
				e, _ := apierr.As(err)
				if e.Code.Status() != 422 || e.Message != "the address could not be resolved" {
					t.Fatalf("error %+v, want a 422 saying the address could not be resolved", e)
				}
				return
			}
			if err != nil {
				t.Fatalf("Locate: %v", err)
			}
			if !near(got, tt.want, 1e-9) {
				t.Fatalf("Locate = %v, want %v", got, tt.want)
			}
		})
	}
}

// Mid-size and same-named cities resolve to their own centre: each lands
// within 10 km of reference coordinates taken from another public
// gazetteer, and a region names which of two same-named cities is meant.
func TestGazetteerCityCoverage(t *testing.T) {
	tests := []struct {
		name string
		a    Address
		want []float64 // [longitude, latitude]; nil when not resolved
	}{
		{"Oxford", Address{City: "Oxford", Country: "GB"}, []float64{-1.2560, 51.7522}},
		{"Cambridge, England", Address{City: "Cambridge", Country: "GB"}, []float64{0.1167, 52.2000}},
		{"Cambridge, MA", Address{City: "Cambridge", Region: "MA", Country: "US"}, []float64{-71.1056, 42.3751}},
		{"Cambridge, Massachusetts", Address{City: "Cambridge", Region: "Massachusetts", Country: "USA"}, []float64{-71.1056, 42.3751}},
		{"no Cambridge in California", Address{City: "Cambridge", Region: "CA", Country: "US"}, nil},
		{"Mountain View", Address{City: "Mountain View", Region: "CA", Country: "US"}, []float64{-122.0838, 37.3860}},
		{"Cupertino", Address{City: "Cupertino", Country: "US"}, []float64{-122.0322, 37.3230}},
		{"Palo Alto", Address{City: "Palo Alto", Region: "California", Country: "US"}, []float64{-122.1430, 37.4419}},
		{"Redmond", Address{City: "Redmond", Region: "WA", Country: "US"}, []float64{-122.1215, 47.6740}},
		{"Birmingham, AL", Address{City: "Birmingham", Region: "AL", Country: "US"}, []float64{-86.8025, 33.5207}},
		{"Birmingham, England", Address{City: "Birmingham", Country: "GB"}, []float64{-1.8904, 52.4862}},
		{"Brighton", Address{City: "Brighton", Country: "GB"}, []float64{-0.1395, 50.8284}},
		{"Brighton and Hove", Address{City: "Brighton and Hove", Country: "GB"}, []float64{-0.1395, 50.8284}},
		{"Sheffield", Address{City: "Sheffield", Country: "GB"}, []float64{-1.4659, 53.3830}},
		{"Nottingham", Address{City: "Nottingham", Country: "GB"}, []float64{-1.1505, 52.9536}},
		{"Newcastle upon Tyne", Address{City: "Newcastle upon Tyne", Country: "GB"}, []float64{-1.6140, 54.9733}},
		{"Newcastle, England", Address{City: "Newcastle", Country: "GB"}, []float64{-1.6140, 54.9733}},
		{"Newcastle, NSW", Address{City: "Newcastle", Region: "NSW", Country: "AU"}, []float64{151.7801, -32.9295}},
		{"London, Ontario", Address{City: "London", Region: "ON", Country: "CA"}, []float64{-81.2330, 42.9834}},
		{"no London in Quebec", Address{City: "London", Region: "QC", Country: "CA"}, nil},
		{"Brooklyn", Address{City: "Brooklyn", Region: "NY", Country: "US"}, []float64{-73.9496, 40.6501}},
		{"Nürnberg by its German name", Address{City: "Nuernberg", Country: "DE"}, []float64{11.0775, 49.4542}},
	}
	g := NewGazetteer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.a.Line1 = "1 Any Street"
			got, err := g.Locate(context.Background(), tt.a)
			if tt.want == nil {
				if !errors.Is(err, ErrNotResolved) {
					t.Fatalf("Locate = %v, %v; want ErrNotResolved", got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Locate: %v", err)
			}
			if d := haversine(got, tt.want); d > 10 {
				t.Fatalf("Locate = %v, %.1f km from %v; want within 10 km", got, d, tt.want)
			}
		})
	}
}

func TestGazetteerLocateInvalid(t *testing.T) {
	tests := []struct {
		name  string
		a     Address
		field string
	}{
		{"missing line1", Address{City: "London", Country: "GB"}, "line1"},
		{"missing city", Address{Line1: "10 Downing Street", Country: "GB"}, "city"},
		{"missing country", Address{Line1: "10 Downing Street", City: "London"}, "country"},
		{"unknown country", Address{Line1: "10 Downing Street", City: "London", Country: "Narnia"}, "country"},
		{"country not in English", Address{Line1: "Domkloster 4", City: "Köln", Country: "Deutschland"}, "country"},
		{"oversize line1", Address{Line1: strings.Repeat("x", 201), City: "London", Country: "GB"}, "line1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewGazetteer().Locate(context.Background(), tt.a)
			wantInvalid(t, err, tt.field)
		})
	}
}

// texts returns the Text of each suggestion.
func texts(list []Suggestion) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Text
	}
	return out
}

func TestGazetteerSuggest(t *testing.T) {
	porto := []float64{-8.6291, 41.1579}
	portland := []float64{-122.6784, 45.5152}
	tests := []struct {
		name  string
		text  string
		bias  []float64
		max   int
		first string   // Text of the first suggestion; "" for none
		all   []string // when set, the exact list of Texts
		count int      // when set, the number of suggestions
	}{
		{name: "city prefix", text: "lond", first: "London, England, United Kingdom"},
		{name: "exact city before its landmarks", text: "London", first: "London, England, United Kingdom", count: DefaultSuggestions},
		{name: "street prefix", text: "10 Downing", all: []string{"Prime Minister's Office, 10 Downing Street, London, England, SW1A 2AA, United Kingdom"}},
		{name: "landmark by name", text: "eiffel", first: "Eiffel Tower, 5 Avenue Anatole France, Champ de Mars, Paris, Île-de-France, 75007, France"},
		{name: "abbreviated street", text: "350 5th ave", first: "Empire State Building, 350 Fifth Avenue, New York, New York, 10118, United States"},
		{name: "words in any order", text: "downing london", first: "Prime Minister's Office, 10 Downing Street, London, England, SW1A 2AA, United Kingdom"},
		{name: "city and country", text: "paris, france", first: "Paris, Île-de-France, France"},
		{name: "diacritics ignored", text: "zur", first: "Zurich, Zurich, Switzerland"},
		{name: "diacritics typed", text: "São Pa", first: "São Paulo, São Paulo, Brazil"},
		{name: "city alias", text: "NYC", first: "New York, New York, United States"},
		{name: "substring", text: "ondon", first: "London, England, United Kingdom"},
		{name: "no match", text: "xyzzy plugh", all: []string{}},
		{name: "punctuation only", text: "...", all: []string{}},
		{name: "without bias, file order", text: "port", first: "Portland, Oregon, United States"},
		{name: "bias near Porto", text: "port", bias: porto, first: "Porto, Porto, Portugal"},
		{name: "bias near Portland", text: "port", bias: portland, first: "Portland, Oregon, United States"},
		{name: "max results", text: "san", max: 2, count: 2},
		{name: "max above the limit", text: "ave", max: 100},
		{name: "default count", text: "new", count: DefaultSuggestions},
		{name: "fewer matches than the default", text: "cambridge", count: 2},
		{name: "whole word in canonical spelling only", text: "avenue", count: 3},
		{name: "saint and st are one word", text: "saint louis", first: "St. Louis, Missouri, United States"},
	}
	g := NewGazetteer()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := g.Suggest(context.Background(), tt.text, tt.bias, tt.max)
			if len(tt.text) < MinTextLength {
				wantInvalid(t, err, "address")
				return
			}
			if err != nil {
				t.Fatalf("Suggest: %v", err)
			}
			if got == nil {
				t.Fatal("Suggest returned nil, want a list (empty when nothing matches)")
			}
			if len(got) > MaxSuggestions {
				t.Fatalf("%d suggestions, more than %d", len(got), MaxSuggestions)
			}
			if tt.all != nil && !reflect.DeepEqual(texts(got), tt.all) {
				t.Fatalf("suggestions %q, want %q", texts(got), tt.all)
			}
			if tt.first != "" && (len(got) == 0 || got[0].Text != tt.first) {
				t.Fatalf("suggestions %q, want %q first", texts(got), tt.first)
			}
			if tt.count != 0 && len(got) != tt.count {
				t.Fatalf("%d suggestions (%q), want %d", len(got), texts(got), tt.count)
			}
		})
	}
}

func TestGazetteerSuggestion(t *testing.T) {
	got, err := NewGazetteer().Suggest(context.Background(), "10 Downing Street", nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Suggestion{{
		Text:     "Prime Minister's Office, 10 Downing Street, London, England, SW1A 2AA, United Kingdom",
		Address:  Address{Line1: "10 Downing Street", City: "London", Region: "England", PostalCode: "SW1A 2AA", Country: "GB"},
		Position: []float64{-0.1276, 51.5034},
		PlaceID:  "gazetteer:gb:prime-ministers-office",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Suggest = %+v, want %+v", got, want)
	}
	// A suggestion's address locates back to its own position.
	pos, err := NewGazetteer().Locate(context.Background(), got[0].Address)
	if err != nil || !near(pos, got[0].Position, 0) {
		t.Fatalf("Locate(suggested address) = %v, %v; want %v", pos, err, got[0].Position)
	}
	// Callers own the returned slices.
	got[0].Position[0] = 99
	again, _ := NewGazetteer().Suggest(context.Background(), "10 Downing Street", nil, 1)
	if again[0].Position[0] != -0.1276 {
		t.Fatal("changing a returned position changed the gazetteer")
	}
}

// Every suggested place, city or landmark, locates back to its position.
func TestGazetteerRoundTrip(t *testing.T) {
	g := NewGazetteer()
	for i := range g.places {
		p := &g.places[i]
		t.Run(p.id, func(t *testing.T) {
			a := p.addr
			if a.Line1 == "" {
				a.Line1 = "1 Any Street"
			}
			pos, err := g.Locate(context.Background(), a)
			if err != nil || !near(pos, p.pos, 0) {
				t.Fatalf("Locate(%+v) = %v, %v; want %v", a, pos, err, p.pos)
			}
		})
	}
}

func TestGazetteerSuggestInvalid(t *testing.T) {
	tests := []struct {
		name, text string
		bias       []float64
		field      string
	}{
		{"text too short", "ab", nil, "address"},
		{"text too long", strings.Repeat("a", 201), nil, "address"},
		{"bias out of range", "London", []float64{200, 0}, "position"},
		{"bias with one number", "London", []float64{1}, "position"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewGazetteer().Suggest(context.Background(), tt.text, tt.bias, 0)
			wantInvalid(t, err, tt.field)
		})
	}
}

func TestGazetteerDeterministic(t *testing.T) {
	g := NewGazetteer()
	for _, text := range []string{"san", "london", "port", "street", "ave"} {
		first, err := g.Suggest(context.Background(), text, []float64{0, 0}, MaxSuggestions)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			again, _ := g.Suggest(context.Background(), text, []float64{0, 0}, MaxSuggestions)
			if !reflect.DeepEqual(first, again) {
				t.Fatalf("Suggest(%q) changed between calls:\n%q\n%q", text, texts(first), texts(again))
			}
		}
	}
}

func BenchmarkGazetteerSuggest(b *testing.B) {
	g := NewGazetteer()
	ctx := context.Background()
	for b.Loop() {
		if _, err := g.Suggest(ctx, "10 downing st", []float64{-0.1, 51.5}, 5); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGazetteerLocate(b *testing.B) {
	g := NewGazetteer()
	ctx := context.Background()
	a := Address{Line1: "350 5th Ave", City: "New York", Country: "USA"}
	for b.Loop() {
		if _, err := g.Locate(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
}
