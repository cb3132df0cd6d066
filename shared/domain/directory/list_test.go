package directory_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/account"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

type userList struct {
	Items []map[string]any `json:"items"`
	Page  struct {
		Limit    int    `json:"limit"`
		Count    int    `json:"count"`
		StartKey string `json:"startKey"`
		NextKey  string `json:"nextKey"`
	} `json:"page"`
}

func ids(l userList) []string {
	var out []string
	for _, u := range l.Items {
		out = append(out, u["id"].(string))
	}
	return out
}

var v4 = ts.Headers{"x-api-version", "4"}

func TestListUsers(t *testing.T) {
	h := ts.New(t)
	var created []string
	for i, name := range [][2]string{{"Ada", "Tester"}, {"Bob", "Testa"}, {"Cy", "Other"}, {"Dee", "Tess"}, {"Eve", "Zed"}} {
		u := h.Do("POST", "/users?autoActivate=true", ts.UserBody(name[0], name[1], "MOBILE", ts.UniqueMobile(), ""), h.Admin()).Expect(t, 201, "").Map(t)
		created = append(created, u["id"].(string))
		_ = i
		h.Clock.Advance(time.Second)
	}

	t.Run("AllInCreationOrder", func(t *testing.T) {
		var l userList
		h.Do("GET", "/users", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if got, want := strings.Join(ids(l), ","), strings.Join(created, ","); got != want {
			t.Errorf("ids = %s, want %s", got, want)
		}
		if l.Page.Limit != 100 || l.Page.Count != 5 || l.Page.NextKey != "" {
			t.Errorf("page = %+v", l.Page)
		}
	})
	t.Run("Paging", func(t *testing.T) {
		var got []string
		key := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("too many pages")
			}
			var l userList
			h.Do("GET", "/users?limit=2&startKey="+url.QueryEscape(key), nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
			got = append(got, ids(l)...)
			if l.Page.StartKey != key {
				t.Errorf("page.startKey = %q, want %q", l.Page.StartKey, key)
			}
			if l.Page.NextKey == "" {
				if l.Page.Count != 1 {
					t.Errorf("last page count = %d, want 1", l.Page.Count)
				}
				break
			}
			if l.Page.Count != 2 {
				t.Errorf("page count = %d, want 2", l.Page.Count)
			}
			key = l.Page.NextKey
		}
		if strings.Join(got, ",") != strings.Join(created, ",") {
			t.Errorf("paged ids = %v, want %v", got, created)
		}
	})
	t.Run("ExactPageHasNoNextKey", func(t *testing.T) {
		var l userList
		h.Do("GET", "/users?limit=5", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if l.Page.Count != 5 || l.Page.NextKey != "" {
			t.Errorf("page = %+v, want 5 items and no nextKey", l.Page)
		}
	})
	t.Run("Descending", func(t *testing.T) {
		var l userList
		h.Do("GET", "/users?sort=-created", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if got := ids(l); len(got) != 5 || got[0] != created[4] {
			t.Errorf("ids = %v, want newest first", got)
		}
	})
	t.Run("NameSearch", func(t *testing.T) {
		tests := []struct {
			q    string
			want []string
		}{
			{"tes", []string{created[0], created[1], created[3]}},
			{"TES", []string{created[0], created[1], created[3]}},
			{"tester", []string{created[0]}},
			{"ada tes", []string{created[0]}},
			{"zed", []string{created[4]}},
			{"xyz", nil},
		}
		for _, tc := range tests {
			t.Run(tc.q, func(t *testing.T) {
				var l userList
				h.Do("GET", "/users?name="+url.QueryEscape(tc.q), nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
				got := map[string]bool{}
				for _, id := range ids(l) {
					got[id] = true
				}
				if len(got) != len(tc.want) || len(l.Items) != len(tc.want) {
					t.Fatalf("found %v, want %v", ids(l), tc.want)
				}
				for _, id := range tc.want {
					if !got[id] {
						t.Errorf("missing %s in %v", id, ids(l))
					}
				}
			})
		}
	})
	t.Run("NameSearchPagesFilled", func(t *testing.T) {
		var l userList
		h.Do("GET", "/users?name=tes&limit=2", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if l.Page.Count != 2 || l.Page.NextKey == "" {
			t.Fatalf("page = %+v", l.Page)
		}
		var l2 userList
		h.Do("GET", "/users?name=tes&limit=2&startKey="+url.QueryEscape(l.Page.NextKey), nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l2)
		if l2.Page.Count != 1 || l2.Page.NextKey != "" {
			t.Fatalf("second page = %+v", l2.Page)
		}
	})
	t.Run("CreatedAfter", func(t *testing.T) {
		var all userList
		h.Do("GET", "/users", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &all)
		after := all.Items[2]["created"].(string)
		var l userList
		h.Do("GET", "/users?createdAfter="+url.QueryEscape(after), nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if got := ids(l); strings.Join(got, ",") != strings.Join(created[3:], ",") {
			t.Errorf("ids = %v, want %v", got, created[3:])
		}
	})
	t.Run("UpdatedAfter", func(t *testing.T) {
		h.Clock.Advance(time.Minute)
		mark := h.Clock.Now().Format(time.RFC3339)
		h.Clock.Advance(time.Second)
		h.Do("PUT", "/users/"+created[1], map[string]any{"subscribed": true}, h.Admin()).Expect(t, 200, "")
		var l userList
		h.Do("GET", "/users?sort=updatedAt&updatedAfter="+url.QueryEscape(mark), nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if got := ids(l); len(got) != 1 || got[0] != created[1] {
			t.Errorf("ids = %v, want [%s]", got, created[1])
		}
	})
	t.Run("LegacyShape", func(t *testing.T) {
		var l userList
		h.Do("GET", "/users?limit=1", nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 1 || l.Items[0]["_id"] != l.Items[0]["id"] || l.Items[0]["name"] == nil {
			t.Errorf("legacy items = %v", l.Items)
		}
		var cur userList
		h.Do("GET", "/users?limit=1", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &cur)
		if _, ok := cur.Items[0]["_id"]; ok {
			t.Errorf("current shape has the legacy _id")
		}
	})
	t.Run("Include", func(t *testing.T) {
		var l userList
		for _, q := range []string{"include=credentials,points", "include=credentials&include=points", "include[]=credentials&include[]=points"} {
			t.Run(q, func(t *testing.T) {
				h.Do("GET", "/users?limit=1&"+q, nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
				if creds, ok := l.Items[0]["credentials"].([]any); !ok || len(creds) != 1 {
					t.Errorf("credentials = %v", l.Items[0]["credentials"])
				}
			})
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		tests := []struct{ name, query string }{
			{"NameTooShort", "name=ab"},
			{"NameBlank", "name=%20%20%20"},
			{"NameTooLong", "name=" + strings.Repeat("x", 101)},
			{"NameTooLongMultibyte", "name=" + strings.Repeat("%C3%B6", 600)},
			{"BadPercentEscape", "name=%ZZ"},
			{"SemicolonSeparator", "name=x;y"},
			{"LimitZero", "limit=0"},
			{"LimitTooLarge", "limit=1001"},
			{"LimitNotNumber", "limit=x"},
			{"UnknownSort", "sort=name"},
			{"UnknownRole", "role=KING"},
			{"BadDate", "createdAfter=yesterday"},
			{"DateAfterYear9999InUTC", "updatedAfter=9999-12-31T23:59:59-05:00"},
			{"UnknownInclude", "include=everything"},
			{"ForgedStartKey", "startKey=forged"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("GET", "/users?"+tc.query, nil, h.Admin(), v4).Expect(t, 422, "VALIDATION_FAILED")
			})
		}
		h.Do("GET", "/users", nil, h.Admin(), ts.Headers{"x-api-version", "four"}).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("KeyBoundToQueryAndTenant", func(t *testing.T) {
		var l userList
		h.Do("GET", "/users?limit=2", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		key := url.QueryEscape(l.Page.NextKey)
		h.Do("GET", "/users?limit=2&sort=-created&startKey="+key, nil, h.Admin(), v4).Expect(t, 422, "VALIDATION_FAILED")
		other, otherKey := h.NewTenant(h.Tenant.Settings)
		h.Do("GET", "/users?limit=2&startKey="+key, nil, ts.Headers{"x-service-auth-token", otherKey, "x-application-id", other.ID}, v4).Expect(t, 422, "VALIDATION_FAILED")
		tampered := []byte(l.Page.NextKey)
		tampered[2] ^= 1
		h.Do("GET", "/users?limit=2&startKey="+url.QueryEscape(string(tampered)), nil, h.Admin(), v4).Expect(t, 422, "VALIDATION_FAILED")
	})
	t.Run("OtherTenantSeesNone", func(t *testing.T) {
		other, otherKey := h.NewTenant(h.Tenant.Settings)
		var l userList
		h.Do("GET", "/users?name=tes", nil, ts.Headers{"x-service-auth-token", otherKey, "x-application-id", other.ID}, v4).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 0 {
			t.Errorf("another tenant sees %v", ids(l))
		}
		h.Do("GET", "/users/"+created[0], nil, ts.Headers{"x-service-auth-token", otherKey}).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("Lookup", func(t *testing.T) {
		var l userList
		body := map[string]any{"userIds": []string{created[3], "missing", created[0], created[1]}}
		h.Do("POST", "/users/lookup?limit=2", body, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		if got := ids(l); len(got) != 2 || got[0] != created[3] || got[1] != created[0] {
			t.Fatalf("lookup = %v", got)
		}
		var l2 userList
		h.Do("POST", "/users/lookup?limit=2&startKey="+url.QueryEscape(l.Page.NextKey), body, h.Admin()).Expect(t, 200, "").JSON(t, &l2)
		if got := ids(l2); len(got) != 1 || got[0] != created[1] || l2.Page.NextKey != "" {
			t.Fatalf("lookup page 2 = %v %+v", got, l2.Page)
		}
		for name, b := range map[string]any{"Missing": map[string]any{}, "Empty": map[string]any{"userIds": []string{}}, "WrongType": map[string]any{"userIds": "x"}} {
			t.Run(name, func(t *testing.T) {
				h.Do("POST", "/users/lookup", b, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
			})
		}
		h.Do("POST", "/users/lookup", body, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
}

func TestGetAndUpdateUser(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Ada", "Tester")
	otherID, otherToken, _ := h.ActiveUser(t, "Bob", "Other")

	t.Run("Include", func(t *testing.T) {
		u := h.Do("GET", "/users/"+id+"?include=favouriteLocations,favouriteProducts,extended,points,credentials,checkin,segmentids,segments", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		for _, k := range []string{"favouriteLocations", "favouriteProducts", "extended", "points", "credentials", "checkin", "segmentIds", "segments"} {
			if _, ok := u[k]; !ok {
				t.Errorf("included %s missing", k)
			}
		}
		plain := h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		for _, k := range []string{"favouriteLocations", "extended", "points", "credentials"} {
			if _, ok := plain[k]; ok {
				t.Errorf("%s present without include", k)
			}
		}
	})
	t.Run("AnotherUsersData", func(t *testing.T) {
		h.Do("GET", "/users/"+otherID, nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/users/"+otherID, map[string]any{"firstName": "Hacked"}, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		got := h.Do("GET", "/users/"+otherID, nil, ts.Token(otherToken)).Expect(t, 200, "").Map(t)
		if got["firstName"] != "Bob" {
			t.Errorf("firstName = %v, want Bob", got["firstName"])
		}
	})
	t.Run("Anonymous", func(t *testing.T) {
		h.Do("GET", "/users/"+id, nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
		h.Do("PUT", "/users/"+id, map[string]any{"firstName": "X"}, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("NotFound", func(t *testing.T) {
		h.Do("GET", "/users/nobody", nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/users/nobody", map[string]any{"firstName": "X"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("BadUpdates", func(t *testing.T) {
		tests := []struct {
			name string
			body any
			code string
		}{
			{"ErrPointsNotEditable", map[string]any{"points": 100}, "POINTS_NOT_EDITABLE"},
			{"State", map[string]any{"state": "PENDING"}, "VALIDATION_FAILED"},
			{"TenantID", map[string]any{"tenantId": "other"}, "VALIDATION_FAILED"},
			{"OtherID", map[string]any{"id": "someone-else", "firstName": "X"}, "VALIDATION_FAILED"},
			{"OtherLegacyID", map[string]any{"_id": "someone-else"}, "VALIDATION_FAILED"},
			{"Balance", map[string]any{"balance": 1000}, "VALIDATION_FAILED"},
			{"Password", map[string]any{"password": "new-password-1"}, "VALIDATION_FAILED"},
			{"Deleted", map[string]any{"deleted": true}, "VALIDATION_FAILED"},
			{"RolesByUser", map[string]any{"roles": []string{"ADMIN"}}, "VALIDATION_FAILED"},
			{"UnknownField", map[string]any{"shoeSize": 9}, "VALIDATION_FAILED"},
			{"WrongType", map[string]any{"subscribed": "yes"}, "VALIDATION_FAILED"},
			{"BadTip", map[string]any{"defaultTip": map[string]any{"scheme": "PERCENTAGE", "amount": 150}}, "VALIDATION_FAILED"},
			{"BadTipScheme", map[string]any{"defaultTip": map[string]any{"scheme": "LOTS", "amount": 1}}, "VALIDATION_FAILED"},
			{"EmptyFirstName", map[string]any{"firstName": " "}, "VALIDATION_FAILED"},
			{"EmptyBody", map[string]any{}, "VALIDATION_FAILED"},
			{"Malformed", `{"firstName":`, "VALIDATION_FAILED"},
		}
		before := h.Do("GET", "/users/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("PUT", "/users/"+id, tc.body, ts.Token(token)).Expect(t, 422, tc.code)
			})
		}
		after := h.Do("GET", "/users/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if before["updatedAt"] != after["updatedAt"] {
			t.Errorf("a rejected update changed the user: %v -> %v", before["updatedAt"], after["updatedAt"])
		}
	})
	t.Run("Update", func(t *testing.T) {
		body := map[string]any{
			"firstName": "Augusta", "subscribed": true, "birthdate": "1990-12-10",
			"defaultTip":         map[string]any{"scheme": "PERCENTAGE", "amount": 12.5},
			"favouriteLocations": []string{"loc-1"}, "extended": map[string]any{"tier": "gold"},
			"hasAgreedToShareData": true, "apnDeviceToken": "device-token-abc",
		}
		u := h.Do("PUT", "/users/"+id, body, ts.Token(token)).Expect(t, 200, "").Map(t)
		if u["firstName"] != "Augusta" || u["fullName"] != "Augusta Tester" || u["subscribed"] != true {
			t.Errorf("updated user = %v", u)
		}
		if u["isRegisteredForPushNotifications"] != true {
			t.Errorf("push registration not recorded")
		}
		info := fmt.Sprint(u["additionalInformation"])
		if !strings.Contains(info, "10 December 1990") || !strings.Contains(info, "12.5%") {
			t.Errorf("additionalInformation = %v", info)
		}
		got := h.Do("GET", "/users/"+id+"?include=favouriteLocations,extended", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if fmt.Sprint(got["favouriteLocations"]) != "[loc-1]" || fmt.Sprint(got["extended"]) != "map[tier:gold]" {
			t.Errorf("got = %v", got)
		}
		var l userList
		h.Do("GET", "/users?name=augusta", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 1 || l.Items[0]["id"] != id {
			t.Errorf("search by new name = %v", ids(l))
		}
		h.Do("GET", "/users?name=ada", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		for _, u := range l.Items {
			if u["id"] == id {
				t.Errorf("old name still finds the user")
			}
		}
	})
	t.Run("GetModifyPut", func(t *testing.T) {
		// A client may send back what GET returned: read-only fields equal
		// to the stored values and server-derived fields are accepted.
		got := h.Do("GET", "/users/"+id+"?include=favouriteLocations,extended,credentials,checkin,segmentIds", nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		got["lastName"] = "Roundtrip"
		got["created"] = "2000-01-01T00:00:00Z"
		u := h.Do("PUT", "/users/"+id, got, ts.Token(token)).Expect(t, 200, "").Map(t)
		if u["lastName"] != "Roundtrip" || u["id"] != id || u["created"] == "2000-01-01T00:00:00Z" {
			t.Errorf("round trip update = %v", u)
		}
		legacy := map[string]any{"_id": id, "name": "whatever", "tenantId": h.Tenant.ID, "firstName": "Augusta"}
		h.Do("PUT", "/users/"+id, legacy, ts.Token(token)).Expect(t, 200, "")
	})
	t.Run("AdminSetsRoles", func(t *testing.T) {
		u := h.Do("PUT", "/users/"+otherID, map[string]any{"roles": []string{"USER", "ADMIN"}}, h.Admin()).Expect(t, 200, "").Map(t)
		if fmt.Sprint(u["roles"]) != "[USER ADMIN]" {
			t.Errorf("roles = %v", u["roles"])
		}
	})
}

func TestExpiredGuestIsNotListed(t *testing.T) {
	h := ts.New(t)
	g := h.Do("POST", "/guests", map[string]any{"firstName": "Gone"}, h.Anon()).Expect(t, 201, "").Map(t)
	gid := g["user"].(map[string]any)["id"].(string)
	listed := func(t *testing.T) (inList, inLookup bool) {
		t.Helper()
		var l struct{ Items []map[string]any }
		h.Do("GET", "/users?role=GUEST", nil, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		for _, u := range l.Items {
			inList = inList || u["id"] == gid
		}
		h.Do("POST", "/users/lookup", map[string]any{"userIds": []string{gid}}, h.Admin()).Expect(t, 200, "").JSON(t, &l)
		return inList, len(l.Items) > 0
	}
	if inList, inLookup := listed(t); !inList || !inLookup {
		t.Fatalf("a live guest: listed %v, looked up %v", inList, inLookup)
	}
	h.Clock.Advance(account.GuestLifetime + time.Second)
	if inList, inLookup := listed(t); inList || inLookup {
		t.Errorf("an expired guest: listed %v, looked up %v", inList, inLookup)
	}
}
