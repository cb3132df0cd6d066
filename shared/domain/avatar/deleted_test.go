package avatar_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestDeletedUserAvatar: a deleted user's avatar is gone like its other
// sub-resources (404), also for DELETE.
func TestDeletedUserAvatar(t *testing.T) {
	h := ts.New(t)
	id, _, _ := h.ActiveUser(t, "Gone", "Away")
	h.Do("DELETE", "/users/"+id, nil, h.Admin()).Expect(t, 204, "")
	tests := []struct {
		name, method string
		body         any
	}{
		{"Delete", "DELETE", nil},
		{"Put", "PUT", ts.JPEG()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.Do(tt.method, "/users/"+id+"/avatar", tt.body, h.Admin(), ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 404, "NOT_FOUND")
		})
	}
}

func TestAvatarOfDeletedUser(t *testing.T) {
	h := ts.New(t)
	jpg := testJPEG(t)
	asJPEG := ts.Headers{"Content-Type", "image/jpeg"}
	stored := func(id string) bool {
		_, err := h.Deps.S3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(h.Deps.Config.Buckets.Media), Key: aws.String("users/avatars/" + id + ".jpg")})
		return err == nil
	}
	t.Run("DeletedFirst", func(t *testing.T) {
		id, _, _ := h.ActiveUser(t, "Gone", "Photo")
		h.Do("DELETE", "/users/"+id, nil, h.Admin()).Expect(t, 204, "")
		h.Do("PUT", "/users/"+id+"/avatar", jpg, h.Admin(), asJPEG).Expect(t, 404, "NOT_FOUND")
		if stored(id) {
			t.Errorf("the photo of a deleted user is stored")
		}
	})
	t.Run("DeletedMeanwhile", func(t *testing.T) {
		for range 10 {
			id, _, _ := h.ActiveUser(t, "Race", "Photo")
			ts.Parallel(2, func(i int) int {
				if i == 0 {
					return h.Do("PUT", "/users/"+id+"/avatar", jpg, h.Admin(), asJPEG).Status
				}
				return h.Do("DELETE", "/users/"+id, nil, h.Admin()).Status
			})
			if stored(id) {
				t.Fatalf("the photo of deleted user %s is stored", id)
			}
		}
	})
}

func TestDeleteUser(t *testing.T) {
	h := ts.New(t)
	id, token, email := h.ActiveUser(t, "Del", "Eted")
	otherID, otherToken, _ := h.ActiveUser(t, "Oth", "Er")
	mobile := ts.UniqueMobile()
	h.Do("POST", "/users/"+id+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE", "skipVerification": true}, h.Admin()).Expect(t, 201, "")
	h.Do("POST", "/users/"+id+"/addresses", map[string]any{"address": map[string]any{"line1": "1 Main St"}, "coordinates": []float64{1, 2}}, ts.Token(token)).Expect(t, 201, "")
	h.Do("PUT", "/users/"+id+"/avatar", testJPEG(t), ts.Token(token), ts.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "")
	h.Do("PUT", "/users/"+id, map[string]any{"birthdate": "1990-01-02", "extended": map[string]any{"k": "v"}, "gcmDeviceToken": "tok"}, ts.Token(token)).Expect(t, 200, "")

	t.Run("AnotherUserCannot", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id, nil, ts.Token(otherToken)).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+id, nil, h.Anon()).Expect(t, 401, "UNAUTHORIZED")
		other, key := h.NewTenant(h.Tenant.Settings)
		h.Do("DELETE", "/users/"+id, nil, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}).Expect(t, 404, "NOT_FOUND")
	})
	h.Do("DELETE", "/users/"+id, nil, ts.Token(token)).Expect(t, 204, "")

	t.Run("SessionsEnded", func(t *testing.T) {
		h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("Redacted", func(t *testing.T) {
		u := h.Do("GET", "/users/"+id+"?include=credentials,extended,favouriteLocations", nil, h.Admin()).Expect(t, 200, "").Map(t)
		if u["deleted"] != true || u["id"] != id {
			t.Fatalf("user = %v", u)
		}
		for _, k := range []string{"firstName", "lastName", "fullName"} {
			if u[k] != "" {
				t.Errorf("%s = %v, want redacted", k, u[k])
			}
		}
		for _, k := range []string{"birthdate", "profilePhotoUrl"} {
			if _, ok := u[k]; ok {
				t.Errorf("%s still present", k)
			}
		}
		if u["hasProfilePhoto"] != false || u["isRegisteredForPushNotifications"] != false || len(u["credentials"].([]any)) != 0 || len(u["extended"].(map[string]any)) != 0 {
			t.Errorf("user = %v", u)
		}
		h.Do("GET", "/users/"+id+"/addresses", nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		// The address items themselves are gone, not only hidden.
		out, err := h.Deps.DB.Query(context.Background(), &dynamodb.QueryInput{
			TableName:              aws.String(h.Deps.Config.Tables.Users),
			KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :addr)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#USER#" + id}, ":addr": &types.AttributeValueMemberS{Value: "ADDR#"},
			},
		})
		if err != nil || len(out.Items) != 0 {
			t.Errorf("address items after deletion: %v, %v", out, err)
		}
	})
	t.Run("CannotLogIn", func(t *testing.T) {
		h.Do("GET", "/users/login", nil, h.Basic(email, "correct-horse-9", "EMAIL")).Expect(t, 401, "UNAUTHORIZED")
	})
	t.Run("NotFoundBySearch", func(t *testing.T) {
		v4 := ts.Headers{"x-api-version", "4"}
		var l struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		h.Do("GET", "/users?name=del", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		if len(l.Items) != 0 {
			t.Errorf("search finds %v", l.Items)
		}
		if n := h.CountUsersWith(t, url.QueryEscape(email)); n != 0 {
			t.Errorf("credential search finds %d", n)
		}
		h.Do("GET", "/users?limit=1000", nil, h.Admin(), v4).Expect(t, 200, "").JSON(t, &l)
		for _, u := range l.Items {
			if u.ID == id {
				t.Errorf("deleted user listed")
			}
		}
	})
	t.Run("IdentifiersReleased", func(t *testing.T) {
		h.Do("POST", "/users", ts.UserBody("New", "Owner", "EMAIL", email, ""), h.Anon()).Expect(t, 201, "")
		h.Do("POST", "/users/"+otherID+"/credentials", map[string]any{"id": mobile, "provider": "MOBILE"}, ts.Token(otherToken)).Expect(t, 201, "")
	})
	t.Run("DeleteAgain", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id, nil, h.Admin()).Expect(t, 204, "")
	})
	t.Run("DeletedCannotBeUpdated", func(t *testing.T) {
		h.Do("PUT", "/users/"+id, map[string]any{"firstName": "Back"}, h.Admin()).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("DeletedHasNoSubResources", func(t *testing.T) {
		for _, path := range []string{"/addresses", "/checkins"} {
			h.Do("GET", "/users/"+id+path, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
		}
	})
}
