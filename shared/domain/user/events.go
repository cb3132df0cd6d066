// Events the users domain emits: recorded actions (USER_CREATED and
// USER_ACTIVATED, below; the accounts part records them, see
// shared/domain/account's events.go), each in the transaction of the
// change it tells of; the Actions table's stream runs the rules on them.
// Hooks: the avatars part's avatar.Service.OnDeleted (hook.After) runs,
// with a Deleted, once a user's items are gone and before DELETE
// /users/{userId} answers: the other domains remove what they keep about
// the user (the check-in, the user's name in the actions log), so that
// the 204 means the user is gone everywhere.

package user

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
