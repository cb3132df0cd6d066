package account

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/actor"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// handleCreate serves POST /users (any caller of the tenant): register a
// user, or convert the calling guest into a full user; 201.
func (s *Service) handleCreate(r *http.Request, a actor.Actor) (user.User, error) {
	auto, err := web.BoolParam(r, "autoActivate", false)
	if err != nil {
		return user.User{}, err
	}
	if _, err := web.BoolParam(r, "awaitExternalAccountSync", false); err != nil {
		return user.User{}, err
	}
	platform, err := ParsePlatform(r.Header.Get(web.HeaderPlatform))
	if err != nil {
		return user.User{}, err
	}
	opt := CreateOptions{AutoActivate: auto, Platform: platform,
		DeviceIDAndroid: r.URL.Query().Get("uniqueDeviceIdAndroid"), DeviceIDIOS: r.URL.Query().Get("uniqueDeviceIdIOS")}
	in, err := web.Decoded[CreateInput](r)
	if err != nil {
		return user.User{}, err
	}
	if err := s.admit(r, a); err != nil {
		return user.User{}, err
	}
	u, err := s.Create(r.Context(), a, in, opt)
	if err != nil {
		return user.User{}, err
	}
	metrics.Count(r.Context(), a.TenantID, metrics.UsersCreated, 1)
	return u, nil
}

// handleCreateGuest serves POST /guests (any caller of the tenant): a
// guest user and a one-hour session; 201.
func (s *Service) handleCreateGuest(r *http.Request, a actor.Actor) (Session, error) {
	platform, err := ParsePlatform(r.Header.Get(web.HeaderPlatform))
	if err != nil {
		return Session{}, err
	}
	var in CreateInput
	if err := web.DecodeOptional(r, &in); err != nil {
		return Session{}, err
	}
	if err := s.admit(r, a); err != nil {
		return Session{}, err
	}
	return s.CreateGuest(r.Context(), a, in, platform)
}

// activateBody is the body of POST /users/activate.
type activateBody struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

// resendResponse answers an activation request without a token.
type resendResponse struct {
	State   string `json:"state"`
	Message string `json:"message"`
}

// handleActivate serves POST /users/activate (any caller of the tenant):
// the session of the activated user, or, without a token, a resend of the
// activation code (resendResponse).
func (s *Service) handleActivate(r *http.Request, a actor.Actor) (any, error) {
	body, err := web.Decoded[activateBody](r)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(body.ID) == "" {
		return nil, apierr.Invalid("id", "is required")
	}
	if strings.TrimSpace(body.Token) == "" {
		// A resend of the activation code.
		if err := s.admit(r, a); err != nil {
			return nil, err
		}
	}
	sess, err := s.Activate(r.Context(), a.TenantID, body.ID, strings.TrimSpace(body.Token))
	if err != nil {
		return nil, err
	}
	if sess == nil {
		return resendResponse{State: user.StatePending, Message: "a new activation code was sent"}, nil
	}
	return sess, nil
}

// handleLogin serves GET /users/login (any caller of the tenant): HTTP
// Basic credentials, provider in the AuthProvider header.
func (s *Service) handleLogin(r *http.Request, a actor.Actor) (Session, error) {
	scheme, enc, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return Session{}, apierr.New(apierr.Unauthorized, "HTTP Basic credentials are required")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return Session{}, apierr.New(apierr.Unauthorized, "malformed Basic credentials")
	}
	username, password, ok := strings.Cut(string(raw), ":")
	if !ok || username == "" {
		return Session{}, apierr.New(apierr.Unauthorized, "malformed Basic credentials")
	}
	sess, err := s.Login(r.Context(), a.TenantID, r.Header.Get("AuthProvider"), username, password)
	if err != nil {
		// A refused login (bad credentials, a locked identifier, a
		// pending user); a failure of the platform is no failed login.
		if e, ok := apierr.As(err); ok && e.Code.Status() < 500 {
			metrics.Count(r.Context(), a.TenantID, metrics.LoginsFailed, 1)
		}
		return Session{}, err
	}
	metrics.Count(r.Context(), a.TenantID, metrics.Logins, 1)
	return sess, nil
}

// requireLogoutUser is the check GET /users/logout makes before its
// caller's: the userId parameter is required.
func requireLogoutUser(r *http.Request) error {
	if r.URL.Query().Get("userId") == "" {
		return apierr.Invalid("userId", "is required")
	}
	return nil
}

// handleLogout serves GET /users/logout?userId= (the user, or an admin
// naming any user): 200 with no body.
func (s *Service) handleLogout(r *http.Request, a actor.Actor) error {
	return s.Logout(r.Context(), a, r.URL.Query().Get("userId"))
}

// resetBody is either a reset request {id} or its completion {username,
// token, password}.
type resetBody struct {
	ID       *string `json:"id"`
	Username string  `json:"username"`
	Token    string  `json:"token"`
	Password string  `json:"password"`
}

// handleReset serves POST /users/reset (any caller of the tenant): 200 with
// no body.
func (s *Service) handleReset(r *http.Request, a actor.Actor) error {
	body, err := web.Decoded[resetBody](r)
	if err != nil {
		return err
	}
	completing := body.Username != "" || body.Token != "" || body.Password != ""
	switch {
	case body.ID != nil && completing:
		return apierr.Invalid("", "send either {id} or {username, token, password}")
	case body.ID != nil && strings.TrimSpace(*body.ID) == "":
		return apierr.Invalid("id", "is required")
	case body.ID != nil:
		if err := s.admit(r, a); err != nil {
			return err
		}
		return s.RequestReset(r.Context(), a.TenantID, *body.ID)
	case !completing:
		return apierr.Invalid("id", "is required (or send {username, token, password} to set a new password)")
	case body.Username == "":
		return apierr.Invalid("username", "is required")
	case body.Token == "":
		return apierr.Invalid("token", "is required")
	case body.Password == "":
		return apierr.Invalid("password", "is required")
	}
	return s.CompleteReset(r.Context(), a.TenantID, body.Username, body.Token, body.Password)
}

// checkNoSessionBody is the check POST /sessions makes before its
// caller's: a body, when sent, is an empty JSON object.
func checkNoSessionBody(r *http.Request) error {
	var none struct{}
	return web.DecodeOptional(r, &none)
}

// handleCreateSession serves POST /sessions (admin): an admin session from
// a service key or an admin session; 201.
func (s *Service) handleCreateSession(r *http.Request, a actor.Actor) (Session, error) {
	return s.AdminSession(r.Context(), a)
}

// handleDeleteSessions serves DELETE /sessions/{userId} (the user, or an
// admin): every session of the user ends; 200 with no body.
func (s *Service) handleDeleteSessions(r *http.Request, a actor.Actor) error {
	return s.DeleteSessions(r.Context(), a, r.PathValue("userId"))
}
