package directory_test

import (
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// address returns a valid address body.
func address(name string) map[string]any {
	return map[string]any{"name": name, "address": map[string]any{"line1": "1 Main St"}, "coordinates": []float64{-0.12, 51.5}}
}

func TestAddresses(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Addy", "Ress")
	otherID, otherToken, _ := h.ActiveUser(t, "Oth", "Er")
	home := map[string]any{
		"name":        "Home",
		"address":     map[string]any{"line1": "10 Downing Street", "city": "London", "postalCode": "SW1A 2AA", "country": "GB"},
		"coordinates": []float64{-0.1276, 51.5034},
	}
	t.Run("BadInput", func(t *testing.T) {
		with := func(k string, v any) map[string]any {
			b := map[string]any{}
			for kk, vv := range home {
				b[kk] = vv
			}
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
			return b
		}
		tests := []struct {
			name string
			body any
		}{
			{"MissingAddress", with("address", nil)},
			{"MissingCoordinates", with("coordinates", nil)},
			{"OneCoordinate", with("coordinates", []float64{1})},
			{"ThreeCoordinates", with("coordinates", []float64{1, 2, 3})},
			{"LongitudeOutOfRange", with("coordinates", []float64{181, 0})},
			{"LatitudeOutOfRange", with("coordinates", []float64{0, -91})},
			{"StringCoordinates", with("coordinates", []string{"a", "b"})},
			{"MissingLine1", with("address", map[string]any{"city": "London"})},
			{"UnknownAddressField", with("address", map[string]any{"line1": "x", "planet": "Earth"})},
			{"UnknownField", with("colour", "red")},
			{"IDNotSettable", with("_id", "mine")},
			{"Malformed", `{"address":`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("POST", "/users/"+id+"/addresses", tc.body, ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
			})
		}
		var list []any
		h.Do("GET", "/users/"+id+"/addresses", nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &list)
		if len(list) != 0 {
			t.Errorf("bad input wrote addresses: %v", list)
		}
	})
	var list []map[string]any
	h.Do("POST", "/users/"+id+"/addresses", home, ts.Token(token)).Expect(t, 201, "").JSON(t, &list)
	if len(list) != 1 || list[0]["_id"] == "" || list[0]["name"] != "Home" {
		t.Fatalf("list = %v", list)
	}
	addrID := list[0]["_id"].(string)
	work := map[string]any{"name": "Work", "address": map[string]any{"line1": "1 Main St"}, "coordinates": []float64{2.35, 48.85}}
	h.Do("POST", "/users/"+id+"/addresses", work, ts.Token(token)).Expect(t, 201, "").JSON(t, &list)
	if len(list) != 2 || list[1]["name"] != "Work" {
		t.Fatalf("list = %v", list)
	}
	t.Run("Update", func(t *testing.T) {
		home["note"] = "ring twice"
		h.Do("PUT", "/users/"+id+"/addresses/"+addrID, home, ts.Token(token)).Expect(t, 200, "").JSON(t, &list)
		if list[0]["note"] != "ring twice" || list[0]["_id"] != addrID {
			t.Errorf("list = %v", list)
		}
		h.Do("PUT", "/users/"+id+"/addresses/nope", home, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("AnotherUser", func(t *testing.T) {
		h.Do("GET", "/users/"+id+"/addresses", nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/users/"+id+"/addresses/"+addrID, home, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+id+"/addresses/"+addrID, nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+otherID+"/addresses/"+addrID, nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		other, key := h.NewTenant(h.Tenant.Settings)
		h.Do("GET", "/users/"+id+"/addresses", nil, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("AdminReads", func(t *testing.T) {
		h.Do("GET", "/users/"+id+"/addresses", nil, h.Admin()).Expect(t, 200, "").JSON(t, &list)
		if len(list) != 2 {
			t.Errorf("admin sees %d", len(list))
		}
	})
	t.Run("Delete", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/addresses/"+addrID, nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &list)
		if len(list) != 1 || list[0]["name"] != "Work" {
			t.Errorf("remaining = %v", list)
		}
		h.Do("DELETE", "/users/"+id+"/addresses/"+addrID, nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
	})
}

func TestAddressLimitUnderConcurrency(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Many", "Homes")
	for range 45 {
		h.Do("POST", "/users/"+id+"/addresses", address("Home"), ts.Token(token)).Expect(t, 201, "")
	}
	statuses := ts.Parallel(20, func(int) int {
		return h.Do("POST", "/users/"+id+"/addresses", address("Extra"), ts.Token(token)).Status
	})
	if got := ts.Tally(statuses); got[201] != 5 || got[422] != 15 {
		t.Errorf("statuses = %v, want 5 x 201 and 15 x 422", got)
	}
	var list []map[string]any
	h.Do("GET", "/users/"+id+"/addresses", nil, ts.Token(token)).Expect(t, 200, "").JSON(t, &list)
	if len(list) != 50 {
		t.Fatalf("%d addresses stored, want 50", len(list))
	}
	t.Run("DeleteFreesASlot", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/addresses/"+list[0]["_id"].(string), nil, ts.Token(token)).Expect(t, 200, "")
		h.Do("POST", "/users/"+id+"/addresses", address("Again"), ts.Token(token)).Expect(t, 201, "")
		h.Do("POST", "/users/"+id+"/addresses", address("Over"), ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("DeleteUnknownKeepsCount", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/addresses/nope", nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		h.Do("POST", "/users/"+id+"/addresses", address("Over"), ts.Token(token)).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func TestAddressKeepsEmptyStrings(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Empty", "Keys")
	tests := []struct {
		name string
		body map[string]any
	}{
		{"EmptyStringsSent", map[string]any{"name": "", "note": "", "address": map[string]any{"line1": "1 Main St", "line2": "", "region": ""}, "coordinates": []float64{0, 0}}},
		{"KeysNotSent", map[string]any{"address": map[string]any{"line1": "2 Main St"}, "coordinates": []float64{0, 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var list []map[string]any
			h.Do("POST", "/users/"+id+"/addresses", tc.body, ts.Token(token)).Expect(t, 201, "").JSON(t, &list)
			a := list[len(list)-1]
			for _, k := range []string{"name", "note"} {
				if v, ok := a[k].(string); !ok || v != "" {
					t.Errorf("%s = %#v, want \"\"", k, a[k])
				}
			}
			postal := a["address"].(map[string]any)
			for _, k := range []string{"line2", "city", "region", "postalCode", "country"} {
				if v, ok := postal[k].(string); !ok || v != "" {
					t.Errorf("address.%s = %#v, want \"\"", k, postal[k])
				}
			}
		})
	}
}
