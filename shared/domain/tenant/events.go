// Events the tenant domain emits. Recorded actions: TENANT_UPDATED
// (ActionUpdated), in the transaction of each PUT /tenant that changes
// something. Hooks: Service.OnKeyRotated
// (hook.After) runs, with a KeyRotated, once a tenant's service key is
// rotated and before the rotation answers: the admin sessions made from
// the old key end (shared/platform/auth), so that the old key's sessions
// are gone when the operator gets the new key.

package tenant

// KeyRotated is a rotation of a tenant's service key, as the
// OnKeyRotated hooks see it.
type KeyRotated struct {
	TenantID string
}

// ActionUpdated is recorded when a tenant's admin changes its title or
// settings (PUT /tenant). Metadata: fields (the changed fields' names,
// such as title or settings.ssoClientIds; never their values), by
// (SERVICE_KEY or ADMIN) and, for an admin user's session, userId. Its
// context names the tenant only.
const ActionUpdated = "TENANT_UPDATED"
