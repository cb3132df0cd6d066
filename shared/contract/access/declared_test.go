package access_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// TestAllowedAgreesWithAccess proves that the matrix's allowed table and
// the routes' declared web.Access say the same: a route open to anonymous
// callers declares Public or Anonymous, an Admin route opens to none of
// the matrix's callers, and a Self route (which names the victim) to none
// but an admin.
func TestAllowedAgreesWithAccess(t *testing.T) {
	d := &whole.Deps{}
	if err := d.Wire(); err != nil {
		t.Fatal(err)
	}
	for _, routes := range d.Routes() {
		for _, r := range routes {
			key := r.Pattern()
			switch {
			case r.Access == web.Undeclared:
				t.Errorf("%s: declares no Access", key)
			case isAllowed(key, anonymous) && r.Access != web.Public && r.Access != web.Anonymous:
				t.Errorf("%s: allowed to anonymous callers, but declares Access %s", key, r.Access)
			case (r.Access == web.Admin || r.Access == web.Self) && len(allowed[key]) > 0:
				t.Errorf("%s: declares Access %s, but the allowed table opens it to %v", key, r.Access, allowed[key])
			}
		}
	}
}
