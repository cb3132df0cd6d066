package tenant

import (
	"context"
	"fmt"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// Request is the direct-invoke payload of the tenants function.
//
//	{"action": "create", "title": "Burger Bar", "settings": {"initialPoints": 50}}
//	{"action": "rotateKey", "tenantId": "t-0123abcd"}
//	{"action": "updateSettings", "tenantId": "t-0123abcd", "settings": {...}}
//	{"action": "get", "tenantId": "t-0123abcd"}
type Request struct {
	Action   string    `json:"action"`
	TenantID string    `json:"tenantId,omitempty"`
	Title    string    `json:"title,omitempty"`
	Settings *Settings `json:"settings,omitempty"`
}

// Response is the result of a direct invoke. ServiceKey is present only on
// create and rotateKey: it is shown once and stored hashed.
type Response struct {
	Tenant     *Tenant `json:"tenant,omitempty"`
	ServiceKey string  `json:"serviceKey,omitempty"`
}

// Handle serves one direct invocation of the tenants function.
func (s *Service) Handle(ctx context.Context, req Request) (Response, error) {
	switch req.Action {
	case "create":
		in := CreateInput{ID: req.TenantID, Title: req.Title}
		if req.Settings != nil {
			in.Settings = *req.Settings
		}
		t, key, err := s.Create(ctx, in)
		if err != nil {
			return Response{}, err
		}
		return Response{Tenant: &t, ServiceKey: key}, nil
	case "rotateKey":
		key, err := s.RotateKey(ctx, req.TenantID)
		if err != nil {
			return Response{}, err
		}
		t, err := s.Store.Get(ctx, req.TenantID)
		if err != nil {
			return Response{}, err
		}
		return Response{Tenant: &t, ServiceKey: key}, nil
	case "updateSettings":
		if req.Settings == nil {
			return Response{}, apierr.Invalid("settings", "is required")
		}
		probe := Tenant{ID: req.TenantID, Title: "x", Settings: *req.Settings}
		if err := probe.Validate(); err != nil {
			return Response{}, err
		}
		if err := s.Store.UpdateSettings(ctx, req.TenantID, probe.Settings, s.Clock.Now()); err != nil {
			return Response{}, err
		}
		t, err := s.Store.Get(ctx, req.TenantID)
		if err != nil {
			return Response{}, err
		}
		return Response{Tenant: &t}, nil
	case "get":
		t, err := s.Store.Get(ctx, req.TenantID)
		if err != nil {
			return Response{}, err
		}
		return Response{Tenant: &t}, nil
	default:
		return Response{}, apierr.Invalid("action", "must be create, rotateKey, updateSettings or get, not %q", req.Action)
	}
}

// String describes a request for logs without secrets.
func (r Request) String() string { return fmt.Sprintf("%s %s", r.Action, r.TenantID) }
