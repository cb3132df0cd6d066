package user

import (
	"strings"
	"testing"
	"time"
)

func TestCommonPasswordList(t *testing.T) {
	l := commonPasswords()
	if got := l.len(); got < 100_000 {
		t.Fatalf("the list holds %d passwords, want at least 100,000", got)
	}
	for i := 1; i < l.len(); i++ {
		if prev, cur := l.line(i-1), l.line(i); prev >= cur {
			t.Fatalf("line %d %q is not after line %d %q: the list must be sorted bytewise without duplicates", i, cur, i-1, prev)
		}
	}
	for i := 0; i < l.len(); i++ {
		if p := l.line(i); len(p) < 8 || len(p) > 128 || p != strings.ToLower(p) {
			t.Fatalf("line %d %q: want 8 to 128 lower-case characters", i, p)
		}
	}
	tests := []struct {
		password string
		want     bool
	}{
		{"password", true},
		{"12345678", true},
		{"PassWord", true},
		{"password1", true},
		{"qwertyuiop", true},
		{l.line(0), true},
		{l.line(l.len() - 1), true},
		{"correct-horse-9", false},
		{"passwor", false},
		{"password\n", false},
		{"", false},
	}
	for _, tc := range tests {
		t.Run(tc.password, func(t *testing.T) {
			if got := isCommonPassword(tc.password); got != tc.want {
				t.Errorf("isCommonPassword(%q) = %v, want %v", tc.password, got, tc.want)
			}
		})
	}
}

// BenchmarkCommonPasswordCheck prints the cost of one check once the list
// is loaded; the first load's time is logged.
func BenchmarkCommonPasswordCheck(b *testing.B) {
	start := time.Now()
	commonPasswords()
	b.Logf("first load (or already loaded): %s", time.Since(start))
	for b.Loop() {
		isCommonPassword("correct-horse-9")
	}
}
