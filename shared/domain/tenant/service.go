package tenant

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/hook"
)

// Service creates tenants and manages their keys (operators' direct
// invocations), and serves a tenant's admin its settings (GET and PUT
// /tenant).
type Service struct {
	Store *Store
	Clock clock.Clock
	// Actions records the TENANT_UPDATED actions of PUT /tenant.
	Actions *action.Recorder
	// OnKeyRotated runs once a service key is rotated (see events.go).
	OnKeyRotated hook.After[KeyRotated]
}

// CreateInput describes a new tenant. ID and ServiceKey are chosen by the
// platform when empty.
type CreateInput struct {
	ID         string   `json:"id,omitempty"`
	Title      string   `json:"title"`
	Settings   Settings `json:"settings"`
	ServiceKey string   `json:"-"`
}

// Create makes a tenant and returns it with its service key, which is shown
// only here.
func (s *Service) Create(ctx context.Context, in CreateInput) (Tenant, string, error) {
	now := s.Clock.Now()
	t := Tenant{ID: in.ID, Title: in.Title, Settings: in.Settings, Created: now, Updated: now}
	if t.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		t.ID = "t-" + hex.EncodeToString(b[:])
	}
	if err := t.Validate(); err != nil {
		return Tenant{}, "", err
	}
	key := in.ServiceKey
	if key == "" {
		key = NewServiceKey()
	}
	if err := s.Store.Create(ctx, t, key); err != nil {
		return Tenant{}, "", err
	}
	return t, key, nil
}

// RotateKey gives the tenant a new service key and returns it; the old key
// stops working at once in this function and within CacheTTL in the other
// warm functions (see Cache).
func (s *Service) RotateKey(ctx context.Context, id string) (string, error) {
	key := NewServiceKey()
	if err := s.Store.RotateKey(ctx, id, key, s.Clock.Now()); err != nil {
		return "", err
	}
	if err := s.OnKeyRotated.Run(ctx, KeyRotated{TenantID: id}); err != nil {
		return "", fmt.Errorf("rotate key of %s: %w", id, err)
	}
	return key, nil
}

// Seed makes sure tenant id exists with service key key (the local stack's
// seed). It is idempotent.
func (s *Service) Seed(ctx context.Context, id, title, key string) (Tenant, error) {
	t, _, err := s.Create(ctx, CreateInput{ID: id, Title: title, ServiceKey: key})
	if errors.Is(err, ErrExists) {
		if err := s.Store.RotateKey(ctx, id, key, s.Clock.Now()); err != nil {
			return Tenant{}, fmt.Errorf("seed tenant %s: %w", id, err)
		}
		return s.Store.Get(ctx, id)
	}
	if err != nil {
		return Tenant{}, fmt.Errorf("seed tenant %s: %w", id, err)
	}
	return t, nil
}
