package account

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math/big"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/auth"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters of new password hashes: the OWASP Password Storage
// Cheat Sheet's first recommended configuration (19 MiB of memory, 2
// iterations, 1 thread), unless Config.PasswordCost lowers the cost.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// hashPassword returns an encoded argon2id hash of password in the PHC
// string format, at the cost cost names (its zero fields: the OWASP
// parameters above).
func hashPassword(password string, cost auth.PasswordCost) string {
	t, mem := cost.Time, cost.MemoryKiB
	if t == 0 {
		t = argonTime
	}
	if mem == 0 {
		mem = argonMemory
	}
	salt := make([]byte, argonSaltLen)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, t, mem, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, mem, t, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

// HashPassword returns an encoded argon2id hash of password at the
// service's cost (Config.PasswordCost).
func (s *Service) HashPassword(password string) string {
	return hashPassword(password, s.PasswordCost)
}

// CheckPassword reports whether password matches an encoded hash made by
// HashPassword (with any parameters).
func CheckPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var mem, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil {
		return false
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// newCode returns a random numeric code of n digits.
func newCode(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		d, _ := rand.Int(rand.Reader, big.NewInt(10))
		b.WriteByte(byte('0' + d.Int64()))
	}
	return b.String()
}

// newToken returns a new session token for tenant. The tenant id is part of
// the token so a request needs no x-application-id header; the secret part
// has 256 bits of entropy.
func newToken(tenantID string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return tenantID + "." + base64.RawURLEncoding.EncodeToString(b[:])
}

// tokenHash is the stored form of a session token.
func tokenHash(token string) string { return auth.TokenHash(token) }

// equalCode compares codes in constant time.
func equalCode(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
