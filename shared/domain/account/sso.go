package account

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/sso"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// ErrUnknownSSOProvider is an ssoProvider path value other than google or
// apple.
var ErrUnknownSSOProvider = apierr.New(apierr.NotFound, "unknown SSO provider: use google or apple")

// SSOInput is the body of POST /users/{ssoProvider}/sso.
type SSOInput struct {
	IDToken                     string `json:"idToken"`
	FirstName                   string `json:"firstName"`
	LastName                    string `json:"lastName"`
	FullName                    string `json:"fullName"`
	HasAgreedToShareData        bool   `json:"hasAgreedToShareData"`
	HasAgreedToReceiveMarketing bool   `json:"hasAgreedToReceiveMarketing"`
	Birthdate                   string `json:"birthdate"`
	Gender                      string `json:"gender"`
}

// verifySocial checks a provider's ID token against the tenant's client ids
// for that provider; field names the request field for errors.
func (s *Service) verifySocial(ctx context.Context, t tenant.Tenant, credProvider, token, field string) (sso.Identity, error) {
	p := oidcProviders[credProvider]
	if p == "" {
		return sso.Identity{}, ErrSocialUnsupported
	}
	if s.SSO == nil {
		return sso.Identity{}, fmt.Errorf("verify %s token: no SSO verifier configured", p)
	}
	id, err := s.SSO.Verify(ctx, p, token, t.Settings.SSOClientIDs[p])
	if err != nil {
		return sso.Identity{}, sso.ForField(err, field)
	}
	return id, nil
}

// SignInWithSSO logs in or signs up with a third-party ID token (POST
// /users/{ssoProvider}/sso). It reports whether a new user was created.
// admit (nil: none) runs before a sign-up writes anything and refuses it
// with its error: the caller's per-address allowance.
func (s *Service) SignInWithSSO(ctx context.Context, caller web.Caller, provider string, in SSOInput, platform string, admit func() error) (Session, bool, error) {
	credProvider := strings.ToUpper(provider)
	if oidcProviders[credProvider] == "" {
		return Session{}, false, ErrUnknownSSOProvider
	}
	if strings.TrimSpace(in.IDToken) == "" {
		return Session{}, false, apierr.Invalid("idToken", "is required")
	}
	t, err := s.Tenants.Get(ctx, caller.TenantID)
	if err != nil {
		return Session{}, false, fmt.Errorf("sso: %w", err)
	}
	ident, err := s.verifySocial(ctx, t, credProvider, in.IDToken, "idToken")
	if err != nil {
		return Session{}, false, err
	}
	now := s.users.Now()
	uid, err := s.st().UserIDByCredential(ctx, t.ID, credProvider, ident.Subject, now)
	switch {
	case err == nil:
		r, err := s.st().GetUser(ctx, t.ID, uid, now)
		if err != nil {
			return Session{}, false, err
		}
		if r.Deleted {
			return Session{}, false, ErrBadLogin
		}
		if r.State != user.StateActive {
			return Session{}, false, ErrPendingLogin
		}
		sess, err := s.newSession(ctx, r, t, false, now.Add(s.sessionLifetime(t)))
		return sess, false, err
	case !errors.Is(err, user.ErrNotFound):
		return Session{}, false, err
	}
	// A new user: the body must name them.
	create := CreateInput{
		FirstName: in.FirstName, LastName: in.LastName, FullName: in.FullName,
		HasAgreedToShareData: in.HasAgreedToShareData, HasAgreedToReceiveMarketing: in.HasAgreedToReceiveMarketing,
		Birthdate: in.Birthdate, Gender: in.Gender,
		Credentials: []CredentialInput{{Provider: credProvider, ID: ident.Subject, Token: in.IDToken}},
	}
	if err := create.Validate(false); err != nil {
		return Session{}, false, err
	}
	if admit != nil {
		if err := admit(); err != nil {
			return Session{}, false, err
		}
	}
	r, creds := s.newRecord(t, caller.TenantID, create, platform, now)
	r.State = user.StateActive
	creds[0].IsVerified = true
	r.SetKeys()
	acts, err := s.actionItems(t, r, now, creationActions(r, creds[0], false, false, user.ActivatedBySSO)...)
	if err != nil {
		return Session{}, false, err
	}
	if err := s.writeNewUser(ctx, r, nil, creds, false, CreateOptions{}, now, acts...); err != nil {
		return Session{}, false, err
	}
	sess, err := s.newSession(ctx, r, t, false, now.Add(s.sessionLifetime(t)))
	return sess, true, err
}

// socialLogin logs in with a social provider (GET /users/login with
// AuthProvider GOOGLE or APPLE): the Basic username is the provider's user
// id and the password its ID token.
func (s *Service) socialLogin(ctx context.Context, t tenant.Tenant, provider, subject, token string) (Session, error) {
	ident, err := s.verifySocial(ctx, t, provider, token, "password")
	if err != nil {
		if e, ok := apierr.As(err); ok && e.Code == apierr.ValidationFailed && !errors.Is(err, ErrSocialUnsupported) {
			return Session{}, fmt.Errorf("%w (%v)", ErrBadLogin, err)
		}
		return Session{}, err
	}
	if ident.Subject != strings.TrimSpace(subject) {
		return Session{}, ErrBadLogin
	}
	now := s.users.Now()
	uid, err := s.st().UserIDByCredential(ctx, t.ID, provider, ident.Subject, now)
	if errors.Is(err, user.ErrNotFound) {
		return Session{}, ErrBadLogin
	}
	if err != nil {
		return Session{}, err
	}
	r, err := s.st().GetUser(ctx, t.ID, uid, now)
	if errors.Is(err, user.ErrNotFound) {
		return Session{}, ErrBadLogin
	}
	if err != nil {
		return Session{}, err
	}
	if r.Deleted {
		return Session{}, ErrBadLogin
	}
	if r.State != user.StateActive {
		return Session{}, ErrPendingLogin
	}
	return s.newSession(ctx, r, t, false, now.Add(s.sessionLifetime(t)))
}

// handleSSO serves POST /users/{ssoProvider}/sso: 200 with a session for an
// existing user, 201 for a new one.
func (s *Service) handleSSO(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	platform, err := ParsePlatform(r.Header.Get(web.HeaderPlatform))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	var in SSOInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	sess, created, err := s.SignInWithSSO(r.Context(), caller, r.PathValue("ssoProvider"), in, platform, func() error { return s.admit(r, caller) })
	if err != nil {
		if e, ok := apierr.As(err); ok && e.Code.Status() < 500 {
			metrics.Count(r.Context(), caller.TenantID, metrics.LoginsFailed, 1)
		}
		web.Error(w, r, err)
		return
	}
	metrics.Count(r.Context(), caller.TenantID, metrics.Logins, 1)
	status := http.StatusOK
	if created {
		metrics.Count(r.Context(), caller.TenantID, metrics.UsersCreated, 1)
		status = http.StatusCreated
	}
	web.JSON(w, status, sess)
}
