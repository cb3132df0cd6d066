package user

import (
	"crypto/rand"
	"encoding/hex"
	"sort"
	"strings"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
)

// Service is the core of the users domain that its three functions share
// (the parts built on it: shared/domain/account for the accounts
// function, directory for the users function, avatar for the avatars
// function): the user record and its store, the user's API view with the
// include options, and the changes of the record every part makes.
type Service struct {
	store    *Store
	clock    clock.Clock
	mediaURL string
	includes Includes
}

// New returns the core on db and the Users and Sessions tables of
// tables. mediaURL is where the profile photos are served; includes
// supply the include options other domains own (nil: those parts of a
// user are empty, as in the functions that never read them).
func New(db ddb.API, tables ddb.Tables, clk clock.Clock, mediaURL string, includes Includes) *Service {
	return &Service{
		store: &Store{DB: db, Users: tables.Users, Sessions: tables.Sessions},
		clock: clk, mediaURL: mediaURL, includes: includes,
	}
}

// Store returns the users domain's store, for the parts of the domain in
// packages of their own.
func (s *Service) Store() *Store { return s.store }

// Now returns the time on the service's clock.
func (s *Service) Now() time.Time { return s.clock.Now() }

func (s *Service) st() *Store { return s.store }

// PlatformOrUnknown returns p, or PlatformUnknown when p is empty.
func PlatformOrUnknown(p string) string {
	if p == "" {
		return PlatformUnknown
	}
	return p
}

// NewID returns a new random id (24 hex characters, like the platform's
// other ids).
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SortCredentials sorts credentials by by: created or updatedAt, with a
// leading - for the newest first.
func SortCredentials(creds []CredRecord, by string) {
	desc := strings.HasPrefix(by, "-")
	field := strings.TrimPrefix(by, "-")
	sort.SliceStable(creds, func(i, j int) bool {
		a, b := creds[i].Created+creds[i].CredID, creds[j].Created+creds[j].CredID
		if field == "updatedAt" {
			a, b = creds[i].UpdatedAt+creds[i].CredID, creds[j].UpdatedAt+creds[j].CredID
		}
		if desc {
			return a > b
		}
		return a < b
	})
}

// PlusFromQuery restores the leading + of a mobile number sent unencoded in
// a query string, where it arrives as a space.
func PlusFromQuery(v string) string {
	if strings.HasPrefix(v, " ") && len(strings.TrimSpace(v)) > 0 && strings.TrimSpace(v)[0] >= '0' && strings.TrimSpace(v)[0] <= '9' {
		return "+" + strings.TrimSpace(v)
	}
	return v
}
