package csvcell_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/csvcell"
)

func TestText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Plain", "Soho", "Soho"},
		{"Empty", "", ""},
		{"Equals", `=HYPERLINK("x")`, `'=HYPERLINK("x")`},
		{"Plus", "+1", "'+1"},
		{"Minus", "-5", "'-5"},
		{"At", "@SUM(1+1)", "'@SUM(1+1)"},
		{"Tab", "\tx", "'\tx"},
		{"CarriageReturn", "\rx", "'\rx"},
		{"InsideIsFine", "a=b", "a=b"},
		{"LeadingSpace", " =x", " =x"},
		{"ApostropheAlone", "'x", "'x"},
		{"EscapedLooking", "'=x", "''=x"},
		{"TwoApostrophes", "''@x", "'''@x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := csvcell.Text(tc.in); got != tc.want {
				t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if back := csvcell.Read(csvcell.Text(tc.in)); back != tc.in {
				t.Errorf("Read(Text(%q)) = %q", tc.in, back)
			}
		})
	}
}

func TestNumber(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Negative", "-5", "-5"},
		{"Fraction", "-0.1337", "-0.1337"},
		{"Exponent", "1e-7", "1e-7"},
		{"Empty", "", ""},
		{"Formula", "-5+cmd|' /C calc'!A0", "'-5+cmd|' /C calc'!A0"},
		{"PlusSign", "+5", "'+5"},
		{"Text", "abc", "abc"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := csvcell.Number(tc.in); got != tc.want {
				t.Errorf("Number(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRead(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Escaped", "'=x", "=x"},
		{"EscapedMinus", "'-5", "-5"},
		{"EscapedTab", "'\tx", "\tx"},
		{"ApostropheText", "'tis", "'tis"},
		{"ApostropheOnly", "'", "'"},
		{"Unescaped", "=x", "=x"},
		{"DoubleEscaped", "''=x", "'=x"},
		{"Number", "-5", "-5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := csvcell.Read(tc.in); got != tc.want {
				t.Errorf("Read(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzCells: Read undoes Text for every value; Text's cells never begin
// with a character that starts a formula; Number keeps decimal numbers and
// escapes like Text otherwise.
func FuzzCells(f *testing.F) {
	for _, s := range []string{"", "x", `=HYPERLINK("x")`, "@SUM(1+1)", "-5", "+1", "\tx", "\rx", "'=x", "''-", "'", "-0.5e3", "-5+cmd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := csvcell.Text(s)
		if csvcell.Read(c) != s {
			t.Fatalf("Read(Text(%q)) = %q", s, csvcell.Read(c))
		}
		if c != "" && (c[0] == '=' || c[0] == '+' || c[0] == '-' || c[0] == '@' || c[0] == '\t' || c[0] == '\r') {
			t.Fatalf("Text(%q) = %q begins with a formula character", s, c)
		}
		if n := csvcell.Number(s); n != s && n != c {
			t.Fatalf("Number(%q) = %q", s, n)
		}
	})
}
