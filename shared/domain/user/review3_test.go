package user_test

import (
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestDeletedUserAvatar: a deleted user's avatar is gone like its other
// sub-resources (404), also for DELETE.
func TestDeletedUserAvatar(t *testing.T) {
	h := ts.New(t)
	id, _, _ := activeUser(t, h, "Gone", "Away")
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
