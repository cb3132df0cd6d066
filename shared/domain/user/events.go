// Events the users domain emits: recorded actions (USER_CREATED and
// USER_ACTIVATED, below), each in the transaction of the change it tells
// of; the Actions table's stream runs the rules on them. Hooks:
// Service.OnDeleted (hook.After) runs, with a Deleted, once a user's items
// are gone and before DELETE /users/{userId} answers: the other domains
// remove what they keep about the user (the check-in, the user's name in
// the actions log), so that the 204 means the user is gone everywhere.

package user

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
)

// Deleted is a user's deletion, as the OnDeleted hooks see it.
type Deleted struct {
	TenantID string
	UserID   string
}

// Action types the users domain records, each in the transaction of the
// change it tells of.
const (
	// ActionCreated: a user registered (metadata: state, provider of the
	// first credential, createdBy ADMIN or SELF, convertedGuest).
	ActionCreated = "USER_CREATED"
	// ActionActivated: a user became ACTIVE (metadata: method CODE,
	// AUTO (an admin's autoActivate), SOCIAL (a verified social
	// credential at sign-up) or SSO).
	ActionActivated = "USER_ACTIVATED"
)

// Activation methods (USER_ACTIVATED metadata.method).
const (
	ActivatedByCode   = "CODE"
	ActivatedByAdmin  = "AUTO"
	ActivatedBySocial = "SOCIAL"
	ActivatedBySSO    = "SSO"
)

// userAction is an action about a user to record.
type userAction struct {
	typ  string
	meta map[string]any
}

// actionItems returns the Puts, for the transaction of a change of user r,
// of the actions acts (none when the service records no actions).
func (s *Service) actionItems(t tenant.Tenant, r Record, now time.Time, acts ...userAction) ([]types.TransactWriteItem, error) {
	if s.Actions == nil {
		return nil, nil
	}
	var items []types.TransactWriteItem
	for _, ua := range acts {
		a := action.Action{
			ID: action.NewID(), Type: ua.typ, TenantID: r.TenantID, When: action.WhenAt(now, time.UTC), Metadata: ua.meta,
			Context: action.Context{
				Tenant: action.TenantRef{ID: t.ID, Title: t.Title},
				User:   &action.UserRef{ID: r.ID, Name: r.FullName, PrimaryPlatform: r.PrimaryPlatform},
			},
		}
		it, err := s.Actions.TransactItem(a)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// creationActions are the actions of registering r: USER_CREATED and,
// for a user ACTIVE at once, USER_ACTIVATED by method.
func creationActions(r Record, first CredRecord, byAdmin, convertedGuest bool, method string) []userAction {
	by := "SELF"
	if byAdmin {
		by = "ADMIN"
	}
	acts := []userAction{{ActionCreated, map[string]any{
		"state": r.State, "provider": first.Provider, "createdBy": by, "convertedGuest": convertedGuest,
	}}}
	if r.State == StateActive {
		acts = append(acts, userAction{ActionActivated, map[string]any{"method": method}})
	}
	return acts
}
