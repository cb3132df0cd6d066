// Package passwordset stores a list of passwords as a Golomb–Rice coded set
// of 32-bit hashes: about 16 bits a password instead of the password
// itself, at the price of false positives. A password outside the list is
// found in a set of n hashes with probability about n/2^32 (1 in 22,000 for
// 195,000 passwords).
//
// The coded form is a 16-byte header followed by the code:
//
//	offset  size  field
//	0       4     magic "PWRS"
//	4       1     format version 1: the hash is FNV-1a 32 of the bytes of
//	              the password lower-cased by strings.ToLower
//	5       1     Rice parameter k, 1 to 31
//	6       2     zero
//	8       4     number of hashes, big-endian
//	12      4     CRC-32 (IEEE) of bytes 0 to 11 followed by the code,
//	              big-endian
//	16      ...   the code
//
// The code holds the hashes sorted ascending, each as its difference from
// the previous one (the first from zero): the quotient difference>>k in
// unary (that many 1 bits, then a 0 bit), then the k low bits of the
// difference, most significant bit first; the last byte is padded with 0
// bits.
package passwordset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"slices"
	"strings"
)

const (
	magic      = "PWRS"
	version    = 1
	headerSize = 16
)

// Hash returns the hash a set stores for password p: FNV-1a 32 of p
// lower-cased, so that membership does not depend on case.
func Hash(p string) uint32 {
	p = strings.ToLower(p)
	// FNV-1a 32 as hash/fnv computes it, inlined so that nothing is
	// allocated.
	h := uint32(2166136261) // the offset basis
	for i := range len(p) {
		h ^= uint32(p[i])
		h *= 16777619 // the FNV 32 prime
	}
	return h
}

// Set is a decoded set: its hashes sorted ascending, without duplicates.
type Set struct {
	hashes []uint32
}

// Contains reports whether the hash of password p is in the set: always
// when p (in any case) was in the list the set was made from, and with
// probability about Len()/2^32 otherwise.
func (s Set) Contains(p string) bool { return s.ContainsHash(Hash(p)) }

// ContainsHash reports whether h is in the set.
func (s Set) ContainsHash(h uint32) bool {
	_, found := slices.BinarySearch(s.hashes, h)
	return found
}

// Len is the number of distinct hashes in the set.
func (s Set) Len() int { return len(s.hashes) }

// Hashes returns the hashes of the set, sorted ascending; the caller must
// not modify them.
func (s Set) Hashes() []uint32 { return s.hashes }

// Encode codes hashes, sorted ascending without duplicates, with Rice
// parameter k (1 to 31).
func Encode(hashes []uint32, k int) ([]byte, error) {
	if k < 1 || k > 31 {
		return nil, fmt.Errorf("rice parameter %d: want 1 to 31", k)
	}
	var w bitWriter
	prev := uint32(0)
	for i, h := range hashes {
		if i > 0 && h <= prev {
			return nil, fmt.Errorf("hash %d (%08x) is not after hash %d (%08x): want sorted ascending without duplicates", i, h, i-1, prev)
		}
		d := h - prev
		for q := d >> k; q > 0; q-- {
			w.bit(1)
		}
		w.bit(0)
		for j := k - 1; j >= 0; j-- {
			w.bit(d >> j & 1)
		}
		prev = h
	}
	code := w.bytes()
	out := make([]byte, headerSize, headerSize+len(code))
	copy(out, magic)
	out[4] = version
	out[5] = byte(k)
	binary.BigEndian.PutUint32(out[8:], uint32(len(hashes)))
	out = append(out, code...)
	binary.BigEndian.PutUint32(out[12:], checksum(out))
	return out, nil
}

// Size returns the length in bytes of the coded form of hashes (sorted
// ascending, without duplicates) with Rice parameter k.
func Size(hashes []uint32, k int) int {
	n := 0
	prev := uint32(0)
	for _, h := range hashes {
		n += int((h-prev)>>k) + 1 + k
		prev = h
	}
	return headerSize + (n+7)/8
}

// checksum returns the CRC-32 of a coded set but its checksum field.
func checksum(data []byte) uint32 {
	return crc32.Update(crc32.ChecksumIEEE(data[:12]), crc32.IEEETable, data[headerSize:])
}

// ErrCorrupt is wrapped by every error of Decode.
var ErrCorrupt = errors.New("corrupt password set")

// Decode decodes and validates a coded set: checksum, header, the number of
// hashes, hashes strictly ascending within 32 bits, and no data after the
// last hash but the padding of its byte.
func Decode(data []byte) (Set, error) {
	if len(data) < headerSize {
		return Set{}, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, len(data), headerSize)
	}
	if sum, want := checksum(data), binary.BigEndian.Uint32(data[12:]); sum != want {
		return Set{}, fmt.Errorf("%w: checksum %08x, header says %08x", ErrCorrupt, sum, want)
	}
	if string(data[:4]) != magic {
		return Set{}, fmt.Errorf("%w: magic %q, want %q", ErrCorrupt, data[:4], magic)
	}
	if data[4] != version {
		return Set{}, fmt.Errorf("%w: format version %d, want %d", ErrCorrupt, data[4], version)
	}
	k := int(data[5])
	if k < 1 || k > 31 {
		return Set{}, fmt.Errorf("%w: rice parameter %d, want 1 to 31", ErrCorrupt, k)
	}
	if data[6] != 0 || data[7] != 0 {
		return Set{}, fmt.Errorf("%w: reserved header bytes are not zero", ErrCorrupt)
	}
	n := binary.BigEndian.Uint32(data[8:])
	code := data[headerSize:]
	// Every hash takes at least k+1 bits: a count the code cannot hold is
	// refused before allocating for it.
	if uint64(n)*uint64(k+1) > uint64(len(code))*8 {
		return Set{}, fmt.Errorf("%w: %d hashes cannot fit in %d bytes", ErrCorrupt, n, len(code))
	}
	r := bitReader{b: code}
	hashes := make([]uint32, n)
	var sum uint64
	for i := range hashes {
		q, ok := r.unary()
		if !ok {
			return Set{}, fmt.Errorf("%w: the code ends in hash %d of %d", ErrCorrupt, i, n)
		}
		low, ok := r.bits(k)
		if !ok {
			return Set{}, fmt.Errorf("%w: the code ends in hash %d of %d", ErrCorrupt, i, n)
		}
		d := uint64(q)<<k | uint64(low)
		if i > 0 && d == 0 {
			return Set{}, fmt.Errorf("%w: hash %d repeats hash %d", ErrCorrupt, i, i-1)
		}
		sum += d
		if sum > 1<<32-1 {
			return Set{}, fmt.Errorf("%w: hash %d exceeds 32 bits", ErrCorrupt, i)
		}
		hashes[i] = uint32(sum)
	}
	if rest := len(code)*8 - r.pos; rest >= 8 {
		return Set{}, fmt.Errorf("%w: %d bytes after the last hash", ErrCorrupt, rest/8)
	} else if rest > 0 && code[len(code)-1]&(1<<rest-1) != 0 {
		return Set{}, fmt.Errorf("%w: the padding after the last hash is not zero", ErrCorrupt)
	}
	return Set{hashes: hashes}, nil
}

// bitWriter appends bits, most significant bit of each byte first.
type bitWriter struct {
	b []byte
	n int // bits written
}

func (w *bitWriter) bit(v uint32) {
	if w.n%8 == 0 {
		w.b = append(w.b, 0)
	}
	if v != 0 {
		w.b[len(w.b)-1] |= 0x80 >> (w.n % 8)
	}
	w.n++
}

func (w *bitWriter) bytes() []byte { return w.b }

// bitReader reads bits, most significant bit of each byte first.
type bitReader struct {
	b   []byte
	pos int // bits read
}

// unary reads 1 bits up to and including the next 0 bit and returns their
// number; false if the code ends first or the number cannot be a quotient
// of a 32-bit difference.
func (r *bitReader) unary() (uint32, bool) {
	var q uint32
	for {
		i, off := r.pos>>3, r.pos&7
		if i >= len(r.b) {
			return 0, false
		}
		// The bits not yet read, at the top of the byte, followed by 0s:
		// its leading 1s are the 1s still to read in this byte.
		ones := bits.LeadingZeros8(^(r.b[i] << off))
		if avail := 8 - off; ones < avail {
			r.pos += ones + 1
			return q + uint32(ones), true
		}
		q += uint32(8 - off)
		r.pos += 8 - off
		if q > 1<<31 {
			return 0, false
		}
	}
}

// bits reads an n-bit number (n at most 31); false if the code ends first.
func (r *bitReader) bits(n int) (uint32, bool) {
	if r.pos+n > len(r.b)*8 {
		return 0, false
	}
	var v uint32
	for n > 0 {
		i, off := r.pos>>3, r.pos&7
		take := min(8-off, n)
		chunk := uint32(r.b[i]<<off) >> (8 - take)
		v = v<<take | chunk
		r.pos += take
		n -= take
	}
	return v, true
}
