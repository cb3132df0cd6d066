// Package csvcell writes and reads the cells of the CSV files the platform
// writes (exports, results files) and reads (imports) so that a spreadsheet
// never runs a cell as a formula (CSV injection, as OWASP describes it): a
// text cell that begins with =, +, -, @, a tab or a carriage return is
// written with a leading apostrophe, which spreadsheets show as text and an
// import removes again, so that an exported file imported again gives the
// same values.
package csvcell

import (
	"regexp"
	"sync"
)

// formulaStart reports whether a spreadsheet could read a cell that begins
// with c as a formula.
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// escaped reports whether s is apostrophes followed by a character that
// starts a formula, and how many apostrophes it begins with.
func escaped(s string) (int, bool) {
	n := 0
	for n < len(s) && s[n] == '\'' {
		n++
	}
	return n, n < len(s) && formulaStart(s[n])
}

// Text returns the cell of a text value: the value itself, or the value
// with a leading apostrophe when it begins with a character that starts a
// formula. A value that already begins with apostrophes before such a
// character gets one more, so that Read gives it back unchanged.
func Text(s string) string {
	if _, ok := escaped(s); ok {
		return "'" + s
	}
	return s
}

// number is a decimal number as the platform writes one, compiled on
// first use so that a cold start does not pay for it.
var number = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`) })

// Number returns the cell of a numeric column: a decimal number (such as
// -5 or 51.5) as it is, anything else as Text. Which columns are numeric is
// part of each file's column definitions.
func Number(s string) string {
	if number().MatchString(s) {
		return s
	}
	return Text(s)
}

// Read returns the value of a cell read from an import: a cell that begins
// with an apostrophe followed by a character that starts a formula (or by
// more apostrophes and then such a character) loses its first apostrophe,
// the escape Text adds. Every other cell is the value as it is.
func Read(s string) string {
	if n, ok := escaped(s); ok && n > 0 {
		return s[1:]
	}
	return s
}

// Row returns the cells of a record to write: each value as Text, or as
// Number where numeric(i) says column i is numeric (numeric may be nil).
func Row(rec []string, numeric func(i int) bool) []string {
	out := make([]string, len(rec))
	for i, v := range rec {
		if numeric != nil && numeric(i) {
			out[i] = Number(v)
		} else {
			out[i] = Text(v)
		}
	}
	return out
}
