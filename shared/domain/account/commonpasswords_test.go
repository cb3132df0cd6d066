package account

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/account/internal/passwordset"
)

// TestCommonPasswordList decodes the embedded set and checks that every
// hash it holds is refused, as are passwords of the source list in any
// case, and that other passwords are not.
func TestCommonPasswordList(t *testing.T) {
	s, err := passwordset.Decode(commonPasswordsRice)
	if err != nil {
		t.Fatalf("the embedded set does not decode: %v", err)
	}
	if got := s.Len(); got < 100_000 {
		t.Fatalf("the set holds %d hashes, want at least 100,000", got)
	}
	hashes := s.Hashes()
	if !slices.IsSorted(hashes) || len(slices.Compact(slices.Clone(hashes))) != len(hashes) {
		t.Fatalf("the hashes are not sorted ascending without duplicates")
	}
	for i, h := range hashes {
		if !commonPasswords().ContainsHash(h) {
			t.Fatalf("hash %d (%08x) of the set is not found", i, h)
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
		{"iloveyou123", true},
		{"ILoveYou123", true},
		{"!!!gerard!!!", true}, // the first of the source list, sorted bytewise
		{"~~lily~~", true},     // and the last
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

// TestStrongPasswordsAccepted checks that strong passwords pass, and that
// the rate of random passwords refused (the false positives of the hashed
// set) is near the expected Len()/2^32. The passwords come from a seeded
// generator, so the figures are the same on every run.
func TestStrongPasswordsAccepted(t *testing.T) {
	for _, p := range []string{"Tr0ub4dor&3-xkcd", "correct horse battery staple", "q8#Vn2!pLz@4Rw", "zG7kQ1mX9pT3vB6y"} {
		if isCommonPassword(p) {
			t.Errorf("isCommonPassword(%q) = true, want false", p)
		}
	}
	const n = 250_000
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&*+-.:=?@_~"
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 16)
	refused := 0
	for range n {
		for i := range buf {
			buf[i] = alphabet[r.IntN(len(alphabet))]
		}
		if isCommonPassword(string(buf)) {
			refused++
		}
	}
	expected := float64(n) * float64(commonPasswords().Len()) / (1 << 32)
	t.Logf("%d of %d random 16-character passwords refused (expected %.1f: 1 in %.0f)", refused, n, expected, (1<<32)/float64(commonPasswords().Len()))
	if float64(refused) > 2*expected {
		t.Errorf("%d of %d random passwords refused, want at most %.0f", refused, n, 2*expected)
	}
}

// BenchmarkCommonPasswordCheck prints the cost of one check once the set
// is decoded; the first decoding's time is logged.
func BenchmarkCommonPasswordCheck(b *testing.B) {
	start := time.Now()
	commonPasswords()
	b.Logf("first decoding (or already decoded): %s", time.Since(start))
	for b.Loop() {
		isCommonPassword("correct-horse-9")
	}
}

// BenchmarkCommonPasswordDecode prints the cost of decoding the embedded
// set, paid once per container on its first password check.
func BenchmarkCommonPasswordDecode(b *testing.B) {
	b.SetBytes(int64(len(commonPasswordsRice)))
	for b.Loop() {
		if _, err := passwordset.Decode(commonPasswordsRice); err != nil {
			b.Fatal(err)
		}
	}
}
