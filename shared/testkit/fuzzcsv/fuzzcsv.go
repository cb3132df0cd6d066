// Package fuzzcsv reads the CSV files of fuzz tests. It imports no domain
// package, so that a domain package's own (internal) tests may use it.
package fuzzcsv

import (
	"bytes"
	"encoding/csv"
	"io"
	"testing"
)

// Seed adds each file to the seed corpus of f.
func Seed(f *testing.F, files ...string) {
	for _, s := range files {
		f.Add([]byte(s))
	}
}

// Records reads data as CSV whose rows may have any width, and returns
// its header and the records of its first max rows after it; a row that
// does not parse is left out (it counts towards max). ok is false when
// the header does not parse.
func Records(data []byte, max int) (header []string, records [][]string, ok bool) {
	c := csv.NewReader(bytes.NewReader(data))
	c.FieldsPerRecord = -1
	header, err := c.Read()
	if err != nil {
		return nil, nil, false
	}
	for i := 0; i < max; i++ {
		rec, err := c.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			continue
		}
		records = append(records, rec)
	}
	return header, records, true
}

// Parse reads data as Records does and parses its header with
// parseHeader; ok is false when the header does not read or parse.
func Parse[H any](data []byte, max int, parseHeader func(names []string) (H, error)) (header H, records [][]string, ok bool) {
	names, records, ok := Records(data, max)
	if !ok {
		return header, nil, false
	}
	header, err := parseHeader(names)
	if err != nil {
		return header, nil, false
	}
	return header, records, true
}
