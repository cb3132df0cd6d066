package passwordset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestHash(t *testing.T) {
	tests := []struct {
		password string
		want     uint32
	}{
		{"", 0x811c9dc5}, // the FNV-1a 32 offset basis
		{"a", 0xe40c292c},
		{"A", 0xe40c292c},
		{"foobar", 0xbf9cf968},
		{"FooBar", 0xbf9cf968},
	}
	for _, tc := range tests {
		t.Run(tc.password, func(t *testing.T) {
			if got := Hash(tc.password); got != tc.want {
				t.Errorf("Hash(%q) = %08x, want %08x", tc.password, got, tc.want)
			}
		})
	}
}

// randomHashes returns n distinct hashes, sorted, from a seeded generator,
// with the extremes 0 and 2^32-1 among them when n allows.
func randomHashes(n int, seed uint64) []uint32 {
	r := rand.New(rand.NewPCG(seed, seed))
	seen := map[uint32]bool{}
	var hs []uint32
	if n >= 2 {
		hs = append(hs, 0, 1<<32-1)
		seen[0], seen[1<<32-1] = true, true
	}
	for len(hs) < n {
		if h := r.Uint32(); !seen[h] {
			seen[h] = true
			hs = append(hs, h)
		}
	}
	slices.Sort(hs)
	return hs
}

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		n, k int
	}{
		{0, 14}, {1, 14}, {2, 14}, {3, 31}, {1000, 22}, {1000, 31}, {100_000, 15}, {100_000, 10},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("n%d_k%d", tc.n, tc.k), func(t *testing.T) {
			want := randomHashes(tc.n, uint64(tc.n))
			data, err := Encode(want, tc.k)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(data), Size(want, tc.k); got != want {
				t.Errorf("len(Encode) = %d, Size = %d", got, want)
			}
			s, err := Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Hashes(), want) {
				t.Fatalf("decoded %d hashes, not the %d encoded", s.Len(), len(want))
			}
			for _, h := range want {
				if !s.ContainsHash(h) {
					t.Fatalf("ContainsHash(%08x) = false", h)
				}
				if _, in := slices.BinarySearch(want, h-1); h > 0 && !in && s.ContainsHash(h-1) {
					t.Fatalf("ContainsHash(%08x) = true for a hash not in the set", h-1)
				}
			}
		})
	}
}

func TestContains(t *testing.T) {
	hs := []uint32{Hash("password1"), Hash("qwertyuiop")}
	slices.Sort(hs)
	data, err := Encode(hs, 14)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		password string
		want     bool
	}{
		{"password1", true}, {"PASSWORD1", true}, {"QwertyUIOP", true}, {"password2", false}, {"", false},
	} {
		if got := s.Contains(tc.password); got != tc.want {
			t.Errorf("Contains(%q) = %v, want %v", tc.password, got, tc.want)
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	tests := []struct {
		name   string
		hashes []uint32
		k      int
	}{
		{"Unsorted", []uint32{5, 3}, 14},
		{"Duplicate", []uint32{3, 3}, 14},
		{"KZero", []uint32{3}, 0},
		{"K32", []uint32{3}, 32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Encode(tc.hashes, tc.k); err == nil {
				t.Errorf("Encode(%v, %d) succeeded, want an error", tc.hashes, tc.k)
			}
		})
	}
}

// TestDecodeCorrupt checks that a damaged set is refused, not decoded into
// a set that lets passwords through: damage the checksum catches, and
// damage with a checksum that matches, which the decoder's own checks
// catch.
func TestDecodeCorrupt(t *testing.T) {
	good, err := Encode(randomHashes(1000, 7), 22)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	// resum recomputes the checksum after a change, so that the other
	// checks are what refuses the damage.
	resum := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[12:], checksum(b))
		return b
	}
	setCount := func(n uint32) func(b []byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], n); return resum(b) }
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"Empty", nil},
		{"ShortHeader", good[:headerSize-1]},
		{"Magic", edit(func(b []byte) []byte { b[0] = 'X'; return resum(b) })},
		{"Version", edit(func(b []byte) []byte { b[4] = 2; return resum(b) })},
		{"KZero", edit(func(b []byte) []byte { b[5] = 0; return resum(b) })},
		{"K32", edit(func(b []byte) []byte { b[5] = 32; return resum(b) })},
		{"Reserved", edit(func(b []byte) []byte { b[7] = 1; return resum(b) })},
		{"Checksum", edit(func(b []byte) []byte { b[12] ^= 1; return b })},
		{"BitFlip", edit(func(b []byte) []byte { b[headerSize+100] ^= 0x10; return b })},
		{"Truncated", good[:len(good)-1]},
		{"TruncatedResummed", edit(func(b []byte) []byte { return resum(b[:len(b)-3]) })},
		{"TrailingByte", edit(func(b []byte) []byte { return append(b, 0) })},
		{"TrailingByteResummed", edit(func(b []byte) []byte { return resum(append(b, 0)) })},
		{"CountPlusOne", edit(setCount(1001))},
		{"CountMinusOne", edit(setCount(999))},
		{"CountHuge", edit(setCount(1<<32 - 1))},
		{"WrongK", edit(func(b []byte) []byte { b[5] = 21; return b })},
		{"WrongKResummed", edit(func(b []byte) []byte { b[5] = 21; return resum(b) })},
		{"CountPlusOneUnsummed", edit(func(b []byte) []byte { b[11]++; return b })},
		// A code of 1 bits only ends inside the first quotient.
		{"AllOnes", resum(append(bytes.Clone(good[:headerSize]), bytes.Repeat([]byte{0xff}, 3000)...))},
		// Two zero differences: the second repeats the first hash.
		{"Repeat", edit(func(b []byte) []byte {
			b = b[:headerSize]
			binary.BigEndian.PutUint32(b[8:], 2)
			return resum(append(b, make([]byte, 6)...))
		})},
		// A difference of 2^32 (quotient 2, k 31) overflows 32 bits.
		{"Overflow", edit(func(b []byte) []byte {
			b = b[:headerSize]
			b[5] = 31
			binary.BigEndian.PutUint32(b[8:], 1)
			return resum(append(b, 0b1100_0000, 0, 0, 0, 0))
		})},
		// Padding bits after the last hash are not zero.
		{"Padding", edit(func(b []byte) []byte {
			b = b[:headerSize]
			b[5] = 1
			binary.BigEndian.PutUint32(b[8:], 1)
			return resum(append(b, 0b0010_0001))
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Decode(tc.data); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Decode = %v, want an error wrapping ErrCorrupt", err)
			}
		})
	}
	t.Run("Good", func(t *testing.T) {
		if _, err := Decode(good); err != nil {
			t.Errorf("Decode of the set before damage = %v", err)
		}
	})
}

func FuzzDecode(f *testing.F) {
	good, err := Encode(randomHashes(50, 3), 20)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if err != nil {
			return
		}
		// Whatever decodes is a valid set that encodes back to the input.
		if !slices.IsSorted(s.Hashes()) {
			t.Fatalf("decoded hashes are not sorted")
		}
		again, err := Encode(s.Hashes(), int(data[5]))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, data) {
			t.Fatalf("decoding then encoding changes the set")
		}
	})
}
