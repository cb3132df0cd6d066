package whole_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/web"
	"github.com/loyalty-platform/platform/shared/wire/whole"
)

// TestRoutesDeclareAccess proves that every route of every function
// declares who may call it (web.Route.Access), so a route added without one fails here
// rather than running unchecked.
func TestRoutesDeclareAccess(t *testing.T) {
	t.Parallel()
	d := &whole.Deps{}
	if err := d.Wire(); err != nil {
		t.Fatal(err)
	}
	for fn, routes := range d.Routes() {
		for _, r := range routes {
			if r.Access == web.Undeclared {
				t.Errorf("%s: %s declares no Access", fn, r.Pattern())
			}
		}
	}
}
