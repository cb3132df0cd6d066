package account

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/notify"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

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

// socialProviders are the social-login credential providers the API names.
// GOOGLE and APPLE are verified as OpenID Connect ID tokens (oidcProviders);
// the others have no token verification and are refused.
var socialProviders = map[string]bool{"FACEBOOK": true, "GOOGLE": true, "APPLE": true, "TWITTER": true}

// oidcProviders maps a social credential provider to its SSO provider.
var oidcProviders = map[string]string{"GOOGLE": "google", "APPLE": "apple"}

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
		return user.ProviderEmail
	}
	return user.ProviderMobile
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
	if err := user.CheckName("firstName", in.FirstName); err != nil {
		return err
	}
	if err := user.CheckName("lastName", in.LastName); err != nil {
		return err
	}
	if err := user.CheckName("fullName", in.FullName); err != nil {
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
			c.Provider = user.ProviderMobile
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
		id, err := user.NormalizeCredential(c.Provider, c.ID)
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
	if err := user.CheckBirthdate(in.Birthdate); err != nil {
		return err
	}
	if in.Gender != "" && in.Gender != "FEMALE" && in.Gender != "MALE" {
		return apierr.Invalid("gender", "must be FEMALE or MALE")
	}
	return user.CheckRoles(in.Roles)
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
	case user.PlatformAndroid:
		opt.DeviceID = opt.DeviceIDAndroid
		if opt.DeviceIDIOS != "" {
			return apierr.Invalid("uniqueDeviceIdIOS", "does not match x-client-platform ANDROID")
		}
	case user.PlatformIOS:
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
		if opt.Platform == user.PlatformAndroid {
			name = "uniqueDeviceIdAndroid"
		}
		return apierr.Invalid(name, "is required: this application allows one account per device")
	}
	return nil
}

// Create registers a user (POST /users). A guest caller is converted into a
// full user with the same id.
func (s *Service) Create(ctx context.Context, caller actor.Actor, in CreateInput, opt CreateOptions) (user.User, error) {
	if err := in.Validate(false); err != nil {
		return user.User{}, err
	}
	if opt.AutoActivate && !caller.IsAdmin() {
		return user.User{}, fmt.Errorf("create user: %w", web.ErrAdminOnly("autoActivate"))
	}
	if len(in.Roles) > 0 && !caller.IsAdmin() && !slices.Equal(in.Roles, []string{web.RoleUser}) {
		return user.User{}, fmt.Errorf("create user: %w", web.ErrAdminOnly("roles"))
	}
	t, err := s.Tenants.Get(ctx, caller.TenantID)
	if err != nil {
		return user.User{}, fmt.Errorf("create user: %w", err)
	}
	if err := deviceOption(&opt, t.Settings.SingleAccountPerDevice); err != nil {
		return user.User{}, err
	}
	if !caller.IsAdmin() {
		// A number the tenant sends no text messages to cannot sign up:
		// it could get no activation or reset code.
		for i, c := range in.Credentials {
			if err := checkSMSCountry(t, c.Provider, c.ID, credField(i, "id")); err != nil {
				return user.User{}, err
			}
		}
	}
	now := s.users.Now()
	r, creds := s.newRecord(t, caller.TenantID, in, opt.Platform, now)
	// Social credentials are verified with their provider now; one that
	// passes makes an ACTIVE user.
	for i, c := range in.Credentials {
		if oidcProviders[c.Provider] == "" {
			continue
		}
		ident, err := s.verifySocial(ctx, t, c.Provider, c.Token, credField(i, "token"))
		if err != nil {
			return user.User{}, err
		}
		if ident.Subject != c.ID {
			return user.User{}, apierr.Invalid(credField(i, "id"), "does not match the subject of the provider's token")
		}
		creds[i].IsVerified = true
		r.State = user.StateActive
	}
	method := user.ActivatedBySocial
	if opt.AutoActivate {
		method = user.ActivatedByAdmin
		r.State = user.StateActive
		for i := range creds {
			creds[i].IsVerified = true
		}
	}
	if r.State == user.StatePending {
		r.ActivationCode = newCode(4)
		if first := creds[0]; codeSentOnCreate(first, caller) {
			// The sign-up code counts toward the hour's MaxCodeSends.
			r.CodeSends, r.CodeWindow = 1, now.Unix()
		}
	}
	var guest *user.Record
	if caller.Guest && caller.UserID != "" {
		g, err := s.st().GetUser(ctx, caller.TenantID, caller.UserID, now)
		if err != nil {
			return user.User{}, fmt.Errorf("convert guest: %w", err)
		}
		if !g.IsGuest {
			// Another request converted this guest meanwhile: the guest's
			// token must not register a second user.
			return user.User{}, fmt.Errorf("convert guest: %w", user.ErrConcurrentUpdate)
		}
		if g.IsGuest {
			guest = &g
			r.ID, r.Created, r.Version = g.ID, g.Created, g.Version+1
			r.Points = g.Points
			// The guest's app balance and its ledger's entry count go
			// with it (the entries stay in the same partition).
			r.Balance, r.MoneySeq = g.Balance, g.MoneySeq
			if r.PrimaryPlatform == user.PlatformUnknown {
				r.PrimaryPlatform = g.PrimaryPlatform
			}
			for i := range creds {
				creds[i].PK, creds[i].UserID = user.UserPK(r.TenantID, r.ID), r.ID
			}
		}
	}
	r.SetKeys()
	acts, err := s.actionItems(t, r, now, creationActions(r, creds[0], caller.IsAdmin(), guest != nil, method)...)
	if err != nil {
		return user.User{}, fmt.Errorf("create user: %w", err)
	}
	// The activation code counts against the tenant's hourly cap before
	// anything is written, so that a refused sign-up leaves nothing behind.
	var res notify.Reservation
	if first := creds[0]; r.ActivationCode != "" && codeSentOnCreate(first, caller) {
		if res, err = s.reserveCode(ctx, t, first.Provider, first.Identifier, credField(0, "id")); err != nil {
			return user.User{}, err
		}
	}
	if err := s.writeNewUser(ctx, r, guest, creds, t.Settings.SingleAccountPerDevice, opt, now, acts...); err != nil {
		s.cancelCode(ctx, res, err)
		return user.User{}, err
	}
	if guest != nil {
		if _, err := s.st().DeleteSessions(ctx, r.TenantID, r.ID); err != nil {
			return user.User{}, err
		}
	}
	// MOBILE codes go by SMS unless an admin created the user; EMAIL codes
	// always go by e-mail.
	if r.ActivationCode != "" {
		if first := creds[0]; codeSentOnCreate(first, caller) {
			s.sendCode(ctx, r.TenantID, first, "Your activation code", "Your activation code is "+r.ActivationCode)
		}
	}
	return s.users.View(ctx, r, caller, nil)
}

// codeSentOnCreate reports whether creating a PENDING user with first as
// its first credential sends the activation code: MOBILE codes go by SMS
// unless an admin created the user, EMAIL codes always go by e-mail.
func codeSentOnCreate(first user.CredRecord, caller actor.Actor) bool {
	return oidcProviders[first.Provider] == "" && (first.Provider == user.ProviderEmail || !caller.IsAdmin())
}

// newRecord builds a new PENDING user and its primary credentials from a
// create body.
func (s *Service) newRecord(t tenant.Tenant, tenantID string, in CreateInput, platform string, now time.Time) (user.Record, []user.CredRecord) {
	r := user.Record{
		ID:                          user.NewID(),
		TenantID:                    tenantID,
		FirstName:                   in.FirstName,
		LastName:                    in.LastName,
		FullName:                    user.FullName(in.FullName, in.FirstName, in.LastName),
		State:                       user.StatePending,
		Roles:                       []string{web.RoleUser},
		Birthdate:                   in.Birthdate,
		Gender:                      in.Gender,
		PrimaryPlatform:             user.PlatformOrUnknown(platform),
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
		r.PasswordHash = s.HashPassword(in.Password)
	}
	r.NameWords = user.NameWords(r.FullName)
	r.SetKeys()
	creds := make([]user.CredRecord, len(in.Credentials))
	for i, c := range in.Credentials {
		creds[i] = user.CredRecord{
			PK: r.PK, SK: user.CredSK(c.Provider, c.ID), CredID: user.NewID(), UserID: r.ID,
			Identifier: c.ID, Provider: c.Provider, IsPrimary: true,
			Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now),
		}.Indexed(tenantID)
	}
	return r, creds
}

// writeNewUser stores a new (or converted guest) user atomically with its
// credentials, their uniqueness items, its name-search entries, its device
// binding and the actions acts.
func (s *Service) writeNewUser(ctx context.Context, r user.Record, guest *user.Record, creds []user.CredRecord, perDevice bool, opt CreateOptions, now time.Time, acts ...types.TransactWriteItem) error {
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
	it, err := st.Put(st.Users, r, userCond)
	if err == nil && userVals != nil {
		it.Put.ExpressionAttributeValues = userVals
	}
	if err := add("user", it, err); err != nil {
		return err
	}
	newCreds := map[string]bool{}
	for _, c := range creds {
		newCreds[c.SK] = true
		it, err := st.Put(st.Users, c, nil)
		if err := add("cred", it, err); err != nil {
			return err
		}
		it, err = st.PutIfFree(user.CredIndex{PK: user.CredIndexPK(r.TenantID, c.Provider, c.Identifier), SK: user.SKCredID, UserID: r.ID, Provider: c.Provider, Identifier: c.Identifier}, r.ID, now)
		if err := add("credindex", it, err); err != nil {
			return err
		}
	}
	newWords := map[string]bool{}
	for _, w := range r.NameWords {
		newWords[w] = true
		it, err := st.Put(st.Users, user.NameEntry{PK: r.PK, SK: user.NameSK(w), GSI1PK: user.NamesPK(r.TenantID), GSI1SK: w + "#" + r.ID, UserID: r.ID}, nil)
		if err := add("name", it, err); err != nil {
			return err
		}
	}
	if guest != nil {
		old, err := st.Credentials(ctx, r.TenantID, r.ID, time.Unix(0, 0))
		if err != nil {
			return err
		}
		for _, c := range old {
			if newCreds[c.SK] {
				continue
			}
			items = append(items,
				types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.Users), Key: user.Key(c.PK, c.SK)}},
				types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.Users), Key: user.Key(user.CredIndexPK(r.TenantID, c.Provider, c.Identifier), user.SKCredID)}})
			kinds = append(kinds, "old", "old")
		}
		for _, w := range guest.NameWords {
			if !newWords[w] {
				items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(st.Users), Key: user.Key(r.PK, user.NameSK(w))}})
				kinds = append(kinds, "old")
			}
		}
	}
	if perDevice && opt.DeviceID != "" && opt.Platform != "" {
		r.DeviceKey = user.DevicePK(r.TenantID, opt.Platform, opt.DeviceID)
		items[0].Put.Item["deviceKey"] = &types.AttributeValueMemberS{Value: r.DeviceKey}
		it, err := st.Put(st.Users, user.DeviceEntry{PK: user.DevicePK(r.TenantID, opt.Platform, opt.DeviceID), SK: user.SKDevice, UserID: r.ID}, aws.String("attribute_not_exists(pk) OR userId = :uid"))
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
	err = st.Transact(ctx, items)
	if err == nil {
		return nil
	}
	for _, i := range ddb.FailedConditions(err) {
		switch kinds[i] {
		case "credindex":
			return fmt.Errorf("create user: %w", ErrCredentialExists)
		case "device":
			return fmt.Errorf("create user: %w", ErrDeviceTaken)
		case "user":
			if guest != nil {
				return fmt.Errorf("convert guest: %w", user.ErrConcurrentUpdate)
			}
		}
	}
	return fmt.Errorf("create user: %w", err)
}

// CreateGuest makes a guest user and its one-hour session (POST /guests).
func (s *Service) CreateGuest(ctx context.Context, caller actor.Actor, in CreateInput, platform string) (Session, error) {
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
	now := s.users.Now()
	exp := now.Add(GuestLifetime).Unix()
	r := user.Record{
		ID: user.NewID(), TenantID: caller.TenantID, FirstName: in.FirstName, LastName: in.LastName,
		FullName: user.FullName(in.FullName, in.FirstName, in.LastName), State: user.StateActive, IsGuest: true,
		Roles: []string{web.RoleUser}, Birthdate: in.Birthdate, Gender: in.Gender,
		PrimaryPlatform: user.PlatformOrUnknown(platform), HasAgreedToShareData: in.HasAgreedToShareData,
		HasAgreedToReceiveMarketing: in.HasAgreedToReceiveMarketing, Points: t.Settings.InitialPoints,
		Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now), Version: 1, ExpiresAt: exp,
	}
	r.NameWords = user.NameWords(r.FullName)
	r.SetKeys()
	st := s.st()
	var items []types.TransactWriteItem
	it, err := st.Put(st.Users, r, aws.String("attribute_not_exists(pk)"))
	if err != nil {
		return Session{}, fmt.Errorf("create guest: %w", err)
	}
	items = append(items, it)
	for _, c := range in.Credentials {
		cr := user.CredRecord{PK: r.PK, SK: user.CredSK(c.Provider, c.ID), CredID: user.NewID(), UserID: r.ID, Identifier: c.ID, Provider: c.Provider, IsPrimary: true, Created: clock.Stamp(now), UpdatedAt: clock.Stamp(now), ExpiresAt: exp}.Indexed(r.TenantID)
		it1, err1 := st.Put(st.Users, cr, nil)
		it2, err2 := st.PutIfFree(user.CredIndex{PK: user.CredIndexPK(r.TenantID, c.Provider, c.ID), SK: user.SKCredID, UserID: r.ID, Provider: c.Provider, Identifier: c.ID, ExpiresAt: exp}, r.ID, now)
		if err := errors.Join(err1, err2); err != nil {
			return Session{}, fmt.Errorf("create guest: %w", err)
		}
		items = append(items, it1, it2)
	}
	for _, w := range r.NameWords {
		it, err := st.Put(st.Users, user.NameEntry{PK: r.PK, SK: user.NameSK(w), GSI1PK: user.NamesPK(r.TenantID), GSI1SK: w + "#" + r.ID, UserID: r.ID, ExpiresAt: exp}, nil)
		if err != nil {
			return Session{}, fmt.Errorf("create guest: %w", err)
		}
		items = append(items, it)
	}
	if err := st.Transact(ctx, items); err != nil {
		if len(ddb.FailedConditions(err)) > 0 {
			return Session{}, fmt.Errorf("create guest: %w", ErrCredentialExists)
		}
		return Session{}, fmt.Errorf("create guest: %w", err)
	}
	return s.newSession(ctx, r, t, false, now.Add(GuestLifetime))
}

// ParsePlatform validates an x-client-platform header value.
func ParsePlatform(v string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "":
		return "", nil
	case user.PlatformIOS:
		return user.PlatformIOS, nil
	case user.PlatformAndroid:
		return user.PlatformAndroid, nil
	default:
		return "", web.InvalidHeader(web.HeaderPlatform, "must be IOS or ANDROID")
	}
}

func (s *Service) sendCode(ctx context.Context, tenantID string, c user.CredRecord, subject, text string) {
	ch := channelOf(c.Provider)
	if err := s.Notifier.Send(ctx, notify.Message{TenantID: tenantID, Channel: ch, To: c.Identifier, Subject: subject, Text: text}); err != nil {
		web.Logger(ctx).Error("send code failed", "error", err.Error(), "channel", string(ch))
	}
}
