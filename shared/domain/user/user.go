// Package user is the identity domain: users, their credentials, sessions and
// guests. It holds the types, their validation, the DynamoDB store (the only
// place that builds this domain's keys), the service and the HTTP handlers of
// the accounts, users and avatars functions.
package user

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/loyalty-platform/platform/shared/domain/money"
	"github.com/loyalty-platform/platform/shared/domain/profile"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/auth"
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

// Sentinel errors of the identity domain.
var (
	ErrNotFound          = apierr.New(apierr.NotFound, "user not found")
	ErrCredentialExists  = apierr.New(apierr.CredentialExists, "a user with this credential already exists")
	ErrAlreadyActive     = apierr.New(apierr.AlreadyActive, "the user is already active")
	ErrInvalidToken      = apierr.New(apierr.InvalidToken, "the token is invalid")
	ErrTokenVoided       = apierr.New(apierr.InvalidToken, "too many wrong codes: request a new code")
	ErrUserPending       = apierr.New(apierr.UserPending, "the user has not been activated")
	ErrBadLogin          = apierr.New(apierr.Unauthorized, "wrong credential or password")
	ErrPendingLogin      = apierr.New(apierr.Unauthorized, "the user has not been activated")
	ErrBadSession        = auth.ErrBadSession
	ErrBadServiceKey     = auth.ErrBadServiceKey
	ErrUnknownTenant     = auth.ErrUnknownTenant
	ErrDeviceTaken       = apierr.New(apierr.DeviceTaken, "this device already has an account")
	ErrSocialUnsupported = apierr.New(apierr.ValidationFailed, "credentials.provider: FACEBOOK and TWITTER sign-in are not supported; use GOOGLE, APPLE, EMAIL or MOBILE")
	ErrConcurrentUpdate  = apierr.New(apierr.Conflict, "the user was changed by another request; retry")
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
	Balance                          money.Amount   `json:"balance"`
	UpdatedAt                        string         `json:"updatedAt"`
	Created                          string         `json:"created"`
	Deleted                          bool           `json:"deleted"`

	// Extras returned only through include.
	FavouriteLocations *[]string       `json:"favouriteLocations,omitempty"`
	FavouriteProducts  *[]string       `json:"favouriteProducts,omitempty"`
	Extended           *map[string]any `json:"extended,omitempty"`
	Points             *int            `json:"points,omitempty"`
	Credentials        *[]Credential   `json:"credentials,omitempty"`
	Checkin            *any            `json:"checkin,omitempty"`
	SegmentIDs         *[]string       `json:"segmentIds,omitempty"`
	Segments           *[]SegmentRef   `json:"segments,omitempty"`
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

// CredentialInput is a credential-create object inside a user or guest create
// body.
type CredentialInput struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
	Token    string `json:"token,omitempty"`
}

// CreateInput is the body of POST /users and POST /guests.
type CreateInput struct {
	FirstName                   string            `json:"firstName"`
	LastName                    string            `json:"lastName"`
	FullName                    string            `json:"fullName"`
	Credentials                 []CredentialInput `json:"credentials"`
	Password                    string            `json:"password"`
	HasAgreedToShareData        bool              `json:"hasAgreedToShareData"`
	HasAgreedToReceiveMarketing bool              `json:"hasAgreedToReceiveMarketing"`
	Birthdate                   string            `json:"birthdate"`
	Gender                      string            `json:"gender"`
	// Roles may be set only by an admin; anonymous callers get USER.
	Roles []string `json:"roles"`
}

var (
	roleNames = map[string]bool{"USER": true, "ADMIN": true}
)

// socialProviders are the social-login credential providers the API names.
// GOOGLE and APPLE are verified as OpenID Connect ID tokens (oidcProviders);
// the others have no token verification and are refused.
var socialProviders = map[string]bool{"FACEBOOK": true, "GOOGLE": true, "APPLE": true, "TWITTER": true}

// oidcProviders maps a social credential provider to its SSO provider.
var oidcProviders = map[string]string{"GOOGLE": "google", "APPLE": "apple"}

// NormalizeCredential returns the canonical form of a credential identifier:
// e-mail addresses lower-cased, mobile numbers without spaces, dashes, dots
// or brackets.
func NormalizeCredential(provider, id string) (string, error) {
	return profile.NormalizeCredential(provider, id)
}

// credField names field of the i-th credential of a create body.
func credField(i int, field string) string { return fmt.Sprintf("credentials[%d].%s", i, field) }

// atCredential re-points a "credentials.<field>" validation error at the
// i-th credential of a create body.
func atCredential(i int, err error) error {
	var e *apierr.Error
	if errors.As(err, &e) {
		if f, ok := strings.CutPrefix(e.Field, "credentials."); ok {
			return apierr.Invalid(credField(i, f), "%s", strings.TrimPrefix(e.Message, e.Field+": "))
		}
	}
	return err
}

// ProviderFor guesses the provider of a bare identifier (activation and
// reset bodies carry only the id): an e-mail address has an @.
func ProviderFor(id string) string {
	if strings.Contains(id, "@") {
		return ProviderEmail
	}
	return ProviderMobile
}

// Validate checks a create body. guest relaxes the required fields: a guest
// may have no names and no credentials.
func (in *CreateInput) Validate(guest bool) error {
	in.FirstName = strings.TrimSpace(in.FirstName)
	in.LastName = strings.TrimSpace(in.LastName)
	in.FullName = strings.TrimSpace(in.FullName)
	if !guest {
		if in.FirstName == "" {
			return apierr.Invalid("firstName", "is required")
		}
		if in.LastName == "" {
			return apierr.Invalid("lastName", "is required")
		}
		if len(in.Credentials) == 0 {
			return apierr.Invalid("credentials", "at least one credential is required")
		}
	}
	if err := CheckName("firstName", in.FirstName); err != nil {
		return err
	}
	if err := CheckName("lastName", in.LastName); err != nil {
		return err
	}
	if err := CheckName("fullName", in.FullName); err != nil {
		return err
	}
	if len(in.Credentials) > 5 {
		return apierr.Invalid("credentials", "at most 5 credentials")
	}
	seen := map[string]bool{}
	for i := range in.Credentials {
		c := &in.Credentials[i]
		c.Provider = strings.ToUpper(strings.TrimSpace(c.Provider))
		if c.Provider == "" {
			c.Provider = ProviderMobile
		}
		if socialProviders[c.Provider] {
			if oidcProviders[c.Provider] == "" {
				return ErrSocialUnsupported
			}
			c.ID = strings.TrimSpace(c.ID)
			if c.ID == "" || len(c.ID) > 255 {
				return apierr.Invalid(credField(i, "id"), "the provider's user id is required (at most 255 characters)")
			}
			if strings.TrimSpace(c.Token) == "" {
				return apierr.Invalid(credField(i, "token"), "the provider's ID token is required for a %s credential", c.Provider)
			}
			if seen[c.Provider+c.ID] {
				return apierr.Invalid("credentials", "the same credential is listed twice")
			}
			seen[c.Provider+c.ID] = true
			continue
		}
		id, err := NormalizeCredential(c.Provider, c.ID)
		if err != nil {
			return atCredential(i, err)
		}
		c.ID = id
		if seen[c.Provider+id] {
			return apierr.Invalid("credentials", "the same credential is listed twice")
		}
		seen[c.Provider+id] = true
	}
	if in.Password != "" {
		if err := checkPassword(in.Password); err != nil {
			return err
		}
	}
	if err := CheckBirthdate(in.Birthdate); err != nil {
		return err
	}
	if in.Gender != "" && in.Gender != "FEMALE" && in.Gender != "MALE" {
		return apierr.Invalid("gender", "must be FEMALE or MALE")
	}
	return CheckRoles(in.Roles)
}

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

// ErrPasswordTooCommon refuses a new password found in the list of common
// and breached passwords (422). The message never repeats the password.
var ErrPasswordTooCommon = &apierr.Error{Code: apierr.PasswordTooCommon, Field: "password",
	Message: "password: matches the list of the most common passwords (drawn from lists of leaked passwords), so it may be easy to guess; choose another"}

// checkPassword checks a new password (sign-up and reset; a password is
// changed only by a reset): 8 to 128 characters and not a common password.
func checkPassword(p string) error {
	if len(p) < 8 || len(p) > 128 {
		return apierr.Invalid("password", "must be 8 to 128 characters")
	}
	if isCommonPassword(p) {
		return ErrPasswordTooCommon
	}
	return nil
}

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
