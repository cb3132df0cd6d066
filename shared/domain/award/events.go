// Events the award domain emits: recorded actions only (the Actions
// table; its stream runs the rules, the actions log lists them), each in
// the transaction of the change it tells of. The award domain reacts to
// the audience domain's OnJoin and OnLeave hooks (OnSegment) and declares
// no hooks of its own.

package award

// Action types the award domain records. The actions that move an
// award's points (a grant that reads the award, a redemption, a refund, a
// reversal, POINTS_EXPIRED) also carry balanceAfter, the same number as
// pointsAvailable, which every points and money action of the platform
// carries where the change knows it.
const (
	// ActionGranted: points granted (metadata: awardId, perkId, points
	// asked, pointsGranted after the perk's max, pointsAvailable after,
	// source API, IMPORT, RULE or SEGMENT, and operationId for imports).
	ActionGranted = "AWARD_GRANTED"
	// ActionRedeemed: points redeemed (metadata: awardId, perkId, points,
	// pointsAvailable).
	ActionRedeemed = "AWARD_REDEEMED"
	// ActionRefunded: redeemed points given back (metadata as redeemed).
	ActionRefunded = "AWARD_REFUNDED"
	// ActionRevoked: a CLUB or LEVEL award the user no longer holds since
	// leaving its segment (metadata: awardId, perkId, segmentId, reason).
	ActionRevoked = "AWARD_REVOKED"
)

// Sources of a grant (metadata.source of AWARD_GRANTED).
const (
	SourceAPI     = "API"
	SourceImport  = "IMPORT"
	SourceRule    = "RULE"
	SourceSegment = "SEGMENT"
)
