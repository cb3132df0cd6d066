// Package user is the core of the users domain, which three functions
// serve, each through a part of the domain built on this core: the
// accounts function (shared/domain/account: signing up and in), the users
// function (shared/domain/directory: the user directory, the record and
// its addresses) and the avatars function (shared/domain/avatar: the
// profile photo, deleting a user). The core holds what all three need:
// the user's API types and their checks, the stored user record and its
// DynamoDB store (the keys of the user's items), the user's API view with
// its include options, the changes every part makes to the record, and
// the domain's events. Other domains read users through the small
// shared/domain/profile instead.
package user

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// User states.
const (
	StateActive  = "ACTIVE"
	StatePending = "PENDING"
)

// Credential providers.
const (
	ProviderEmail  = profile.ProviderEmail
	ProviderMobile = profile.ProviderMobile
)

// Platforms of x-client-platform and User.primaryPlatform.
const (
	PlatformUnknown = "UNKNOWN"
	PlatformIOS     = "IOS"
	PlatformAndroid = "ANDROID"
)

// Sentinel errors every part of the users domain answers.
var (
	ErrNotFound         = apierr.New(apierr.NotFound, "user not found")
	ErrConcurrentUpdate = apierr.New(apierr.Conflict, "the user was changed by another request; retry")
)

// User is a customer (or admin) of a tenant, as the API returns it.
// Optional fields only requested through `include` are pointers, so that an
// included extra that is still empty shows as [] or {} rather than missing.
type User struct {
	ID                               string         `json:"id"`
	TenantID                         string         `json:"tenantId"`
	FirstName                        string         `json:"firstName"`
	LastName                         string         `json:"lastName"`
	FullName                         string         `json:"fullName"`
	State                            string         `json:"state"`
	IsGuest                          bool           `json:"isGuest"`
	Roles                            []string       `json:"roles"`
	Subscribed                       bool           `json:"subscribed"`
	Birthdate                        string         `json:"birthdate,omitempty"`
	Gender                           string         `json:"gender,omitempty"`
	Tokens                           *Tokens        `json:"tokens,omitempty"`
	DefaultTip                       *Tip           `json:"defaultTip,omitempty"`
	PrimaryPlatform                  string         `json:"primaryPlatform"`
	Contacts                         map[string]any `json:"contacts,omitempty"`
	AdditionalInformation            []NameValue    `json:"additionalInformation"`
	Card                             map[string]any `json:"card,omitempty"`
	HasPaymentCard                   bool           `json:"hasPaymentCard"`
	HasProfilePhoto                  bool           `json:"hasProfilePhoto"`
	ProfilePhotoURL                  string         `json:"profilePhotoUrl,omitempty"`
	IsRegisteredForPushNotifications bool           `json:"isRegisteredForPushNotifications"`
	HasAgreedToShareData             bool           `json:"hasAgreedToShareData"`
	HasAgreedToReceiveMarketing      bool           `json:"hasAgreedToReceiveMarketing"`
	ExternalPosID                    string         `json:"externalPosId,omitempty"`
	ExternalLoyaltyID                string         `json:"externalLoyaltyId,omitempty"`
	// Metadata is the tenant's own fields on the user, absent when none
	// (set by an admin: PUT /users/{userId}).
	Metadata  map[string]string `json:"metadata,omitempty"`
	Balance   money.Amount      `json:"balance"`
	UpdatedAt string            `json:"updatedAt"`
	Created   string            `json:"created"`
	Deleted   bool              `json:"deleted"`

	// Extras returned only through include.
	FavouriteLocations *[]string       `json:"favouriteLocations,omitempty"`
	FavouriteProducts  *[]string       `json:"favouriteProducts,omitempty"`
	Extended           *map[string]any `json:"extended,omitempty"`
	Points             *int            `json:"points,omitempty"`
	Credentials        *[]Credential   `json:"credentials,omitempty"`
	Checkin            *any            `json:"checkin,omitempty"`
	SegmentIDs         *[]string       `json:"segmentIds,omitempty"`
	Segments           *[]SegmentRef   `json:"segments,omitempty"`
	Awards             *[]AwardSummary `json:"awards,omitempty"`
}

// Tokens are a user's pending codes; only admins see them.
type Tokens struct {
	Activation string `json:"activation,omitempty"`
	Reset      string `json:"reset,omitempty"`
}

// Tip is a user's default tip.
type Tip struct {
	Scheme string  `json:"scheme" dynamodbav:"scheme"`
	Amount float64 `json:"amount" dynamodbav:"amount"`
}

// NameValue is one display-formatted item of additionalInformation.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// SegmentRef is a segment as listed on a single user with include=segments.
type SegmentRef struct {
	ID       string `json:"_id"`
	Title    string `json:"title"`
	Included bool   `json:"included"`
}

// AwardSummary is an award as listed on a single user with
// include=awards: enough for a till to show what the user holds without
// a second request.
type AwardSummary struct {
	ID              string `json:"_id"`
	PerkID          string `json:"perkId"`
	Title           string `json:"title"`
	Template        string `json:"template"`
	PointsAvailable int    `json:"pointsAvailable"`
	// NextExpiry is the soonest of the award's expiries, nil when none
	// of its points expire.
	NextExpiry *Expiry `json:"nextExpiry"`
}

// Expiry is points of an award that expire at one instant.
type Expiry struct {
	Points    int    `json:"points"`
	ExpiresAt string `json:"expiresAt"`
}

// Credential is an identifier a user is known by.
type Credential struct {
	ID         string `json:"_id"`
	UserID     string `json:"userId,omitempty"`
	Identifier string `json:"id"`
	Provider   string `json:"provider"`
	IsVerified bool   `json:"isVerified"`
	IsPrimary  bool   `json:"isPrimary"`
	Created    string `json:"created,omitempty"`
	UpdatedAt  string `json:"updatedAt,omitempty"`
}

// NormalizeCredential returns the canonical form of a credential identifier:
// e-mail addresses lower-cased, mobile numbers without spaces, dashes, dots
// or brackets.
func NormalizeCredential(provider, id string) (string, error) {
	return profile.NormalizeCredential(provider, id)
}

// roleNames are the roles a user may hold.
var roleNames = map[string]bool{"USER": true, "ADMIN": true}

// CheckRoles refuses a role list the document does not allow: a role other
// than USER or ADMIN, a role named twice, or more than the two roles there
// are.
func CheckRoles(roles []string) error {
	if len(roles) > len(roleNames) {
		return apierr.Invalid("roles", "must hold at most 2 roles (USER, ADMIN)")
	}
	for i, r := range roles {
		if !roleNames[r] {
			return apierr.Invalid("roles", "each role must be USER or ADMIN")
		}
		if slices.Contains(roles[:i], r) {
			return apierr.Invalid("roles", "each role may be named once")
		}
	}
	return nil
}

// CheckName checks a name field: at most 100 characters, no control
// characters.
func CheckName(field, v string) error {
	if len(v) > 100 {
		return apierr.Invalid(field, "must be at most 100 characters")
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return apierr.Invalid(field, "must not contain control characters")
		}
	}
	return nil
}

// CheckBirthdate checks a birthdate: empty, or a YYYY-MM-DD date from
// 1900 to today.
func CheckBirthdate(b string) error {
	if b == "" {
		return nil
	}
	t, err := time.Parse("2006-01-02", b)
	if err != nil {
		return apierr.Invalid("birthdate", "must be a date in the form YYYY-MM-DD")
	}
	if t.Year() < 1900 || t.After(time.Now()) {
		return apierr.Invalid("birthdate", "must be a date between 1900-01-01 and today")
	}
	return nil
}

// FullName returns the given full name, or first and last joined.
func FullName(full, first, last string) string {
	if full != "" {
		return full
	}
	return strings.TrimSpace(first + " " + last)
}

// NameWords returns the distinct lower-cased words of a full name; name
// search matches a prefix of any of them.
func NameWords(full string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(full), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !seen[w] && len(w) <= 60 {
			seen[w] = true
			out = append(out, w)
		}
	}
	if len(out) > 10 {
		out = out[:10]
	}
	return out
}

// additionalInformation formats the display items of a user.
func additionalInformation(birthdate string, tip *Tip, favouriteProducts []string) []NameValue {
	out := []NameValue{}
	if birthdate != "" {
		if t, err := time.Parse("2006-01-02", birthdate); err == nil {
			out = append(out, NameValue{Name: "birthdate", Value: t.Format("2 January 2006")})
		}
	}
	if len(favouriteProducts) > 0 {
		out = append(out, NameValue{Name: "favouriteProducts", Value: strings.Join(favouriteProducts, ", ")})
	}
	if tip != nil {
		v := fmt.Sprintf("%.2f", tip.Amount)
		if tip.Scheme == "PERCENTAGE" {
			v = strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", tip.Amount), "0"), ".0") + "%"
			v = strings.Replace(v, ".%", "%", 1)
		}
		out = append(out, NameValue{Name: "defaultTip", Value: v})
	}
	return out
}
