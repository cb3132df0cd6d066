package user

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/apierr"
	"github.com/loyalty-platform/platform/shared/ddb"
	"github.com/loyalty-platform/platform/shared/tenant"
	"github.com/loyalty-platform/platform/shared/web"
)

// Session is a login session as returned by login, activation, guest
// creation and POST /sessions. ID is the token for the auth-token and
// bearer-auth-token schemes.
type Session struct {
	ID          string   `json:"_id"`
	UserID      string   `json:"userId"`
	TenantID    string   `json:"tenantId"`
	TenantTitle string   `json:"tenantTitle"`
	Permanent   bool     `json:"permanent"`
	ExpiresAt   string   `json:"expiresAt,omitempty"`
	FirstName   string   `json:"firstName,omitempty"`
	LastName    string   `json:"lastName,omitempty"`
	FullName    string   `json:"fullName,omitempty"`
	State       string   `json:"state,omitempty"`
	IsGuest     bool     `json:"isGuest"`
	IsPrimary   bool     `json:"isPrimary"`
	Roles       []string `json:"roles"`
	User        *User    `json:"user,omitempty"`
}

// ServiceUserID is the userId of sessions and callers that act through a
// tenant service key.
const ServiceUserID = "service"

// newSession stores a session for user r and returns it with the user
// (credentials included). A zero expiry makes a permanent session.
func (s *Service) newSession(ctx context.Context, r record, t tenant.Tenant, permanent bool, expires time.Time) (Session, error) {
	token := newToken(r.TenantID)
	hash := tokenHash(token)
	rec := sessionRecord{
		PK: sessionPK(r.TenantID, hash), SK: skSession, GSI1PK: userPK(r.TenantID, r.ID), GSI1SK: "SESSION#" + hash,
		TenantID: r.TenantID, UserID: r.ID, Roles: r.Roles, IsGuest: r.IsGuest, Permanent: permanent, Created: stamp(s.Clock.Now()),
	}
	if !permanent {
		rec.ExpiresAt = expires.Unix()
	}
	if err := s.st().putSession(ctx, rec); err != nil {
		return Session{}, err
	}
	self := web.Caller{TenantID: r.TenantID, UserID: r.ID, Roles: r.Roles, Guest: r.IsGuest}
	u, err := s.view(ctx, r, self, map[string]bool{"credentials": true})
	if err != nil {
		return Session{}, err
	}
	out := Session{
		ID: token, UserID: r.ID, TenantID: r.TenantID, TenantTitle: t.Title, Permanent: permanent,
		FirstName: r.FirstName, LastName: r.LastName, FullName: r.FullName, State: r.State,
		IsGuest: r.IsGuest, IsPrimary: true, Roles: r.Roles, User: &u,
	}
	if !permanent {
		out.ExpiresAt = stamp(expires)
	}
	return out, nil
}

func (s *Service) sessionLifetime(t tenant.Tenant) time.Duration {
	if t.Settings.SessionHours > 0 {
		return time.Duration(t.Settings.SessionHours) * time.Hour
	}
	return DefaultSessionLifetime
}

// AdminSession makes an admin session for an admin caller (POST /sessions):
// from a service key or from another admin session.
func (s *Service) AdminSession(ctx context.Context, caller web.Caller) (Session, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Session{}, err
	}
	// A session made from a service key cannot make more sessions: only the
	// key itself can, so rotating the key ends that line of sessions.
	if caller.Service && caller.SessionKey != "" {
		return Session{}, apierr.New(apierr.Unauthorized, "use the service key (not a session made from it) to create admin sessions")
	}
	t, err := s.Tenants.Get(ctx, caller.TenantID)
	if err != nil {
		return Session{}, fmt.Errorf("admin session: %w", err)
	}
	userID := caller.UserID
	if caller.Service {
		userID = ServiceUserID
	}
	now := s.Clock.Now()
	token := newToken(caller.TenantID)
	hash := tokenHash(token)
	exp := now.Add(AdminSessionLifetime)
	rec := sessionRecord{
		PK: sessionPK(caller.TenantID, hash), SK: skSession, GSI1PK: userPK(caller.TenantID, userID), GSI1SK: "SESSION#" + hash,
		TenantID: caller.TenantID, UserID: userID, Roles: []string{web.RoleAdmin}, Service: caller.Service,
		Created: stamp(now), ExpiresAt: exp.Unix(),
	}
	if err := s.st().putSession(ctx, rec); err != nil {
		return Session{}, err
	}
	return Session{ID: token, UserID: userID, TenantID: caller.TenantID, TenantTitle: t.Title, ExpiresAt: stamp(exp), Roles: []string{web.RoleAdmin}}, nil
}

// EndServiceSessions ends every admin session made from the tenant's
// service key (called when the key is rotated).
func (s *Service) EndServiceSessions(ctx context.Context, tenantID string) error {
	_, err := s.st().deleteSessions(ctx, tenantID, ServiceUserID)
	return err
}

// DeleteSessions ends every session of a user (DELETE /sessions/{userId}).
func (s *Service) DeleteSessions(ctx context.Context, caller web.Caller, userID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	if userID != ServiceUserID {
		if _, err := s.st().getUser(ctx, caller.TenantID, userID, s.Clock.Now()); err != nil {
			return err
		}
	}
	_, err := s.st().deleteSessions(ctx, caller.TenantID, userID)
	return err
}

// Logout ends the caller's session (GET /users/logout?userId=). An admin
// naming another user ends all of that user's sessions.
func (s *Service) Logout(ctx context.Context, caller web.Caller, userID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	if caller.UserID == userID && caller.SessionKey != "" {
		return s.st().deleteSession(ctx, caller.TenantID, caller.SessionKey)
	}
	if _, err := s.st().getUser(ctx, caller.TenantID, userID, s.Clock.Now()); err != nil {
		return err
	}
	_, err := s.st().deleteSessions(ctx, caller.TenantID, userID)
	return err
}

// Login checks a primary credential and password and opens a session (GET
// /users/login).
func (s *Service) Login(ctx context.Context, tenantID, provider, username, password string) (Session, error) {
	provider = strings.ToUpper(strings.TrimSpace(provider))
	if provider == "" {
		// The spec's default is MOBILE; an e-mail address can never be a
		// mobile number, so it selects EMAIL.
		provider = ProviderFor(username)
	}
	if !socialProviders[provider] && provider != ProviderEmail && provider != ProviderMobile {
		return Session{}, web.InvalidHeader("AuthProvider", "must be MOBILE, EMAIL or a social-login provider")
	}
	t, err := s.Tenants.Get(ctx, tenantID)
	if err != nil {
		return Session{}, fmt.Errorf("login: %w", ErrUnknownTenant)
	}
	if socialProviders[provider] {
		return s.socialLogin(ctx, t, provider, username, password)
	}
	id, err := NormalizeCredential(provider, username)
	if err != nil {
		return Session{}, ErrBadLogin
	}
	now := s.Clock.Now()
	st := s.st()
	uid, err := st.userIDByCredential(ctx, tenantID, provider, id, now)
	if errors.Is(err, ErrNotFound) {
		return Session{}, ErrBadLogin
	}
	if err != nil {
		return Session{}, err
	}
	r, err := st.getUser(ctx, tenantID, uid, now)
	if errors.Is(err, ErrNotFound) {
		return Session{}, ErrBadLogin
	}
	if err != nil {
		return Session{}, err
	}
	creds, err := st.credentials(ctx, tenantID, uid, now)
	if err != nil {
		return Session{}, err
	}
	primary := false
	for _, c := range creds {
		if c.Provider == provider && c.Identifier == id && c.IsPrimary {
			primary = true
		}
	}
	if r.PasswordHash == "" || !primary || r.Deleted || r.IsGuest || !CheckPassword(r.PasswordHash, password) {
		return Session{}, ErrBadLogin
	}
	if r.State != StateActive {
		return Session{}, ErrPendingLogin
	}
	return s.newSession(ctx, r, t, false, now.Add(s.sessionLifetime(t)))
}

// MaxCodeSends is how many activation or reset codes a user may be sent in
// one hour; it bounds guessing across resends (each code allows
// MaxCodeAttempts tries).
const MaxCodeSends = 5

// ErrTooManyCodes answers a code request over MaxCodeSends in an hour.
var ErrTooManyCodes = apierr.New(apierr.ValidationFailed, "too many codes were requested for this user; try again in an hour")

// countCodeSend returns the update that counts one more code sent to r, or
// ErrTooManyCodes.
func countCodeSend(r record, now time.Time) (expression.UpdateBuilder, error) {
	sends, window := r.CodeSends, r.CodeWindow
	if now.Unix()-window >= 3600 {
		sends, window = 0, now.Unix()
	}
	if sends >= MaxCodeSends {
		return expression.UpdateBuilder{}, ErrTooManyCodes
	}
	return expression.Set(expression.Name("codeSends"), expression.Value(sends+1)).
		Set(expression.Name("codeWindow"), expression.Value(window)), nil
}

// Activate checks an activation code (POST /users/activate). With no code
// it sends a new one and returns a nil session.
func (s *Service) Activate(ctx context.Context, tenantID, credential, code string) (*Session, error) {
	t, err := s.Tenants.Get(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("activate: %w", ErrUnknownTenant)
	}
	provider := ProviderFor(credential)
	id, err := NormalizeCredential(provider, credential)
	if err != nil {
		return nil, apierr.Invalid("id", "must be the user's e-mail address or mobile number")
	}
	now := s.Clock.Now()
	st := s.st()
	uid, err := st.primaryOwner(ctx, tenantID, provider, id, now)
	if err != nil {
		return nil, fmt.Errorf("activate: %w", err)
	}
	r, err := st.getUser(ctx, tenantID, uid, now)
	if err != nil {
		return nil, fmt.Errorf("activate: %w", err)
	}
	if r.State == StateActive {
		return nil, ErrAlreadyActive
	}
	if r.Deleted {
		return nil, fmt.Errorf("activate: %w", ErrNotFound)
	}
	if code == "" {
		newCodeValue := newCode(4)
		upd, err := countCodeSend(r, now)
		if err != nil {
			return nil, err
		}
		err = s.updateUser(ctx, r, upd.Set(expression.Name("activationCode"), expression.Value(newCodeValue)).
			Set(expression.Name("activationAttempts"), expression.Value(0)),
			expression.Name("state").Equal(expression.Value(StatePending)).And(expression.Name("version").Equal(expression.Value(r.Version))))
		if err != nil {
			return nil, fmt.Errorf("resend activation: %w", err)
		}
		s.sendCode(ctx, tenantID, credRecord{Provider: provider, Identifier: id}, "Your activation code", "Your activation code is "+newCodeValue)
		return nil, nil
	}
	if r.ActivationAttempts >= MaxCodeAttempts || r.ActivationCode == "" {
		return nil, ErrTokenVoided
	}
	if !equalCode(r.ActivationCode, code) {
		// Count the wrong attempt atomically; five void the code.
		_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.Tables.Users), Key: key(r.PK, r.SK),
			UpdateExpression:          aws.String("ADD activationAttempts :one"),
			ConditionExpression:       aws.String("attribute_exists(pk)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
		})
		if err != nil {
			return nil, fmt.Errorf("count activation attempt: %w", err)
		}
		return nil, ErrInvalidToken
	}
	now = s.Clock.Now()
	upd := expression.Set(expression.Name("state"), expression.Value(StateActive)).
		Remove(expression.Name("activationCode")).
		Set(expression.Name("activationAttempts"), expression.Value(0))
	cond := expression.Name("state").Equal(expression.Value(StatePending)).
		And(expression.Name("activationCode").Equal(expression.Value(code))).
		And(expression.Name("activationAttempts").LessThan(expression.Value(MaxCodeAttempts)))
	if err := s.updateUser(ctx, r, upd, cond); err != nil {
		if errors.Is(err, ErrConcurrentUpdate) {
			return nil, ErrInvalidToken
		}
		return nil, fmt.Errorf("activate: %w", err)
	}
	// The credential the code went to is now verified.
	_, _ = s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Tables.Users), Key: key(r.PK, credSK(provider, id)),
		UpdateExpression:          aws.String("SET isVerified = :t"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}},
	})
	r, err = st.getUser(ctx, tenantID, uid, now)
	if err != nil {
		return nil, err
	}
	sess, err := s.newSession(ctx, r, t, false, now.Add(s.sessionLifetime(t)))
	if err != nil {
		return nil, err
	}
	return &sess, nil
}

// RequestReset sends a password reset code (POST /users/reset {id}).
func (s *Service) RequestReset(ctx context.Context, tenantID, credential string) error {
	if _, err := s.Tenants.Get(ctx, tenantID); err != nil {
		return fmt.Errorf("reset: %w", ErrUnknownTenant)
	}
	provider := ProviderFor(credential)
	id, err := NormalizeCredential(provider, credential)
	if err != nil {
		return apierr.Invalid("id", "must be an e-mail address or mobile number")
	}
	now := s.Clock.Now()
	uid, err := s.st().primaryOwner(ctx, tenantID, provider, id, now)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	r, err := s.st().getUser(ctx, tenantID, uid, now)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if r.Deleted || r.IsGuest {
		return fmt.Errorf("reset: %w", ErrNotFound)
	}
	if r.State == StatePending {
		return ErrUserPending
	}
	code := newCode(6)
	upd, err := countCodeSend(r, now)
	if err != nil {
		return err
	}
	upd = upd.Set(expression.Name("resetCode"), expression.Value(code)).
		Set(expression.Name("resetAttempts"), expression.Value(0)).
		Set(expression.Name("resetExpiresAt"), expression.Value(now.Add(ResetLifetime).Unix()))
	if err := s.updateUser(ctx, r, upd, expression.Name("state").Equal(expression.Value(StateActive))); err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	s.sendCode(ctx, tenantID, credRecord{Provider: provider, Identifier: id}, "Your password reset code", "Your password reset code is "+code)
	return nil
}

// CompleteReset sets a new password with a reset code (POST /users/reset
// {username, token, password}) and ends every session of the user.
func (s *Service) CompleteReset(ctx context.Context, tenantID, username, code, password string) error {
	if err := checkPassword(password); err != nil {
		return err
	}
	if _, err := s.Tenants.Get(ctx, tenantID); err != nil {
		return fmt.Errorf("reset: %w", ErrUnknownTenant)
	}
	provider := ProviderFor(username)
	id, err := NormalizeCredential(provider, username)
	if err != nil {
		return apierr.Invalid("username", "must be an e-mail address or mobile number")
	}
	now := s.Clock.Now()
	st := s.st()
	uid, err := st.primaryOwner(ctx, tenantID, provider, id, now)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	r, err := st.getUser(ctx, tenantID, uid, now)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if r.State == StatePending {
		return ErrUserPending
	}
	if r.ResetCode == "" || r.ResetAttempts >= MaxCodeAttempts || r.ResetExpiresAt <= now.Unix() {
		return ErrTokenVoided
	}
	if !equalCode(r.ResetCode, code) {
		_, err := s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(s.Tables.Users), Key: key(r.PK, r.SK),
			UpdateExpression:          aws.String("ADD resetAttempts :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
		})
		if err != nil {
			return fmt.Errorf("count reset attempt: %w", err)
		}
		return ErrInvalidToken
	}
	upd := expression.Set(expression.Name("passwordHash"), expression.Value(HashPassword(password))).
		Remove(expression.Name("resetCode")).Remove(expression.Name("resetExpiresAt")).
		Set(expression.Name("resetAttempts"), expression.Value(0))
	cond := expression.Name("resetCode").Equal(expression.Value(code))
	if err := s.updateUser(ctx, r, upd, cond); err != nil {
		if errors.Is(err, ErrConcurrentUpdate) {
			return ErrInvalidToken
		}
		return fmt.Errorf("reset: %w", err)
	}
	_, err = st.deleteSessions(ctx, tenantID, uid)
	return err
}

// updateUser applies upd to the user record under cond, bumping updatedAt,
// its index key and the version. A failed condition is ErrConcurrentUpdate.
func (s *Service) updateUser(ctx context.Context, r record, upd expression.UpdateBuilder, cond expression.ConditionBuilder) error {
	now := stamp(s.Clock.Now())
	upd = upd.Set(expression.Name("updatedAt"), expression.Value(now)).
		Set(expression.Name("gsi3sk"), expression.Value(now+"#"+r.ID)).
		Add(expression.Name("version"), expression.Value(1))
	cond = expression.Name("pk").AttributeExists().And(cond)
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("update user %s: %w", r.ID, err)
	}
	_, err = s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Tables.Users), Key: key(r.PK, r.SK),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if ddb.IsConditionFailed(err) {
		return fmt.Errorf("update user %s: %w", r.ID, ErrConcurrentUpdate)
	}
	if err != nil {
		return fmt.Errorf("update user %s: %w", r.ID, err)
	}
	return nil
}

// authenticator resolves tokens and keys for the web middleware.
type authenticator struct{ s *Service }

// Authenticator returns the web.Authenticator backed by this domain's
// sessions and the tenants' service keys.
func (s *Service) Authenticator() web.Authenticator { return authenticator{s} }

// Session resolves a session token.
func (a authenticator) Session(ctx context.Context, token string) (web.Caller, error) {
	tenantID, _, ok := strings.Cut(token, ".")
	if !ok || !tenant.ValidID(tenantID) || len(token) > 200 {
		return web.Caller{}, ErrBadSession
	}
	hash := tokenHash(token)
	rec, err := a.s.st().getSession(ctx, tenantID, hash, a.s.Clock.Now())
	if err != nil {
		return web.Caller{}, err
	}
	return web.Caller{TenantID: rec.TenantID, UserID: rec.UserID, SessionKey: hash, Roles: rec.Roles, Guest: rec.IsGuest, Service: rec.Service}, nil
}

// ServiceKey resolves a tenant service key; the caller acts as an ADMIN.
func (a authenticator) ServiceKey(ctx context.Context, key string) (web.Caller, error) {
	if len(key) > 200 {
		return web.Caller{}, ErrBadServiceKey
	}
	t, err := a.s.Tenants.ByServiceKey(ctx, key)
	if errors.Is(err, tenant.ErrNotFound) {
		return web.Caller{}, ErrBadServiceKey
	}
	if err != nil {
		return web.Caller{}, err
	}
	return web.Caller{TenantID: t.ID, TenantTitle: t.Title, Service: true, Roles: []string{web.RoleAdmin}}, nil
}

// Tenant resolves the x-application-id of an anonymous caller.
func (a authenticator) Tenant(ctx context.Context, id string) (web.Caller, error) {
	t, err := a.s.Tenants.Get(ctx, id)
	if errors.Is(err, tenant.ErrNotFound) {
		return web.Caller{}, ErrUnknownTenant
	}
	if err != nil {
		return web.Caller{}, err
	}
	return web.Caller{TenantID: t.ID, TenantTitle: t.Title}, nil
}
