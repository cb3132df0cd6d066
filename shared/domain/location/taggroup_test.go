package location_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestTagGroups(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token := activeUser(t, h)
	var groups struct {
		Items []map[string]any `json:"items"`
	}
	titles := func(t *testing.T, headers ts.Headers) string {
		t.Helper()
		h.Do("GET", "/locations/taggroups", nil, headers).Expect(t, 200, "").JSON(t, &groups)
		var out []string
		for _, g := range groups.Items {
			out = append(out, g["title"].(string))
		}
		return strings.Join(out, ",")
	}

	t.Run("EmptyList", func(t *testing.T) {
		if got := titles(t, h.Anon()); got != "" {
			t.Errorf("groups = %s", got)
		}
		if string(h.Do("GET", "/locations/taggroups", nil, h.Anon()).Body) != `{"items":[]}` {
			t.Errorf("empty list is not {\"items\":[]}")
		}
	})
	cuisine := h.Do("POST", "/locations/taggroups", map[string]any{"title": "Cuisine", "sort": 2, "tags": []string{"pizza", " burgers ", "pizza"}}, h.Admin()).Expect(t, 201, "").Map(t)
	h.Do("POST", "/locations/taggroups", map[string]any{"title": "Area"}, h.Admin()).Expect(t, 201, "")
	h.Do("POST", "/locations/taggroups", map[string]any{"title": "Amenities", "sort": 2}, h.Admin()).Expect(t, 201, "")
	id := cuisine["id"].(string)

	t.Run("Created", func(t *testing.T) {
		if cuisine["sort"] != 2.0 || cuisine["created"] == "" || strings.Join(toStrings(cuisine["tags"]), ",") != "pizza,burgers" {
			t.Errorf("created %v", cuisine)
		}
	})
	t.Run("OrderedBySortThenTitle", func(t *testing.T) {
		for _, headers := range []ts.Headers{h.Anon(), ts.Token(token), h.Admin()} {
			if got := titles(t, headers); got != "Area,Amenities,Cuisine" {
				t.Errorf("groups = %s", got)
			}
		}
	})
	t.Run("Update", func(t *testing.T) {
		g := h.Do("PUT", "/locations/taggroups/"+id, map[string]any{"tags": []string{"sushi"}, "sort": -1}, h.Admin()).Expect(t, 200, "").Map(t)
		if g["title"] != "Cuisine" || g["sort"] != -1.0 || strings.Join(toStrings(g["tags"]), ",") != "sushi" {
			t.Errorf("updated %v", g)
		}
		if got := titles(t, h.Anon()); got != "Cuisine,Area,Amenities" {
			t.Errorf("groups = %s", got)
		}
	})
	t.Run("OtherTenantSeesNone", func(t *testing.T) {
		if got := titles(t, otherTenant(h)); got != "" {
			t.Errorf("groups = %s", got)
		}
	})

	other := otherTenant(h)
	for _, tc := range []struct {
		name    string
		method  string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"ListNoTenant", "GET", "/locations/taggroups", nil, nil, 401, "UNAUTHORIZED"},
		{"CreateAnonymous", "POST", "/locations/taggroups", map[string]any{"title": "x"}, h.Anon(), 401, "UNAUTHORIZED"},
		{"CreateUser", "POST", "/locations/taggroups", map[string]any{"title": "x"}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"CreateNoTitle", "POST", "/locations/taggroups", map[string]any{"sort": 1}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateBlankTitle", "POST", "/locations/taggroups", map[string]any{"title": " "}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateTitleTooLong", "POST", "/locations/taggroups", map[string]any{"title": strings.Repeat("t", 201)}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateUnknownField", "POST", "/locations/taggroups", map[string]any{"title": "x", "colour": "red"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateSortNotInteger", "POST", "/locations/taggroups", map[string]any{"title": "x", "sort": 1.5}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateSortOutOfRange", "POST", "/locations/taggroups", map[string]any{"title": "x", "sort": 10000000}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateTagsNotArray", "POST", "/locations/taggroups", map[string]any{"title": "x", "tags": "a"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateEmptyTag", "POST", "/locations/taggroups", map[string]any{"title": "x", "tags": []string{""}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateMalformed", "POST", "/locations/taggroups", `{"title":`, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateEmptyBody", "POST", "/locations/taggroups", ``, h.Admin(), 422, "VALIDATION_FAILED"},
		{"CreateTooLarge", "POST", "/locations/taggroups", `{"title":"` + strings.Repeat("x", 1<<20) + `"}`, h.Admin(), 413, "PAYLOAD_TOO_LARGE"},
		{"UpdateUser", "PUT", "/locations/taggroups/" + id, map[string]any{"title": "x"}, ts.Token(token), 401, "UNAUTHORIZED"},
		{"UpdateUnknown", "PUT", "/locations/taggroups/5f1c0a9b2d3e4f5a6b7c8d9e", map[string]any{"title": "x"}, h.Admin(), 404, "NOT_FOUND"},
		{"UpdateFromOtherTenant", "PUT", "/locations/taggroups/" + id, map[string]any{"title": "x"}, other, 404, "NOT_FOUND"},
		{"UpdateBlankTitle", "PUT", "/locations/taggroups/" + id, map[string]any{"title": ""}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateNullTitle", "PUT", "/locations/taggroups/" + id, map[string]any{"title": nil}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateNullTags", "PUT", "/locations/taggroups/" + id, `{"tags":null}`, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateNullSort", "PUT", "/locations/taggroups/" + id, `{"sort": null}`, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateEmptyBody", "PUT", "/locations/taggroups/" + id, ``, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateUnknownField", "PUT", "/locations/taggroups/" + id, map[string]any{"id": "x"}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"UpdateWrongType", "PUT", "/locations/taggroups/" + id, map[string]any{"tags": map[string]any{}}, h.Admin(), 422, "VALIDATION_FAILED"},
		{"DeleteAnonymous", "DELETE", "/locations/taggroups/" + id, nil, h.Anon(), 401, "UNAUTHORIZED"},
		{"DeleteUser", "DELETE", "/locations/taggroups/" + id, nil, ts.Token(token), 401, "UNAUTHORIZED"},
		{"DeleteFromOtherTenant", "DELETE", "/locations/taggroups/" + id, nil, other, 404, "NOT_FOUND"},
		{"DeleteUnknown", "DELETE", "/locations/taggroups/nope", nil, h.Admin(), 404, "NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.Do(tc.method, tc.path, tc.body, tc.headers).Expect(t, tc.status, tc.code)
		})
	}
	t.Run("RejectedChangesNothing", func(t *testing.T) {
		if got := titles(t, h.Anon()); got != "Cuisine,Area,Amenities" {
			t.Errorf("groups = %s", got)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		h.Do("DELETE", "/locations/taggroups/"+id, nil, h.Admin()).Expect(t, 204, "")
		if got := titles(t, h.Anon()); got != "Area,Amenities" {
			t.Errorf("groups = %s", got)
		}
		h.Do("DELETE", "/locations/taggroups/"+id, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/locations/taggroups/"+id, map[string]any{"title": "back"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("AtMost100", func(t *testing.T) {
		t.Parallel()
		h := ts.New(t)
		for i := 0; i < 100; i++ {
			h.Do("POST", "/locations/taggroups", map[string]any{"title": "g"}, h.Admin()).Expect(t, 201, "")
		}
		h.Do("POST", "/locations/taggroups", map[string]any{"title": "one too many"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestTagGroupsConcurrent(t *testing.T) {
	t.Parallel()
	t.Run("ParallelUpdatesOfDifferentFieldsAllPersist", func(t *testing.T) {
		t.Parallel()
		h := ts.New(t)
		for round := 0; round < 3; round++ {
			g := h.Do("POST", "/locations/taggroups", map[string]any{"title": "Before", "sort": 0, "tags": []string{"old"}}, h.Admin()).Expect(t, 201, "").Map(t)
			id := g["id"].(string)
			var wg sync.WaitGroup
			for _, body := range []map[string]any{{"title": "After"}, {"sort": 7}, {"tags": []string{"new"}}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if r := h.Do("PUT", "/locations/taggroups/"+id, body, h.Admin()); r.Status != 200 {
						t.Errorf("PUT %v: status %d: %s", body, r.Status, r.Body)
					}
				}()
			}
			wg.Wait()
			var list struct {
				Items []map[string]any `json:"items"`
			}
			h.Do("GET", "/locations/taggroups", nil, h.Anon()).Expect(t, 200, "").JSON(t, &list)
			for _, got := range list.Items {
				if got["id"] == id && (got["title"] != "After" || got["sort"] != 7.0 || strings.Join(toStrings(got["tags"]), ",") != "new") {
					t.Errorf("round %d: lost an update: %v", round, got)
				}
			}
		}
	})
	t.Run("ParallelCreatesStopAt100", func(t *testing.T) {
		t.Parallel()
		h := ts.New(t)
		var ids []string
		for i := 0; i < 95; i++ {
			g := h.Do("POST", "/locations/taggroups", map[string]any{"title": "g"}, h.Admin()).Expect(t, 201, "").Map(t)
			ids = append(ids, g["id"].(string))
		}
		var (
			wg           sync.WaitGroup
			mu           sync.Mutex
			created, too int
		)
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := h.Do("POST", "/locations/taggroups", map[string]any{"title": "p"}, h.Admin())
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Status == 201:
					created++
				case r.Status == 422:
					too++
				default:
					t.Errorf("status %d: %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		var list struct {
			Items []map[string]any `json:"items"`
		}
		h.Do("GET", "/locations/taggroups", nil, h.Anon()).Expect(t, 200, "").JSON(t, &list)
		if len(list.Items) != 100 || created != 5 || too != 15 {
			t.Errorf("groups = %d, created %d, rejected %d; want 100, 5, 15", len(list.Items), created, too)
		}
		// Deleting frees a place.
		h.Do("DELETE", "/locations/taggroups/"+ids[0], nil, h.Admin()).Expect(t, 204, "")
		h.Do("POST", "/locations/taggroups", map[string]any{"title": "again"}, h.Admin()).Expect(t, 201, "")
		h.Do("POST", "/locations/taggroups", map[string]any{"title": "full"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}

// TestTagGroupsWrittenBeforeVersions checks groups stored before tag groups
// had a version and a counter: they update, and count toward the limit.
func TestTagGroupsWrittenBeforeVersions(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	ctx := context.Background()
	for i := 0; i < 99; i++ {
		id := fmt.Sprintf("legacy%018d", i)
		_, err := h.Deps.DB.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(h.Deps.Config.Tables.Locations),
			Item: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#TAGGROUPS"}, "sk": &types.AttributeValueMemberS{Value: id},
				"id": &types.AttributeValueMemberS{Value: id}, "title": &types.AttributeValueMemberS{Value: "Legacy"},
				"sort": &types.AttributeValueMemberN{Value: "0"}, "tags": &types.AttributeValueMemberL{},
				"created": &types.AttributeValueMemberS{Value: "2026-01-01T00:00:00.000Z"}, "updated": &types.AttributeValueMemberS{Value: "2026-01-01T00:00:00.000Z"},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Run("Update", func(t *testing.T) {
		for _, title := range []string{"Renamed", "Renamed again"} {
			g := h.Do("PUT", "/locations/taggroups/legacy000000000000000000", map[string]any{"title": title}, h.Admin()).Expect(t, 200, "").Map(t)
			if g["title"] != title {
				t.Errorf("updated %v", g)
			}
		}
	})
	t.Run("CountedTowardTheLimit", func(t *testing.T) {
		h.Do("POST", "/locations/taggroups", map[string]any{"title": "hundredth"}, h.Admin()).Expect(t, 201, "")
		h.Do("POST", "/locations/taggroups", map[string]any{"title": "too many"}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
	})
}
