package whole_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// checksItself names the functions whose routes may declare no access:
// the users domain's (accounts, users, avatars), whose handlers still
// check their callers themselves.
var checksItself = map[string]bool{"accounts": true, "users": true, "avatars": true}

// TestRoutesDeclareAccess proves that every other route declares who may
// call it (web.Route.Access), so a route added without one fails here
// rather than running unchecked.
func TestRoutesDeclareAccess(t *testing.T) {
	t.Parallel()
	d := &whole.Deps{}
	if err := d.Wire(); err != nil {
		t.Fatal(err)
	}
	for fn, routes := range d.Routes() {
		for _, r := range routes {
			if r.Access == web.Undeclared && !checksItself[fn] {
				t.Errorf("%s: %s declares no Access", fn, r.Pattern())
			}
		}
	}
}
