package user

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/allowance"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/geo"
	"github.com/loyalty-platform/platform/shared/platform/hook"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Lifetimes of sessions and codes.
const (
	// DefaultSessionLifetime is the lifetime of a non-permanent user
	// session unless the tenant's settings.sessionHours says otherwise.
	DefaultSessionLifetime = 30 * 24 * time.Hour
	// AdminSessionLifetime is the lifetime of an admin session made with
	// POST /sessions.
	AdminSessionLifetime = 12 * time.Hour
	// GuestLifetime is how long a guest user, its credentials and its
	// session live unless converted into a full user.
	GuestLifetime = time.Hour
	// ResetLifetime is how long a password reset code is valid.
	ResetLifetime = time.Hour
	// MaxCodeAttempts is how many wrong codes void an activation or reset
	// code until a new one is requested.
	MaxCodeAttempts = 5
)

// Photos stores profile photos by key: the media bucket in S3
// (blob.Photos), so that this package links no S3 client.
type Photos interface {
	// PutJPEG stores a JPEG image under key, replacing any.
	PutJPEG(ctx context.Context, key string, jpeg []byte) error
	// Delete removes the object at key; a missing object is no error.
	Delete(ctx context.Context, key string) error
}

// Verifier checks a third-party ID token of an SSO provider for one of
// the audiences (sso.Verifier), so that this package links no OpenID
// Connect client.
type Verifier interface {
	Verify(ctx context.Context, provider, rawIDToken string, audiences []string) (sso.Identity, error)
}

// Service runs the identity domain's operations.
type Service struct {
	DB       ddb.API
	Tables   ddb.Tables
	Tenants  *tenant.Store
	Clock    clock.Clock
	Notifier notify.Notifier
	Pusher   notify.Pusher
	Cursor   ddb.Cursor
	// SSO verifies third-party ID tokens (SSO and social credentials);
	// nil in a function that serves no route needing it.
	SSO Verifier
	// Geocoder serves address suggestions and coordinates.
	Geocoder geo.Geocoder
	// Photos stores the profile photos (nil in a function that serves
	// none of the routes that write or delete them); MediaURL is where
	// they are served.
	Photos   Photos
	MediaURL string
	// Includes supply the include options owned by other domains (nil:
	// empty).
	Includes Includes
	// OnDeleted runs once a user is deleted (see events.go).
	OnDeleted hook.After[Deleted]
	// Actions records USER_CREATED and USER_ACTIVATED (nil: none).
	Actions *action.Recorder
	// Allowance counts the anonymous sign-ups and code requests of each
	// client address, at most AnonymousPerMinute a minute (nil: no
	// allowance).
	Allowance          *allowance.Counter
	AnonymousPerMinute int
	// Caps bound the codes each tenant sends an hour (nil: no caps).
	Caps *notify.Caps
}

func (s *Service) st() *store {
	return &store{db: s.DB, users: s.Tables.Users, sessions: s.Tables.Sessions}
}

// CreateOptions are the query and header options of POST /users.
type CreateOptions struct {
	AutoActivate bool
	Platform     string
	// DeviceIDAndroid and DeviceIDIOS are the uniqueDeviceId* query
	// parameters; DeviceID is the one that matches Platform.
	DeviceIDAndroid string
	DeviceIDIOS     string
	DeviceID        string
}

// deviceOption checks the device options when the tenant allows one account
// per device: x-client-platform and the matching uniqueDeviceId* parameter
// are then required, and the other platform's parameter is refused.
func deviceOption(opt *CreateOptions, perDevice bool) error {
	switch opt.Platform {
	case PlatformAndroid:
		opt.DeviceID = opt.DeviceIDAndroid
		if opt.DeviceIDIOS != "" {
			return apierr.Invalid("uniqueDeviceIdIOS", "does not match x-client-platform ANDROID")
		}
	case PlatformIOS:
		opt.DeviceID = opt.DeviceIDIOS
		if opt.DeviceIDAndroid != "" {
			return apierr.Invalid("uniqueDeviceIdAndroid", "does not match x-client-platform IOS")
		}
	}
	if len(opt.DeviceID) > 200 {
		return apierr.Invalid("uniqueDeviceId", "is too long")
	}
	if !perDevice {
		return nil
	}
	if opt.Platform == "" {
		return web.InvalidHeader(web.HeaderPlatform, "is required (IOS or ANDROID): this application allows one account per device")
	}
	if opt.DeviceID == "" {
		name := "uniqueDeviceIdIOS"
		if opt.Platform == PlatformAndroid {
			name = "uniqueDeviceIdAndroid"
		}
		return apierr.Invalid(name, "is required: this application allows one account per device")
	}
	return nil
}

// Create registers a user (POST /users). A guest caller is converted into a
// full user with the same id.
func (s *Service) Create(ctx context.Context, caller web.Caller, in CreateInput, opt CreateOptions) (User, error) {
	if err := in.Validate(false); err != nil {
		return User{}, err
	}
	if opt.AutoActivate && !caller.IsAdmin() {
		return User{}, fmt.Errorf("create user: %w", web.ErrAdminOnly("autoActivate"))
	}
	if len(in.Roles) > 0 && !caller.IsAdmin() && !slices.Equal(in.Roles, []string{web.RoleUser}) {
		return User{}, fmt.Errorf("create user: %w", web.ErrAdminOnly("roles"))
	}
	t, err := s.Tenants.Get(ctx, caller.TenantID)
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	if err := deviceOption(&opt, t.Settings.SingleAccountPerDevice); err != nil {
		return User{}, err
	}
	if !caller.IsAdmin() {
		// A number the tenant sends no text messages to cannot sign up:
		// it could get no activation or reset code.
		for i, c := range in.Credentials {
			if err := checkSMSCountry(t, c.Provider, c.ID, credField(i, "id")); err != nil {
				return User{}, err
			}
		}
	}
	now := s.Clock.Now()
	r, creds := s.newRecord(t, caller.TenantID, in, opt.Platform, now)
	// Social credentials are verified with their provider now; one that
	// passes makes an ACTIVE user.
	for i, c := range in.Credentials {
		if oidcProviders[c.Provider] == "" {
			continue
		}
		ident, err := s.verifySocial(ctx, t, c.Provider, c.Token, credField(i, "token"))
		if err != nil {
			return User{}, err
		}
		if ident.Subject != c.ID {
			return User{}, apierr.Invalid(credField(i, "id"), "does not match the subject of the provider's token")
		}
		creds[i].IsVerified = true
		r.State = StateActive
	}
	method := ActivatedBySocial
	if opt.AutoActivate {
		method = ActivatedByAdmin
		r.State = StateActive
		for i := range creds {
			creds[i].IsVerified = true
		}
	}
	if r.State == StatePending {
		r.ActivationCode = newCode(4)
		if first := creds[0]; codeSentOnCreate(first, caller) {
			// The sign-up code counts toward the hour's MaxCodeSends.
			r.CodeSends, r.CodeWindow = 1, now.Unix()
		}
	}
	var guest *record
	if caller.Guest && caller.UserID != "" {
		g, err := s.st().getUser(ctx, caller.TenantID, caller.UserID, now)
		if err != nil {
			return User{}, fmt.Errorf("convert guest: %w", err)
		}
		if !g.IsGuest {
			// Another request converted this guest meanwhile: the guest's
			// token must not register a second user.
			return User{}, fmt.Errorf("convert guest: %w", ErrConcurrentUpdate)
		}
		if g.IsGuest {
			guest = &g
			r.ID, r.Created, r.Version = g.ID, g.Created, g.Version+1
			r.Points = g.Points
			// The guest's app balance and its ledger's entry count go
			// with it (the entries stay in the same partition).
			r.Balance, r.MoneySeq = g.Balance, g.MoneySeq
			if r.PrimaryPlatform == PlatformUnknown {
				r.PrimaryPlatform = g.PrimaryPlatform
			}
			for i := range creds {
				creds[i].PK, creds[i].UserID = userPK(r.TenantID, r.ID), r.ID
			}
		}
	}
	r.setKeys()
	acts, err := s.actionItems(t, r, now, creationActions(r, creds[0], caller.IsAdmin(), guest != nil, method)...)
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	// The activation code counts against the tenant's hourly cap before
	// anything is written, so that a refused sign-up leaves nothing behind.
	var res notify.Reservation
	if first := creds[0]; r.ActivationCode != "" && codeSentOnCreate(first, caller) {
		if res, err = s.reserveCode(ctx, t, first.Provider, first.Identifier, credField(0, "id")); err != nil {
			return User{}, err
		}
	}
	if err := s.writeNewUser(ctx, r, guest, creds, t.Settings.SingleAccountPerDevice, opt, now, acts...); err != nil {
		s.cancelCode(ctx, res, err)
		return User{}, err
	}
	if guest != nil {
		if _, err := s.st().deleteSessions(ctx, r.TenantID, r.ID); err != nil {
			return User{}, err
		}
	}
	// MOBILE codes go by SMS unless an admin created the user; EMAIL codes
	// always go by e-mail.
	if r.ActivationCode != "" {
		if first := creds[0]; codeSentOnCreate(first, caller) {
			s.sendCode(ctx, r.TenantID, first, "Your activation code", "Your activation code is "+r.ActivationCode)
		}
	}
	return s.view(ctx, r, caller, nil)
}

// codeSentOnCreate reports whether creating a PENDING user with first as
// its first credential sends the activation code: MOBILE codes go by SMS
// unless an admin created the user, EMAIL codes always go by e-mail.
func codeSentOnCreate(first credRecord, caller web.Caller) bool {
	return oidcProviders[first.Provider] == "" && (first.Provider == ProviderEmail || !caller.IsAdmin())
}

// newRecord builds a new PENDING user and its primary credentials from a
// create body.
func (s *Service) newRecord(t tenant.Tenant, tenantID string, in CreateInput, platform string, now time.Time) (record, []credRecord) {
	r := record{
		ID:                          newID(),
		TenantID:                    tenantID,
		FirstName:                   in.FirstName,
		LastName:                    in.LastName,
		FullName:                    fullName(in.FullName, in.FirstName, in.LastName),
		State:                       StatePending,
		Roles:                       []string{web.RoleUser},
		Birthdate:                   in.Birthdate,
		Gender:                      in.Gender,
		PrimaryPlatform:             platformOrUnknown(platform),
		HasAgreedToShareData:        in.HasAgreedToShareData,
		HasAgreedToReceiveMarketing: in.HasAgreedToReceiveMarketing,
		Points:                      t.Settings.InitialPoints,
		Created:                     clock.Stamp(now),
		UpdatedAt:                   clock.Stamp(now),
		Version:                     1,
	}
	if len(in.Roles) > 0 {
		r.Roles = in.Roles
	}
	if in.Password != "" {
		r.PasswordHash = HashPassword(in.Password)
	}
	r.NameWords = nameWords(r.FullName)
	r.setKeys()
	creds := make([]credRecord, len(in.Credentials))
	for i, c := range in.Credentials {
		creds[i] = credRecord{
			PK: r.PK, SK: credSK(c.Provider, c.ID), CredID: newID(), UserID: r.ID,
			Identifier: c.ID, Provider: c.Provider, IsPrimary: true,
			Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now),
		}.indexed(tenantID)
	}
	return r, creds
}

// writeNewUser stores a new (or converted guest) user atomically with its
// credentials, their uniqueness items, its name-search entries, its device
// binding and the actions acts.
func (s *Service) writeNewUser(ctx context.Context, r record, guest *record, creds []credRecord, perDevice bool, opt CreateOptions, now time.Time, acts ...types.TransactWriteItem) error {
	st := s.st()
	var items []types.TransactWriteItem
	kinds := []string{}
	add := func(kind string, it types.TransactWriteItem, err error) error {
		if err != nil {
			return fmt.Errorf("create user: %w", err)
		}
		items = append(items, it)
		kinds = append(kinds, kind)
		return nil
	}
	userCond := aws.String("attribute_not_exists(pk)")
	var userVals map[string]types.AttributeValue
	if guest != nil {
		// A change of the guest's app balance since it was read (which
		// counts its ledger's entries, moneySeq) fails the conversion.
		userCond = aws.String("isGuest = :true AND version = :v AND (attribute_not_exists(moneySeq) OR moneySeq = :ms)")
		userVals = map[string]types.AttributeValue{
			":true": &types.AttributeValueMemberBOOL{Value: true}, ":v": &types.AttributeValueMemberN{Value: fmt.Sprint(guest.Version)},
			":ms": &types.AttributeValueMemberN{Value: fmt.Sprint(guest.MoneySeq)},
		}
	}
	it, err := st.put(st.users, r, userCond)
	if err == nil && userVals != nil {
		it.Put.ExpressionAttributeValues = userVals
	}
	if err := add("user", it, err); err != nil {
		return err
	}
	newCreds := map[string]bool{}
	for _, c := range creds {
		newCreds[c.SK] = true
		it, err := st.put(st.users, c, nil)
		if err := add("cred", it, err); err != nil {
			return err
		}
		it, err = st.putIfFree(credIndex{PK: credIndexPK(r.TenantID, c.Provider, c.Identifier), SK: skCredID, UserID: r.ID, Provider: c.Provider, Identifier: c.Identifier}, r.ID, now)
		if err := add("credindex", it, err); err != nil {
			return err
		}
	}
	newWords := map[string]bool{}
	for _, w := range r.NameWords {
		newWords[w] = true
		it, err := st.put(st.users, nameEntry{PK: r.PK, SK: nameSK(w), GSI1PK: namesPK(r.TenantID), GSI1SK: w + "#" + r.ID, UserID: r.ID}, nil)
		if err := add("name", it, err); err != nil {
			return err
		}
	}
	if guest != nil {
		old, err := st.credentials(ctx, r.TenantID, r.ID, time.Unix(0, 0))
		if err != nil {
			return err
		}
		for _, c := range old {
			if newCreds[c.SK] {
				continue
			}
			items = append(items,
				types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.users), Key: key(c.PK, c.SK)}},
				types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.users), Key: key(credIndexPK(r.TenantID, c.Provider, c.Identifier), skCredID)}})
			kinds = append(kinds, "old", "old")
		}
		for _, w := range guest.NameWords {
			if !newWords[w] {
				items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.users), Key: key(r.PK, nameSK(w))}})
				kinds = append(kinds, "old")
			}
		}
	}
	if perDevice && opt.DeviceID != "" && opt.Platform != "" {
		r.DeviceKey = devicePK(r.TenantID, opt.Platform, opt.DeviceID)
		items[0].Put.Item["deviceKey"] = &types.AttributeValueMemberS{Value: r.DeviceKey}
		it, err := st.put(st.users, deviceEntry{PK: devicePK(r.TenantID, opt.Platform, opt.DeviceID), SK: skDevice, UserID: r.ID}, aws.String("attribute_not_exists(pk) OR userId = :uid"))
		if err == nil {
			it.Put.ExpressionAttributeValues = map[string]types.AttributeValue{":uid": &types.AttributeValueMemberS{Value: r.ID}}
		}
		if err := add("device", it, err); err != nil {
			return err
		}
	}
	for _, it := range acts {
		items = append(items, it)
		kinds = append(kinds, "action")
	}
	err = st.transact(ctx, items)
	if err == nil {
		return nil
	}
	for _, i := range failedAt(err) {
		switch kinds[i] {
		case "credindex":
			return fmt.Errorf("create user: %w", ErrCredentialExists)
		case "device":
			return fmt.Errorf("create user: %w", ErrDeviceTaken)
		case "user":
			if guest != nil {
				return fmt.Errorf("convert guest: %w", ErrConcurrentUpdate)
			}
		}
	}
	return fmt.Errorf("create user: %w", err)
}

// CreateGuest makes a guest user and its one-hour session (POST /guests).
func (s *Service) CreateGuest(ctx context.Context, caller web.Caller, in CreateInput, platform string) (Session, error) {
	if err := in.Validate(true); err != nil {
		return Session{}, err
	}
	if len(in.Roles) > 0 {
		return Session{}, apierr.Invalid("roles", "a guest is always a USER")
	}
	if in.Password != "" {
		return Session{}, apierr.Invalid("password", "a guest has no password; create a full user to set one")
	}
	t, err := s.Tenants.Get(ctx, caller.TenantID)
	if err != nil {
		return Session{}, fmt.Errorf("create guest: %w", err)
	}
	// A guest's social credential is verified like a full user's, or anyone
	// could hold another person's provider id for an hour.
	for i, c := range in.Credentials {
		if oidcProviders[c.Provider] == "" {
			continue
		}
		ident, err := s.verifySocial(ctx, t, c.Provider, c.Token, credField(i, "token"))
		if err != nil {
			return Session{}, err
		}
		if ident.Subject != c.ID {
			return Session{}, apierr.Invalid(credField(i, "id"), "does not match the subject of the provider's token")
		}
	}
	now := s.Clock.Now()
	exp := now.Add(GuestLifetime).Unix()
	r := record{
		ID: newID(), TenantID: caller.TenantID, FirstName: in.FirstName, LastName: in.LastName,
		FullName: fullName(in.FullName, in.FirstName, in.LastName), State: StateActive, IsGuest: true,
		Roles: []string{web.RoleUser}, Birthdate: in.Birthdate, Gender: in.Gender,
		PrimaryPlatform: platformOrUnknown(platform), HasAgreedToShareData: in.HasAgreedToShareData,
		HasAgreedToReceiveMarketing: in.HasAgreedToReceiveMarketing, Points: t.Settings.InitialPoints,
		Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now), Version: 1, ExpiresAt: exp,
	}
	r.NameWords = nameWords(r.FullName)
	r.setKeys()
	st := s.st()
	var items []types.TransactWriteItem
	it, err := st.put(st.users, r, aws.String("attribute_not_exists(pk)"))
	if err != nil {
		return Session{}, fmt.Errorf("create guest: %w", err)
	}
	items = append(items, it)
	for _, c := range in.Credentials {
		cr := credRecord{PK: r.PK, SK: credSK(c.Provider, c.ID), CredID: newID(), UserID: r.ID, Identifier: c.ID, Provider: c.Provider, IsPrimary: true, Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now), ExpiresAt: exp}.indexed(r.TenantID)
		it1, err1 := st.put(st.users, cr, nil)
		it2, err2 := st.putIfFree(credIndex{PK: credIndexPK(r.TenantID, c.Provider, c.ID), SK: skCredID, UserID: r.ID, Provider: c.Provider, Identifier: c.ID, ExpiresAt: exp}, r.ID, now)
		if err := errors.Join(err1, err2); err != nil {
			return Session{}, fmt.Errorf("create guest: %w", err)
		}
		items = append(items, it1, it2)
	}
	for _, w := range r.NameWords {
		it, err := st.put(st.users, nameEntry{PK: r.PK, SK: nameSK(w), GSI1PK: namesPK(r.TenantID), GSI1SK: w + "#" + r.ID, UserID: r.ID, ExpiresAt: exp}, nil)
		if err != nil {
			return Session{}, fmt.Errorf("create guest: %w", err)
		}
		items = append(items, it)
	}
	if err := st.transact(ctx, items); err != nil {
		if len(failedAt(err)) > 0 {
			return Session{}, fmt.Errorf("create guest: %w", ErrCredentialExists)
		}
		return Session{}, fmt.Errorf("create guest: %w", err)
	}
	return s.newSession(ctx, r, t, false, now.Add(GuestLifetime))
}

func platformOrUnknown(p string) string {
	if p == "" {
		return PlatformUnknown
	}
	return p
}

// ParsePlatform validates an x-client-platform header value.
func ParsePlatform(v string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "":
		return "", nil
	case PlatformIOS:
		return PlatformIOS, nil
	case PlatformAndroid:
		return PlatformAndroid, nil
	default:
		return "", web.InvalidHeader(web.HeaderPlatform, "must be IOS or ANDROID")
	}
}

func (s *Service) sendCode(ctx context.Context, tenantID string, c credRecord, subject, text string) {
	ch := channelOf(c.Provider)
	if err := s.Notifier.Send(ctx, notify.Message{TenantID: tenantID, Channel: ch, To: c.Identifier, Subject: subject, Text: text}); err != nil {
		web.Logger(ctx).Error("send code failed", "error", err.Error(), "channel", string(ch))
	}
}
