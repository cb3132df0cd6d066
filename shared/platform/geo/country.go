package geo

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"strings"
	"sync"
)

// countriesCSV is ISO 3166-1 (alpha-2, alpha-3, English short name), taken
// from the Debian iso-codes package, plus common English aliases (UK,
// Great Britain, England, USA, Holland, ...).
//
//go:embed countries.csv
var countriesCSV string

// Country is an ISO 3166-1 country.
type Country struct {
	Alpha2 string // "GB"
	Alpha3 string // "GBR"
	Name   string // "United Kingdom"
}

type countryIndex struct {
	byKey    map[string]Country // folded code, name or alias -> country
	byAlpha2 map[string]Country
	byAlpha3 map[string]Country
}

var countries = sync.OnceValue(func() *countryIndex {
	idx, err := parseCountries(countriesCSV)
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return idx
})

// CountryByAlpha3 returns the country of an ISO 3166 alpha-3 code (upper
// case), as Amazon Location names countries.
func CountryByAlpha3(code string) (Country, bool) {
	c, ok := countries().byAlpha3[code]
	return c, ok
}

// LookupCountry finds a country by ISO 3166-1 alpha-2 or alpha-3 code or by
// English name or common alias, ignoring case, diacritics and punctuation:
// "GB", "gbr", "United Kingdom", "UK" and "Great Britain" all give GB.
func LookupCountry(s string) (Country, bool) {
	c, ok := countries().byKey[fold(s)]
	return c, ok
}

func parseCountries(data string) (*countryIndex, error) {
	rows, err := csv.NewReader(strings.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("geo: countries.csv: %w", err)
	}
	idx := &countryIndex{byKey: map[string]Country{}, byAlpha2: map[string]Country{}, byAlpha3: map[string]Country{}}
	for i, r := range rows[1:] {
		if len(r) != 4 || len(r[0]) != 2 || len(r[1]) != 3 || r[2] == "" {
			return nil, fmt.Errorf("geo: countries.csv line %d: want alpha2,alpha3,name,aliases", i+2)
		}
		c := Country{Alpha2: r[0], Alpha3: r[1], Name: r[2]}
		idx.byAlpha2[c.Alpha2] = c
		idx.byAlpha3[c.Alpha3] = c
		keys := append([]string{c.Alpha2, c.Alpha3, c.Name}, splitList(r[3])...)
		for _, k := range keys {
			k = fold(k)
			if prev, dup := idx.byKey[k]; dup && prev != c {
				return nil, fmt.Errorf("geo: countries.csv: %q names both %s and %s", k, prev.Alpha2, c.Alpha2)
			}
			idx.byKey[k] = c
		}
	}
	return idx, nil
}

// splitList splits a pipe-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "|") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
