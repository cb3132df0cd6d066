package account

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/loyalty-platform/platform/shared/domain/user"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// handleCreate serves POST /users: register a user, or convert the calling
// guest into a full user.
func (s *Service) handleCreate(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	auto, err := web.BoolParam(r, "autoActivate", false)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if _, err := web.BoolParam(r, "awaitExternalAccountSync", false); err != nil {
		web.Error(w, r, err)
		return
	}
	platform, err := ParsePlatform(r.Header.Get(web.HeaderPlatform))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	opt := CreateOptions{AutoActivate: auto, Platform: platform,
		DeviceIDAndroid: r.URL.Query().Get("uniqueDeviceIdAndroid"), DeviceIDIOS: r.URL.Query().Get("uniqueDeviceIdIOS")}
	var in CreateInput
	if err := web.Decode(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.admit(r, caller); err != nil {
		web.Error(w, r, err)
		return
	}
	u, err := s.Create(r.Context(), caller, in, opt)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	metrics.Count(r.Context(), caller.TenantID, metrics.UsersCreated, 1)
	web.JSON(w, http.StatusCreated, u)
}

// handleCreateGuest serves POST /guests: a guest user and a one-hour
// session.
func (s *Service) handleCreateGuest(w http.ResponseWriter, r *http.Request) {
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
	var in CreateInput
	if err := web.DecodeOptional(r, &in); err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.admit(r, caller); err != nil {
		web.Error(w, r, err)
		return
	}
	sess, err := s.CreateGuest(r.Context(), caller, in, platform)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, sess)
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

// handleActivate serves POST /users/activate.
func (s *Service) handleActivate(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	var body activateBody
	if err := web.Decode(r, &body); err != nil {
		web.Error(w, r, err)
		return
	}
	if strings.TrimSpace(body.ID) == "" {
		web.Error(w, r, apierr.Invalid("id", "is required"))
		return
	}
	if strings.TrimSpace(body.Token) == "" {
		// A resend of the activation code.
		if err := s.admit(r, caller); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	sess, err := s.Activate(r.Context(), caller.TenantID, body.ID, strings.TrimSpace(body.Token))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if sess == nil {
		web.JSON(w, http.StatusOK, resendResponse{State: user.StatePending, Message: "a new activation code was sent"})
		return
	}
	web.JSON(w, http.StatusOK, sess)
}

// handleLogin serves GET /users/login: HTTP Basic credentials, provider in
// the AuthProvider header.
func (s *Service) handleLogin(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	scheme, enc, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		web.Error(w, r, apierr.New(apierr.Unauthorized, "HTTP Basic credentials are required"))
		return
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		web.Error(w, r, apierr.New(apierr.Unauthorized, "malformed Basic credentials"))
		return
	}
	username, password, ok := strings.Cut(string(raw), ":")
	if !ok || username == "" {
		web.Error(w, r, apierr.New(apierr.Unauthorized, "malformed Basic credentials"))
		return
	}
	sess, err := s.Login(r.Context(), caller.TenantID, r.Header.Get("AuthProvider"), username, password)
	if err != nil {
		// A refused login (bad credentials, a locked identifier, a
		// pending user); a failure of the platform is no failed login.
		if e, ok := apierr.As(err); ok && e.Code.Status() < 500 {
			metrics.Count(r.Context(), caller.TenantID, metrics.LoginsFailed, 1)
		}
		web.Error(w, r, err)
		return
	}
	metrics.Count(r.Context(), caller.TenantID, metrics.Logins, 1)
	web.JSON(w, http.StatusOK, sess)
}

// handleLogout serves GET /users/logout?userId=.
func (s *Service) handleLogout(w http.ResponseWriter, r *http.Request) {
	userID := r.URL.Query().Get("userId")
	if userID == "" {
		web.Error(w, r, apierr.Invalid("userId", "is required"))
		return
	}
	if err := s.Logout(r.Context(), web.CallerOf(r), userID); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusOK)
}

// resetBody is either a reset request {id} or its completion {username,
// token, password}.
type resetBody struct {
	ID       *string `json:"id"`
	Username string  `json:"username"`
	Token    string  `json:"token"`
	Password string  `json:"password"`
}

// handleReset serves POST /users/reset.
func (s *Service) handleReset(w http.ResponseWriter, r *http.Request) {
	caller := web.CallerOf(r)
	if err := caller.RequireTenant(); err != nil {
		web.Error(w, r, err)
		return
	}
	var body resetBody
	if err := web.Decode(r, &body); err != nil {
		web.Error(w, r, err)
		return
	}
	var err error
	completing := body.Username != "" || body.Token != "" || body.Password != ""
	switch {
	case body.ID != nil && completing:
		err = apierr.Invalid("", "send either {id} or {username, token, password}")
	case body.ID != nil && strings.TrimSpace(*body.ID) == "":
		err = apierr.Invalid("id", "is required")
	case body.ID != nil:
		if err = s.admit(r, caller); err == nil {
			err = s.RequestReset(r.Context(), caller.TenantID, *body.ID)
		}
	case !completing:
		err = apierr.Invalid("id", "is required (or send {username, token, password} to set a new password)")
	case body.Username == "":
		err = apierr.Invalid("username", "is required")
	case body.Token == "":
		err = apierr.Invalid("token", "is required")
	case body.Password == "":
		err = apierr.Invalid("password", "is required")
	default:
		err = s.CompleteReset(r.Context(), caller.TenantID, body.Username, body.Token, body.Password)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusOK)
}

// handleCreateSession serves POST /sessions: an admin session from a
// service key or an admin session.
func (s *Service) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	var none struct{}
	if err := web.DecodeOptional(r, &none); err != nil {
		web.Error(w, r, err)
		return
	}
	sess, err := s.AdminSession(r.Context(), web.CallerOf(r))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusCreated, sess)
}

// handleDeleteSessions serves DELETE /sessions/{userId}: every session of
// the user ends.
func (s *Service) handleDeleteSessions(w http.ResponseWriter, r *http.Request) {
	if err := s.DeleteSessions(r.Context(), web.CallerOf(r), r.PathValue("userId")); err != nil {
		web.Error(w, r, err)
		return
	}
	web.Empty(w, http.StatusOK)
}
