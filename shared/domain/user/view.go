package user

import (
	"context"
	"slices"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Include options of GET /users/{userId} (and of the lists).
var includeOptions = map[string]string{
	"favouritelocations": "favouriteLocations",
	"favouriteproducts":  "favouriteProducts",
	"extended":           "extended",
	"points":             "points",
	"credentials":        "credentials",
	"checkin":            "checkin",
	"segmentids":         "segmentIds",
	"segments":           "segments",
	"awards":             "awards",
}

// ParseInclude reads the include parameter (a comma list, possibly
// repeated); an unknown option is 422.
func ParseInclude(values []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			name, ok := includeOptions[strings.ToLower(p)]
			if !ok {
				return nil, apierr.Invalid("include", "unknown option %q", p)
			}
			out[name] = true
		}
	}
	return out, nil
}

// AvatarKey is the media bucket key of a user's profile photo.
func AvatarKey(userID string) string { return "users/avatars/" + userID + ".jpg" }

// AvatarURL returns where a user's profile photo is served.
func (s *Service) AvatarURL(userID string) string {
	return strings.TrimSuffix(s.mediaURL, "/") + "/" + AvatarKey(userID)
}

// View turns a stored user into its API form for caller.
func (s *Service) View(ctx context.Context, r Record, caller actor.Actor, include map[string]bool) (User, error) {
	u := User{
		ID: r.ID, TenantID: r.TenantID, FirstName: r.FirstName, LastName: r.LastName, FullName: r.FullName,
		State: r.State, IsGuest: r.IsGuest, Roles: r.Roles, Subscribed: r.Subscribed, Birthdate: r.Birthdate,
		Gender: r.Gender, DefaultTip: r.DefaultTip, PrimaryPlatform: PlatformOrUnknown(r.PrimaryPlatform),
		Contacts: r.Contacts, Card: r.Card, HasPaymentCard: r.HasPaymentCard, HasProfilePhoto: r.HasProfilePhoto,
		IsRegisteredForPushNotifications: len(r.PushEndpoints) > 0,
		HasAgreedToShareData:             r.HasAgreedToShareData, HasAgreedToReceiveMarketing: r.HasAgreedToReceiveMarketing,
		ExternalPosID: r.ExternalPosID, ExternalLoyaltyID: r.ExternalLoyaltyID, Metadata: r.Metadata, Balance: r.Balance,
		UpdatedAt: r.UpdatedAt, Created: r.Created, Deleted: r.Deleted,
		AdditionalInformation: additionalInformation(r.Birthdate, r.DefaultTip, r.FavouriteProducts),
	}
	if r.HasProfilePhoto {
		u.ProfilePhotoURL = s.AvatarURL(r.ID)
	}
	if u.Roles == nil {
		u.Roles = []string{}
	}
	if caller.IsAdmin() && (r.ActivationCode != "" || r.ResetCode != "") {
		u.Tokens = &Tokens{Activation: r.ActivationCode, Reset: r.ResetCode}
	}
	if include["favouriteLocations"] {
		v := nonNil(r.FavouriteLocations)
		u.FavouriteLocations = &v
	}
	if include["favouriteProducts"] {
		v := nonNil(r.FavouriteProducts)
		u.FavouriteProducts = &v
	}
	if include["extended"] {
		v := r.Extended
		if v == nil {
			v = map[string]any{}
		}
		u.Extended = &v
	}
	if include["points"] {
		v := r.Points
		if s.includes != nil {
			held, err := s.includes.Points(ctx, r.TenantID, r.ID)
			if err != nil {
				return User{}, err
			}
			v += held
		}
		u.Points = &v
	}
	if include["credentials"] {
		creds := slices.Clone(r.Creds)
		if r.Creds == nil {
			var err error
			if creds, err = s.st().Credentials(ctx, r.TenantID, r.ID, s.clock.Now()); err != nil {
				return User{}, err
			}
		}
		SortCredentials(creds, "created")
		v := make([]Credential, 0, len(creds))
		for _, c := range creds {
			v = append(v, c.View())
		}
		u.Credentials = &v
	}
	if include["checkin"] {
		var current any
		if s.includes != nil {
			c, err := s.includes.CurrentCheckin(ctx, r.TenantID, r.ID)
			if err != nil {
				return User{}, err
			}
			current = c
		}
		u.Checkin = &current
	}
	if include["segmentIds"] {
		v := []string{}
		if s.includes != nil {
			ids, err := s.includes.SegmentIDs(ctx, r.TenantID, r.ID)
			if err != nil {
				return User{}, err
			}
			v = append(v, ids...)
		}
		u.SegmentIDs = &v
	}
	if include["awards"] {
		v := []AwardSummary{}
		if s.includes != nil {
			held, err := s.includes.Awards(ctx, r.TenantID, r.ID)
			if err != nil {
				return User{}, err
			}
			v = append(v, held...)
		}
		u.Awards = &v
	}
	if include["segments"] {
		v := []SegmentRef{}
		if s.includes != nil {
			refs, err := s.includes.Segments(ctx, r.TenantID, r.ID)
			if err != nil {
				return User{}, err
			}
			v = append(v, refs...)
		}
		u.Segments = &v
	}
	return u, nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// Get returns one user (GET /users/{userId}).
func (s *Service) Get(ctx context.Context, caller actor.Actor, userID string, include map[string]bool) (User, error) {
	if err := caller.RequireUser(userID); err != nil {
		return User{}, err
	}
	r, err := s.st().GetUser(ctx, caller.TenantID, userID, s.clock.Now())
	if err != nil {
		return User{}, err
	}
	return s.View(ctx, r, caller, include)
}
