// Events the location import emits: recorded actions only (the Actions
// table; its stream runs the rules, the actions log lists them).

package locationcsv

// Action types recorded for imported locations when suppressEvents is
// false (metadata: operationId, source IMPORT).
const (
	ActionLocationCreated = "LOCATION_CREATED"
	ActionLocationUpdated = "LOCATION_UPDATED"
)
