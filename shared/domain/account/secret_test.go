package account

import (
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/auth"
)

// TestPasswordCost proves that the functions hash passwords at the OWASP
// cost (the zero auth.PasswordCost), that a lowered cost (the tests') is
// written into the hash, and that either hash checks the password and
// refuses another.
func TestPasswordCost(t *testing.T) {
	tests := []struct {
		name string
		cost auth.PasswordCost
		want string
	}{
		{"Functions", auth.PasswordCost{}, "$argon2id$v=19$m=19456,t=2,p=1$"},
		{"Lowered", auth.PasswordCost{MemoryKiB: 64, Time: 1}, "$argon2id$v=19$m=64,t=1,p=1$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Service{Config: Config{PasswordCost: tt.cost}}
			h := s.HashPassword("correct-horse-9")
			if !strings.HasPrefix(h, tt.want) {
				t.Errorf("hash %q, want prefix %q", h, tt.want)
			}
			if !CheckPassword(h, "correct-horse-9") {
				t.Error("the password does not check against its hash")
			}
			if CheckPassword(h, "correct-horse-8") {
				t.Error("another password checks against the hash")
			}
		})
	}
}

// BenchmarkHashPassword measures one hash at each cost (with -race, the
// reason the tests lower it).
func BenchmarkHashPassword(b *testing.B) {
	for _, c := range []struct {
		name string
		cost auth.PasswordCost
	}{{"Functions", auth.PasswordCost{}}, {"Tests", auth.PasswordCost{MemoryKiB: 64, Time: 1}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				hashPassword("correct-horse-9", c.cost)
			}
		})
	}
}
