package ddb_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

func TestCheckNumber(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"Zero", "0", true},
		{"NegativeZero", "-0", true},
		{"ZeroWithHugeExponent", "0.000e99999", true},
		{"Integer", "42", true},
		{"Negative", "-5", true},
		{"Largest", "9.999999999999998E+125", true},
		{"LargestNegative", "-9.999999999999998e125", true},
		{"RoundsTo1e126", "9.9999999999999999999999999999999999999E+125", false},
		{"TooLarge", "1e126", false},
		{"Float64Max", "1e308", false},
		{"BeyondFloat64", "1e400", false},
		{"SmallestPositive", "1e-130", true},
		{"SmallestWrittenLong", "0.0001e-126", true},
		{"TooSmall", "1e-131", false},
		{"TooSmallNegative", "-0.1e-130", false},
		{"ThirtyEightDigits", "12345678901234567890123456789012345678", true},
		{"ThirtyNineDigits", "123456789012345678901234567890123456789", false},
		{"TrailingZerosDoNotCount", "1234567890123456789012345678901234567800000", true},
		{"LeadingZerosDoNotCount", "0.000000000012345678901234567890123456789012345678", true},
		{"ThirtyNineDigitsFraction", "1.23456789012345678901234567890123456789", false},
		{"HugeExponent", "1e99999999999999999999999", false},
		{"HugeNegativeExponent", "1e-99999999999999999999999", false},
		{"NotANumber", "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why := ddb.CheckNumber(tc.in)
			if got := why == ""; got != tc.ok {
				t.Errorf("CheckNumber(%q) = %q, want ok %v", tc.in, why, tc.ok)
			}
		})
	}
}

func TestCheckJSON(t *testing.T) {
	nested := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tests := []struct {
		name, in string
		path     string // "" with ok
		ok       bool
		size     int
	}{
		{"Object", `{"ab":"xyz","n":12,"t":true,"z":null}`, "", true, 3 + 2 + 3 + 1 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1},
		{"List", `[1,"a"]`, "", true, 3 + 2 + 1 + 1 + 1},
		{"MultiByteString", `"é"`, "", true, 2},
		{"NumberPath", `{"a":{"b":[0,1e308]}}`, "a.b[1]", false, 0},
		{"EmptyKey", `{"a":[{"":1}]}`, "a[0]", false, 0},
		{"Nested31", nested(31), "", true, 31*5 + 2},
		{"Nested32", nested(32), strings.TrimPrefix(strings.Repeat(".a", 31), "."), false, 0},
		{"NestedLists40", strings.Repeat("[", 40) + strings.Repeat("]", 40), strings.Repeat("[0]", 31), false, 0},
		{"LargerThanAnItem", `{"s":"` + strings.Repeat("x", ddb.MaxItemBytes) + `"}`, "", false, 0},
		{"TwoValues", `1 2`, "", false, 0},
		{"Malformed", `{"a":`, "a", false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			size, err := ddb.CheckJSON([]byte(tc.in))
			if tc.ok {
				if err != nil || size != tc.size {
					t.Fatalf("CheckJSON = %d, %v; want %d, nil", size, err, tc.size)
				}
				return
			}
			var ve *ddb.ValueError
			if !errors.As(err, &ve) {
				t.Fatalf("CheckJSON = %d, %v; want a *ValueError", size, err)
			}
			if ve.Path != tc.path {
				t.Errorf("path = %q, want %q (%v)", ve.Path, tc.path, err)
			}
		})
	}
}

func TestValueErrorAt(t *testing.T) {
	tests := []struct{ base, path, want string }{
		{"extended", "", "extended"},
		{"extended", "n", "extended.n"},
		{"extended", "[2].a", "extended[2].a"},
		{"", "n", "n"},
		{"", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.base+"_"+tc.path, func(t *testing.T) {
			if got := (&ddb.ValueError{Path: tc.path}).At(tc.base); got != tc.want {
				t.Errorf("At = %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzCheckJSON: the checker never panics; what it accepts is one valid
// JSON value whose numbers all lie in DynamoDB's range, no deeper than
// ddb.MaxNesting, within the item size; what it refuses as valid JSON
// names a place in the value.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"n":1}`, `{"n":1e126}`, `{"n":1e308}`, `{"n":-1e-131}`, `{"n":9.9999999999999999999999999999999999999E+125}`,
		`{"n":123456789012345678901234567890123456789}`, `{"":1}`, `[[[[]]]]`, strings.Repeat("[", 40) + strings.Repeat("]", 40),
		strings.Repeat(`{"a":`, 33) + "0" + strings.Repeat("}", 33), `"=HYPERLINK(\"x\")"`, `{"a":[1,"b",null,true]}`,
		`0e99999999999999999999`, `1e-99999999999999999999`, `{"a":1} x`, `{"a":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		size, err := ddb.CheckJSON(data)
		if err != nil {
			var ve *ddb.ValueError
			if !errors.As(err, &ve) || ve.Reason == "" {
				t.Fatalf("CheckJSON(%q) = %v, want a *ValueError with a reason", data, err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("CheckJSON accepted invalid JSON %q", data)
		}
		if size < 0 || size > ddb.MaxItemBytes {
			t.Fatalf("CheckJSON(%q) size %d", data, size)
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		level, deepest := 0, 0
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			switch v := tok.(type) {
			case json.Delim:
				if v == '{' || v == '[' {
					level++
					deepest = max(deepest, level)
				} else {
					level--
				}
			case json.Number:
				if why := ddb.CheckNumber(string(v)); why != "" {
					t.Fatalf("CheckJSON(%q) accepted %s: %s", data, v, why)
				}
				if f, err := v.Float64(); err == nil && f != 0 && (abs(f) < 0.99e-130 || abs(f) >= 1.01e126) {
					t.Fatalf("CheckJSON(%q) accepted %s", data, v)
				}
			}
		}
		if deepest > ddb.MaxNesting-1 {
			t.Fatalf("CheckJSON(%q) accepted nesting %d", data, deepest)
		}
	})
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}
