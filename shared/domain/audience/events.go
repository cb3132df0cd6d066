// Events the audience domain emits. Recorded actions (the Actions table;
// its stream runs the rules, the actions log lists them): SEGMENT_JOINED
// and SEGMENT_LEFT. In-transaction hooks (hook.Hooks, registered by a
// function's wiring): Service.OnJoin and Service.OnLeave, each with a
// Change, run inside the membership change's transaction (the award
// domain adds or revokes a CLUB or LEVEL perk's award there).

package audience

import (
	"time"

	"github.com/loyalty-platform/platform/shared/domain/action"
)

// Action types the audience domain records.
const (
	// ActionJoined: a user joined a segment (metadata: segmentId,
	// segmentTitle, expiresAt when the membership ends, source).
	ActionJoined = "SEGMENT_JOINED"
	// ActionLeft: a user left a segment (metadata: segmentId,
	// segmentTitle, reason REMOVED or EXPIRED).
	ActionLeft = "SEGMENT_LEFT"
)

// Reasons of SEGMENT_LEFT.
const (
	ReasonRemoved = "REMOVED"
	ReasonExpired = "EXPIRED"
	// ReasonRule: a rule's REMOVE_FROM_SEGMENT effect.
	ReasonRule = "RULE"
)

// Change is a user joining or leaving a segment, as the hooks see it.
type Change struct {
	TenantID    string
	TenantTitle string
	Segment     Segment
	User        Person
	// Reason is REMOVED or EXPIRED for a leave, empty for a join.
	Reason string
	At     time.Time
	// Actor is the action recording the change (its `when` and context
	// are the hooks' to copy).
	Actor action.Action
}
