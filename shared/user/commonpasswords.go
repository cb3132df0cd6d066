package user

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"sort"
	"strings"
	"sync"
)

// commonPasswordsGz is the list of common and breached passwords that a
// new password must not be (NIST SP 800-63B, 5.1.1.2): 195,436 passwords
// of 8 to 128 printable ASCII characters, lower-cased, sorted bytewise,
// one a line, gzip-compressed. It is taken from the password lists of the
// SecLists project (MIT licence; see commonpasswords.NOTICE).
//
//go:embed commonpasswords.txt.gz
var commonPasswordsGz []byte

// commonPasswordList is the decompressed list and the offsets of its
// lines, read once on first use (only requests that set a password need
// it).
type commonPasswordList struct {
	text  []byte
	lines []uint32
}

var commonPasswords = sync.OnceValue(func() commonPasswordList {
	zr, err := gzip.NewReader(bytes.NewReader(commonPasswordsGz))
	if err != nil {
		panic("common passwords: " + err.Error())
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		panic("common passwords: " + err.Error())
	}
	l := commonPasswordList{text: text, lines: make([]uint32, 0, 200_000)}
	for start := 0; start < len(text); {
		l.lines = append(l.lines, uint32(start))
		n := bytes.IndexByte(text[start:], '\n')
		if n < 0 {
			break
		}
		start += n + 1
	}
	return l
})

// line returns the i-th password of the list.
func (l commonPasswordList) line(i int) string {
	start := int(l.lines[i])
	end := len(l.text)
	if i+1 < len(l.lines) {
		end = int(l.lines[i+1]) - 1
	}
	return string(bytes.TrimSuffix(l.text[start:end], []byte("\n")))
}

// len is the number of passwords in the list.
func (l commonPasswordList) len() int { return len(l.lines) }

// isCommonPassword reports whether p, compared without regard to case, is
// in the list of common passwords.
func isCommonPassword(p string) bool {
	p = strings.ToLower(p)
	l := commonPasswords()
	i := sort.Search(l.len(), func(i int) bool { return l.line(i) >= p })
	return i < l.len() && l.line(i) == p
}
