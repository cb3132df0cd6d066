package geo

import (
	"strings"
	"unicode"
)

// fold returns s in the form the matchers compare: lower case, Latin
// diacritics removed ("Zürich" -> "zurich", "Straße" -> "strasse"),
// apostrophes and dots dropped ("St. John's" -> "st johns", "D.C." -> "dc"),
// every other run of non-letters-or-digits one space, trimmed.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		r = unicode.ToLower(r)
		switch {
		case r == '\'' || r == '’' || r == '‘' || r == '.' || r == 'ʼ':
			continue
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			if f, ok := foldTable[r]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(r)
			}
		default:
			space = true
		}
	}
	return b.String()
}

// canonicalWords maps the long and short spellings of common address words
// to one form, so that "350 Fifth Avenue" and "350 5th Ave" compare equal.
// Both sides of a comparison go through it, so a collision ("st" for both
// street and saint) only ever makes two spellings of one address agree.
var canonicalWords = map[string]string{
	"street": "st", "str": "st", "strasse": "st",
	"avenue": "ave", "av": "ave", "avda": "ave", "avenida": "ave",
	"road": "rd", "boulevard": "blvd", "bd": "blvd", "bvd": "blvd",
	"drive": "dr", "lane": "ln", "place": "pl", "square": "sq",
	"highway": "hwy", "parkway": "pkwy", "pkway": "pkwy", "court": "ct",
	"terrace": "ter", "crescent": "cres", "mount": "mt", "saint": "st",
	"one": "1", "two": "2", "three": "3",
	"first": "1st", "second": "2nd", "third": "3rd", "fourth": "4th",
	"fifth": "5th", "sixth": "6th", "seventh": "7th", "eighth": "8th",
	"ninth": "9th", "tenth": "10th",
	"north": "n", "south": "s", "east": "e", "west": "w",
	"northeast": "ne", "northwest": "nw", "southeast": "se", "southwest": "sw",
	"the": "",
}

// canonical returns the folded form of s with each word replaced by its
// canonical spelling; it is what exact matches compare.
func canonical(s string) string {
	words := strings.Fields(fold(s))
	out := words[:0]
	for _, w := range words {
		if c, ok := canonicalWords[w]; ok {
			w = c
		}
		if w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// postalKey returns a postal code in the form compared: upper case, without
// spaces, dashes or dots.
func postalKey(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '.' {
			return -1
		}
		return unicode.ToUpper(r)
	}, s)
}

// postalMatches reports whether two postal codes agree: equal, or one the
// start of the other ("20500" and "20500-0003", "SW1A" and "SW1A 2AA").
func postalMatches(a, b string) bool {
	a, b = postalKey(a), postalKey(b)
	if a == "" || b == "" {
		return true
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}
