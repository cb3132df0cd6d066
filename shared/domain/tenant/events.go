// Events the tenant domain emits. Hooks: Service.OnKeyRotated
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
