package account

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/auth"
	"github.com/loyalty-platform/platform/shared/platform/clock"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Session is a login session as returned by login, activation, guest
// creation and POST /sessions. ID is the token for the auth-token and
// bearer-auth-token schemes.
type Session struct {
	ID          string     `json:"_id"`
	UserID      string     `json:"userId"`
	TenantID    string     `json:"tenantId"`
	TenantTitle string     `json:"tenantTitle"`
	Permanent   bool       `json:"permanent"`
	ExpiresAt   string     `json:"expiresAt,omitempty"`
	FirstName   string     `json:"firstName,omitempty"`
	LastName    string     `json:"lastName,omitempty"`
	FullName    string     `json:"fullName,omitempty"`
	State       string     `json:"state,omitempty"`
	IsGuest     bool       `json:"isGuest"`
	IsPrimary   bool       `json:"isPrimary"`
	Roles       []string   `json:"roles"`
	User        *user.User `json:"user,omitempty"`
}

// ServiceUserID is the userId of sessions and callers that act through a
// tenant service key.
const ServiceUserID = auth.ServiceUserID

// ErrSessionRaced answers a login whose user changed (roles, password,
// deletion) between reading the user and storing the session.
var ErrSessionRaced = apierr.New(apierr.Unauthorized, "the account changed while signing in; sign in again")

// newSession stores a session for user r and returns it with the user
// (credentials included). A zero expiry makes a permanent session. The
// session is stored only while the user's sessionEpoch is still the one
// read into r, so a change that ends sessions (and bumps the epoch) cannot
// be outlived by a session made from the user as it was before; otherwise
// it is ErrSessionRaced.
func (s *Service) newSession(ctx context.Context, r user.Record, t tenant.Tenant, permanent bool, expires time.Time) (Session, error) {
	token := newToken(r.TenantID)
	hash := tokenHash(token)
	rec := sessionRecord{
		PK: sessionPK(r.TenantID, hash), SK: skSession, GSI1PK: auth.UserIndexPK(r.TenantID, r.ID), GSI1SK: auth.UserIndexSK(hash),
		TenantID: r.TenantID, UserID: r.ID, Roles: r.Roles, IsGuest: r.IsGuest, Permanent: permanent, Created: clock.Stamp(s.users.Now()),
	}
	if !permanent {
		rec.ExpiresAt = expires.Unix()
	}
	if err := s.st().putSessionAtEpoch(ctx, rec, r.SessionEpoch); err != nil {
		return Session{}, err
	}
	self := actor.Actor{TenantID: r.TenantID, UserID: r.ID, Roles: r.Roles, Guest: r.IsGuest}
	u, err := s.users.View(ctx, r, self, map[string]bool{"credentials": true})
	if err != nil {
		return Session{}, err
	}
	out := Session{
		ID: token, UserID: r.ID, TenantID: r.TenantID, TenantTitle: t.Title, Permanent: permanent,
		FirstName: r.FirstName, LastName: r.LastName, FullName: r.FullName, State: r.State,
		IsGuest: r.IsGuest, IsPrimary: true, Roles: r.Roles, User: &u,
	}
	if !permanent {
		out.ExpiresAt = clock.Stamp(expires)
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
func (s *Service) AdminSession(ctx context.Context, caller actor.Actor) (Session, error) {
	if err := caller.RequireAdmin(); err != nil {
		return Session{}, err
	}
	// A session made from a service key cannot make more sessions: only the
	// key itself can, so rotating the key ends that line of sessions.
	if caller.Service && caller.SessionKey != "" {
		return Session{}, apierr.New(apierr.Unauthorized, "use the service key (not a session made from it) to create admin sessions")
	}
	t, err := s.tenant(ctx, caller.TenantID, "admin session")
	if err != nil {
		return Session{}, err
	}
	userID := caller.UserID
	if caller.Service {
		userID = ServiceUserID
	}
	now := s.users.Now()
	// A user's admin session is made only while the user is still an admin
	// at the epoch read here: a demotion racing this request ends it.
	epoch := -1
	if !caller.Service {
		r, err := s.st().GetUser(ctx, caller.TenantID, userID, now)
		if errors.Is(err, user.ErrNotFound) {
			return Session{}, ErrBadSession
		}
		if err != nil {
			return Session{}, fmt.Errorf("admin session: %w", err)
		}
		if r.Deleted || !slices.Contains(r.Roles, web.RoleAdmin) {
			return Session{}, ErrBadSession
		}
		epoch = r.SessionEpoch
	}
	token := newToken(caller.TenantID)
	hash := tokenHash(token)
	exp := now.Add(AdminSessionLifetime)
	rec := sessionRecord{
		PK: sessionPK(caller.TenantID, hash), SK: skSession, GSI1PK: auth.UserIndexPK(caller.TenantID, userID), GSI1SK: auth.UserIndexSK(hash),
		TenantID: caller.TenantID, UserID: userID, Roles: []string{web.RoleAdmin}, Service: caller.Service,
		Created: clock.Stamp(now), ExpiresAt: exp.Unix(),
	}
	if epoch >= 0 {
		err = s.st().putSessionAtEpoch(ctx, rec, epoch)
	} else {
		err = s.st().putSession(ctx, rec)
	}
	if err != nil {
		return Session{}, err
	}
	return Session{ID: token, UserID: userID, TenantID: caller.TenantID, TenantTitle: t.Title, ExpiresAt: clock.Stamp(exp), Roles: []string{web.RoleAdmin}}, nil
}

// DeleteSessions ends every session of a user (DELETE /sessions/{userId}).
func (s *Service) DeleteSessions(ctx context.Context, caller actor.Actor, userID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	if userID != ServiceUserID {
		if _, err := s.st().GetUser(ctx, caller.TenantID, userID, s.users.Now()); err != nil {
			return err
		}
		if err := s.st().bumpSessionEpoch(ctx, caller.TenantID, userID); err != nil {
			return err
		}
	}
	_, err := s.st().DeleteSessions(ctx, caller.TenantID, userID)
	return err
}

// Logout ends the caller's session (GET /users/logout?userId=). An admin
// naming another user ends all of that user's sessions.
func (s *Service) Logout(ctx context.Context, caller actor.Actor, userID string) error {
	if err := caller.RequireUser(userID); err != nil {
		return err
	}
	if caller.UserID == userID && caller.SessionKey != "" {
		return s.st().deleteSession(ctx, caller.TenantID, caller.SessionKey)
	}
	if _, err := s.st().GetUser(ctx, caller.TenantID, userID, s.users.Now()); err != nil {
		return err
	}
	if err := s.st().bumpSessionEpoch(ctx, caller.TenantID, userID); err != nil {
		return err
	}
	_, err := s.st().DeleteSessions(ctx, caller.TenantID, userID)
	return err
}

// Login checks a primary credential and password and opens a session (GET
// /users/login).
func (s *Service) Login(ctx context.Context, tenantID, provider, username, password string) (Session, error) {
	provider = strings.ToUpper(strings.TrimSpace(provider))
	if provider == "" {
		// The API's default is MOBILE; an e-mail address can never be a
		// mobile number, so it selects EMAIL.
		provider = ProviderFor(username)
	}
	if !socialProviders[provider] && provider != user.ProviderEmail && provider != user.ProviderMobile {
		return Session{}, web.InvalidHeader("AuthProvider", "must be MOBILE, EMAIL or a social-login provider")
	}
	t, err := s.tenant(ctx, tenantID, "login")
	if err != nil {
		return Session{}, err
	}
	if socialProviders[provider] {
		return s.socialLogin(ctx, t, provider, username, password)
	}
	id, err := user.NormalizeCredential(provider, username)
	if err != nil {
		return Session{}, ErrBadLogin
	}
	// A change to the user while its password was being checked (a
	// demotion, a reset, a deletion) voids the session about to be stored;
	// the login is tried once more against the changed user.
	return s.throttledLogin(ctx, t.ID, provider, id, func() (Session, error) {
		sess, err := s.passwordLogin(ctx, t, provider, id, password)
		if errors.Is(err, ErrSessionRaced) {
			sess, err = s.passwordLogin(ctx, t, provider, id, password)
		}
		if errors.Is(err, ErrSessionRaced) {
			return Session{}, ErrBadLogin
		}
		return sess, err
	})
}

// passwordLogin reads the owner of a normalized primary credential, checks
// the password and opens a session.
func (s *Service) passwordLogin(ctx context.Context, t tenant.Tenant, provider, id, password string) (Session, error) {
	tenantID := t.ID
	now := s.users.Now()
	st := s.st()
	uid, err := st.UserIDByCredential(ctx, tenantID, provider, id, now)
	if errors.Is(err, user.ErrNotFound) {
		CheckPassword(s.dummyHash(), password)
		return Session{}, ErrBadLogin
	}
	if err != nil {
		return Session{}, err
	}
	// The user and its credentials in one read (the session's view shows
	// them).
	r, creds, err := st.UserWithCredentials(ctx, tenantID, uid, now)
	if errors.Is(err, user.ErrNotFound) {
		CheckPassword(s.dummyHash(), password)
		return Session{}, ErrBadLogin
	}
	if err != nil {
		return Session{}, err
	}
	_, primary := primaryAmong(creds, provider, id)
	hash := r.PasswordHash
	if hash == "" || !primary || r.Deleted || r.IsGuest {
		hash = s.dummyHash()
	}
	if !CheckPassword(hash, password) || hash != r.PasswordHash {
		return Session{}, ErrBadLogin
	}
	if r.State != user.StateActive {
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
func countCodeSend(r user.Record, now time.Time) (expression.UpdateBuilder, error) {
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

// tenant reads a tenant for op: an unknown one is ErrUnknownTenant (401),
// any other failure is wrapped (500).
func (s *Service) tenant(ctx context.Context, tenantID, op string) (tenant.Tenant, error) {
	t, err := s.Tenants.Get(ctx, tenantID)
	if errors.Is(err, tenant.ErrNotFound) {
		return tenant.Tenant{}, fmt.Errorf("%s: %w", op, ErrUnknownTenant)
	}
	if err != nil {
		return tenant.Tenant{}, fmt.Errorf("%s: get tenant %s: %w", op, tenantID, err)
	}
	return t, nil
}

// codeSendTries bounds the re-reads of a code request that lost the race to
// count its send: every lost race means another send was counted, so after
// MaxCodeSends of them the hour's cap answers.
const codeSendTries = MaxCodeSends + 2

// countedSend counts one more code sent to user uid: it reads the user,
// vets it with check, and applies change(r, count) — count is the update
// that counts the send (see countCodeSend) — under cond(r) and the
// condition that no other request counted a send since the read. A lost
// race re-reads the user and tries again, so the hourly cap holds for
// parallel requests.
func (s *Service) countedSend(ctx context.Context, tenantID, uid string, check func(user.Record) error,
	change func(r user.Record, count expression.UpdateBuilder) expression.UpdateBuilder, cond func(user.Record) expression.ConditionBuilder) error {
	for try := 1; ; try++ {
		now := s.users.Now()
		r, err := s.st().GetUser(ctx, tenantID, uid, now)
		if err != nil {
			return err
		}
		if err := check(r); err != nil {
			return err
		}
		count, err := countCodeSend(r, now)
		if err != nil {
			return err
		}
		err = s.users.UpdateUser(ctx, r, change(r, count), cond(r).And(codeSendUnchanged(r)))
		if err == nil || !errors.Is(err, user.ErrConcurrentUpdate) || try >= codeSendTries {
			return err
		}
	}
}

// countAttempt counts one wrong guess of a code in the user's counter
// attribute, only while fewer than MaxCodeAttempts were counted: a guess
// that finds the code voided (by the guesses counted before it, possibly
// in parallel) is ErrTokenVoided, otherwise ErrInvalidToken.
func (s *Service) countAttempt(ctx context.Context, r user.Record, attr string) error {
	_, err := s.store.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.store.Users), Key: user.Key(r.PK, r.SK),
		UpdateExpression:         aws.String("ADD #n :one"),
		ConditionExpression:      aws.String("attribute_exists(pk) AND (attribute_not_exists(#n) OR #n < :max)"),
		ExpressionAttributeNames: map[string]string{"#n": attr},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": &types.AttributeValueMemberN{Value: "1"},
			":max": &types.AttributeValueMemberN{Value: fmt.Sprint(MaxCodeAttempts)},
		},
	})
	if ddb.IsConditionFailed(err) {
		return ErrTokenVoided
	}
	if err != nil {
		return fmt.Errorf("count %s of %s: %w", attr, r.ID, err)
	}
	return ErrInvalidToken
}

// activateTries bounds the writes of an activation with the right code
// that keeps losing races to changes of the user (each lost race reads the
// user again); activateBackoff is the pause before a retry, times the try.
const (
	activateTries   = 5
	activateBackoff = 20 * time.Millisecond
)

// Activate checks an activation code (POST /users/activate). With no code
// it sends a new one and returns a nil session.
func (s *Service) Activate(ctx context.Context, tenantID, credential, code string) (*Session, error) {
	t, err := s.tenant(ctx, tenantID, "activate")
	if err != nil {
		return nil, err
	}
	provider := ProviderFor(credential)
	id, err := user.NormalizeCredential(provider, credential)
	if err != nil {
		return nil, apierr.Invalid("id", "must be the user's e-mail address or mobile number")
	}
	now := s.users.Now()
	st := s.st()
	uid, err := st.UserIDByCredential(ctx, tenantID, provider, id, now)
	if err != nil {
		return nil, fmt.Errorf("activate: %w", err)
	}
	// The user and its credentials in one read.
	r, creds, err := st.UserWithCredentials(ctx, tenantID, uid, now)
	if err != nil {
		return nil, fmt.Errorf("activate: %w", err)
	}
	cred, ok := primaryAmong(creds, provider, id)
	if !ok {
		return nil, fmt.Errorf("activate: find credential: %w", user.ErrNotFound)
	}
	pending := func(r user.Record) error {
		if r.State == user.StateActive {
			return ErrAlreadyActive
		}
		if r.Deleted {
			return fmt.Errorf("activate: %w", user.ErrNotFound)
		}
		return nil
	}
	if code == "" {
		res, err := s.reserveCode(ctx, t, provider, id, "id")
		if err != nil {
			return nil, err
		}
		newCodeValue := newCode(4)
		err = s.countedSend(ctx, tenantID, uid, pending, func(_ user.Record, count expression.UpdateBuilder) expression.UpdateBuilder {
			return count.Set(expression.Name("activationCode"), expression.Value(newCodeValue)).
				Set(expression.Name("activationAttempts"), expression.Value(0))
		}, func(user.Record) expression.ConditionBuilder {
			return expression.Name("state").Equal(expression.Value(user.StatePending))
		})
		if err != nil {
			s.cancelCode(ctx, res, err)
			return nil, fmt.Errorf("resend activation: %w", err)
		}
		s.sendCode(ctx, tenantID, user.CredRecord{Provider: provider, Identifier: id}, "Your activation code", "Your activation code is "+newCodeValue)
		return nil, nil
	}
	var (
		acts      []types.TransactWriteItem
		activated user.Record
		credGone  bool
	)
	for try := 1; ; try++ {
		if err := pending(r); err != nil {
			return nil, err
		}
		if r.ActivationAttempts >= MaxCodeAttempts || r.ActivationCode == "" {
			return nil, ErrTokenVoided
		}
		if !equalCode(r.ActivationCode, code) {
			if try > 1 {
				// A new code was sent while this request ran: the one
				// it checked is gone (not a wrong guess to count).
				return nil, ErrInvalidToken
			}
			// Count the wrong attempt atomically; five void the code.
			return nil, s.countAttempt(ctx, r, "activationAttempts")
		}
		now = s.users.Now()
		upd := expression.Set(expression.Name("state"), expression.Value(user.StateActive)).
			Remove(expression.Name("activationCode")).
			Set(expression.Name("activationAttempts"), expression.Value(0))
		cond := expression.Name("state").Equal(expression.Value(user.StatePending)).
			And(expression.Name("activationCode").Equal(expression.Value(code))).
			And(expression.Name("activationAttempts").LessThan(expression.Value(MaxCodeAttempts)))
		activated = r
		activated.State = user.StateActive
		acts, err = s.actionItems(t, activated, now, userAction{user.ActionActivated, map[string]any{"method": user.ActivatedByCode, "provider": provider}})
		if err != nil {
			return nil, fmt.Errorf("activate: %w", err)
		}
		// The credential the code went to is verified in the same transaction.
		verified, err := verifiedItem(s.store.Users, cred, now)
		if err != nil {
			return nil, fmt.Errorf("activate: %w", err)
		}
		items := append(slices.Clip(acts), verified)
		err = s.users.UpdateUserAt(ctx, r, now, upd, cond, items...)
		credGone = ddb.Failed(err, len(items)) && !ddb.Failed(err, 0)
		if credGone {
			// The credential was removed meanwhile: activate without it.
			err = s.users.UpdateUserAt(ctx, r, now, upd, cond, acts...)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, user.ErrConcurrentUpdate) || try >= activateTries {
			return nil, fmt.Errorf("activate: %w", err)
		}
		// Lost a race (another activation with the code, a new code, a
		// wrong guess counted, or a transaction in progress on the user):
		// read the user again. Activated meanwhile is ALREADY_ACTIVE; a
		// code changed or voided is INVALID_TOKEN; still PENDING with the
		// code (a conflict with a change that did not commit) tries again.
		r, creds, err = st.UserWithCredentials(ctx, tenantID, uid, s.users.Now())
		if err != nil {
			return nil, fmt.Errorf("activate: read again: %w", err)
		}
		if err := pending(r); err != nil {
			return nil, err
		}
		if cred, ok = primaryAmong(creds, provider, id); !ok {
			return nil, fmt.Errorf("activate: find credential: %w", user.ErrNotFound)
		}
		if r.State == user.StatePending {
			if err := sleepCtx(ctx, time.Duration(try)*activateBackoff); err != nil {
				return nil, fmt.Errorf("activate: %w", err)
			}
		}
	}
	// The user and its credentials as the transaction left them (it
	// changed nothing else).
	r = activated
	r.ActivationCode, r.ActivationAttempts = "", 0
	r.UpdatedAt, r.Version = clock.Stamp(now), r.Version+1
	r.SetKeys()
	if credGone {
		r.Creds = nil // read them again for the view
	} else {
		r.Creds = make([]user.CredRecord, 0, len(creds))
		for _, c := range creds {
			if c.SK == cred.SK {
				c.IsVerified, c.VerifyCode, c.UpdatedAt = true, "", clock.Stamp(now)
			}
			r.Creds = append(r.Creds, c)
		}
	}
	sess, err := s.newSession(ctx, r, t, false, now.Add(s.sessionLifetime(t)))
	if err != nil {
		return nil, err
	}
	return &sess, nil
}

// primaryAmong returns the credential (provider, id) among creds when it is
// a primary one.
func primaryAmong(creds []user.CredRecord, provider, id string) (user.CredRecord, bool) {
	for _, c := range creds {
		if c.Provider == provider && c.Identifier == id && c.IsPrimary {
			return c, true
		}
	}
	return user.CredRecord{}, false
}

// verifiedItem is the update that marks credential c (as this request read
// it) verified at now, as VerifyCredential does: updatedAt and its list key
// move with it. It is conditional on the credential still existing.
func verifiedItem(table string, c user.CredRecord, now time.Time) (types.TransactWriteItem, error) {
	at := clock.Stamp(now)
	upd := expression.Set(expression.Name("isVerified"), expression.Value(true)).
		Set(expression.Name("updatedAt"), expression.Value(at)).
		Set(expression.Name("gsi3sk"), expression.Value(at+"#"+c.CredID)).
		Remove(expression.Name("verifyCode"))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(expression.Name("pk").AttributeExists()).Build()
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("verify credential %s: %w", c.CredID, err)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(table), Key: user.Key(c.PK, c.SK), UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// RequestReset sends a password reset code (POST /users/reset {id}).
func (s *Service) RequestReset(ctx context.Context, tenantID, credential string) error {
	t, err := s.tenant(ctx, tenantID, "reset")
	if err != nil {
		return err
	}
	provider := ProviderFor(credential)
	id, err := user.NormalizeCredential(provider, credential)
	if err != nil {
		return apierr.Invalid("id", "must be an e-mail address or mobile number")
	}
	uid, err := s.st().PrimaryOwner(ctx, tenantID, provider, id, s.users.Now())
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	res, err := s.reserveCode(ctx, t, provider, id, "id")
	if err != nil {
		return err
	}
	code := newCode(6)
	err = s.countedSend(ctx, tenantID, uid, func(r user.Record) error {
		if r.Deleted || r.IsGuest {
			return fmt.Errorf("reset: %w", user.ErrNotFound)
		}
		if r.State == user.StatePending {
			return ErrUserPending
		}
		return nil
	}, func(_ user.Record, count expression.UpdateBuilder) expression.UpdateBuilder {
		return count.Set(expression.Name("resetCode"), expression.Value(code)).
			Set(expression.Name("resetAttempts"), expression.Value(0)).
			Set(expression.Name("resetExpiresAt"), expression.Value(s.users.Now().Add(ResetLifetime).Unix()))
	}, func(user.Record) expression.ConditionBuilder {
		return expression.Name("state").Equal(expression.Value(user.StateActive)).And(expression.Name("deleted").Equal(expression.Value(false)))
	})
	if err != nil {
		s.cancelCode(ctx, res, err)
		return fmt.Errorf("reset: %w", err)
	}
	s.sendCode(ctx, tenantID, user.CredRecord{Provider: provider, Identifier: id}, "Your password reset code", "Your password reset code is "+code)
	return nil
}

// CompleteReset sets a new password with a reset code (POST /users/reset
// {username, token, password}) and ends every session of the user: the
// same write bumps sessionEpoch, so a login racing the reset cannot store
// a session either.
func (s *Service) CompleteReset(ctx context.Context, tenantID, username, code, password string) error {
	if err := checkPassword(password); err != nil {
		return err
	}
	if _, err := s.tenant(ctx, tenantID, "reset"); err != nil {
		return err
	}
	provider := ProviderFor(username)
	id, err := user.NormalizeCredential(provider, username)
	if err != nil {
		return apierr.Invalid("username", "must be an e-mail address or mobile number")
	}
	now := s.users.Now()
	st := s.st()
	uid, err := st.PrimaryOwner(ctx, tenantID, provider, id, now)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	r, err := st.GetUser(ctx, tenantID, uid, now)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if r.State == user.StatePending {
		return ErrUserPending
	}
	if r.ResetCode == "" || r.ResetAttempts >= MaxCodeAttempts || r.ResetExpiresAt <= now.Unix() {
		return ErrTokenVoided
	}
	if !equalCode(r.ResetCode, code) {
		// Count the wrong attempt atomically; five void the code.
		return s.countAttempt(ctx, r, "resetAttempts")
	}
	upd := expression.Set(expression.Name("passwordHash"), expression.Value(s.HashPassword(password))).
		Remove(expression.Name("resetCode")).Remove(expression.Name("resetExpiresAt")).
		Set(expression.Name("resetAttempts"), expression.Value(0)).
		Add(expression.Name("sessionEpoch"), expression.Value(1))
	// Checked at the write: wrong guesses counted in parallel since the
	// read void the code, and so does its expiry during the hashing.
	cond := expression.Name("resetCode").Equal(expression.Value(code)).
		And(expression.Name("resetAttempts").LessThan(expression.Value(MaxCodeAttempts))).
		And(expression.Name("resetExpiresAt").GreaterThan(expression.Value(s.users.Now().Unix()))).
		And(expression.Name("deleted").Equal(expression.Value(false)))
	if err := s.users.UpdateUser(ctx, r, upd, cond); err != nil {
		if errors.Is(err, user.ErrConcurrentUpdate) {
			return ErrTokenVoided
		}
		return fmt.Errorf("reset: %w", err)
	}
	if _, err := st.DeleteSessions(ctx, tenantID, uid); err != nil {
		return err
	}
	// The code proved the owner: a login lock of the credential ends.
	return st.clearLoginAttempts(ctx, tenantID, provider, id)
}

// sleepCtx pauses for d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
