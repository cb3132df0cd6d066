// The actions the accounts part records (USER_CREATED and USER_ACTIVATED,
// declared with the users domain's other events in shared/domain/user's
// events.go), each in the transaction of the change it tells of.

package account

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/domain/user"
)

// userAction is an action about a user to record.
type userAction struct {
	typ  string
	meta map[string]any
}

// actionItems returns the items, for the transaction of a change of user
// r, that record the actions acts: their Puts and the user's feed head
// (none when the service records no actions).
func (s *Service) actionItems(t tenant.Tenant, r user.Record, now time.Time, acts ...userAction) ([]types.TransactWriteItem, error) {
	if s.Actions == nil {
		return nil, nil
	}
	as := make([]action.Action, len(acts))
	for i, ua := range acts {
		as[i] = action.Action{
			ID: action.NewID(), Type: ua.typ, TenantID: r.TenantID, When: action.WhenAt(now, time.UTC), Metadata: ua.meta,
			Context: action.Context{
				Tenant: action.TenantRef{ID: t.ID, Title: t.Title},
				User:   &action.UserRef{ID: r.ID, Name: r.FullName, PrimaryPlatform: r.PrimaryPlatform},
			},
		}
	}
	return s.Actions.TransactItems(as...)
}

// creationActions are the actions of registering r: USER_CREATED and,
// for a user ACTIVE at once, USER_ACTIVATED by method.
func creationActions(r user.Record, first user.CredRecord, byAdmin, convertedGuest bool, method string) []userAction {
	by := "SELF"
	if byAdmin {
		by = "ADMIN"
	}
	acts := []userAction{{user.ActionCreated, map[string]any{
		"state": r.State, "provider": first.Provider, "createdBy": by, "convertedGuest": convertedGuest,
	}}}
	if r.State == user.StateActive {
		acts = append(acts, userAction{user.ActionActivated, map[string]any{"method": method}})
	}
	return acts
}
