package account

import (
	_ "embed"
	"sync"

	"github.com/loyalty-platform/platform/shared/domain/account/internal/passwordset"
)

// commonPasswordsRice is the set of common and breached passwords that a
// new password must not be (NIST SP 800-63B, 5.1.1.2): the 195,436
// passwords of 8 to 128 printable ASCII characters of the SecLists password
// lists (MIT licence; see commonpasswords.NOTICE), stored as a Golomb–Rice
// coded set of 195,433 distinct 32-bit hashes of the lower-cased passwords
// (package passwordset; k=14, 388,523 bytes, where the gzip-compressed
// list took 800 KB). The trade is false positives: a password outside the
// list is refused with probability 195,433/2^32, about 1 in 22,000. It is
// written by internal/genpasswords, whose comment says where the list
// comes from.
//
// Only commonPasswords reads it, so a binary that never checks a password
// links none of it.
//
//go:embed commonpasswords.rice
var commonPasswordsRice []byte

var (
	commonPasswordsOnce sync.Once
	commonPasswordsSet  passwordset.Set
	commonPasswordsErr  error
)

// commonPasswords decodes the set on first use (only requests that set a
// password need it; about 780 KB of memory once decoded). A set that does
// not decode panics on every call rather than let any password through;
// the tests decode the embedded set.
func commonPasswords() passwordset.Set {
	commonPasswordsOnce.Do(func() {
		commonPasswordsSet, commonPasswordsErr = passwordset.Decode(commonPasswordsRice)
	})
	if commonPasswordsErr != nil {
		panic("common passwords: " + commonPasswordsErr.Error())
	}
	return commonPasswordsSet
}

// isCommonPassword reports whether p, compared without regard to case, is
// in the list of common passwords; a password outside the list is reported
// as common with probability about 1 in 22,000 (see commonPasswordsRice).
func isCommonPassword(p string) bool {
	return commonPasswords().Contains(p)
}
