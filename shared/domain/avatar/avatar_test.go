package avatar_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// testJPEG returns a small real JPEG image.
func testJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for x := 0; x < 8; x++ {
		img.Set(x, x, color.RGBA{R: 200, A: 255})
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestAvatar(t *testing.T) {
	h := ts.New(t)
	id, token, _ := h.ActiveUser(t, "Phil", "Photo")
	otherID, _, _ := h.ActiveUser(t, "Oth", "Er")
	jpg := testJPEG(t)
	asJPEG := ts.Headers{"Content-Type", "image/jpeg"}

	t.Run("BadInput", func(t *testing.T) {
		tests := []struct {
			name   string
			body   []byte
			ct     string
			status int
			code   string
		}{
			{"NotJPEGContentType", jpg, "image/png", 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"PNGBytes", []byte("\x89PNG\r\n\x1a\nrest"), "image/jpeg", 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"TruncatedJPEG", jpg[:4], "image/jpeg", 415, "UNSUPPORTED_MEDIA_TYPE"},
			{"Empty", nil, "image/jpeg", 422, "VALIDATION_FAILED"},
			{"TooLarge", append(append([]byte{}, jpg...), bytes.Repeat([]byte{0}, 4<<20)...), "image/jpeg", 413, "PAYLOAD_TOO_LARGE"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				h.Do("PUT", "/users/"+id+"/avatar", tc.body, ts.Token(token), ts.Headers{"Content-Type", tc.ct}).Expect(t, tc.status, tc.code)
			})
		}
		u := h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if u["hasProfilePhoto"] != false {
			t.Errorf("a rejected upload set hasProfilePhoto")
		}
	})
	t.Run("AnotherUsersAvatar", func(t *testing.T) {
		h.Do("PUT", "/users/"+otherID+"/avatar", jpg, ts.Token(token), asJPEG).Expect(t, 404, "NOT_FOUND")
		h.Do("DELETE", "/users/"+otherID+"/avatar", nil, ts.Token(token)).Expect(t, 404, "NOT_FOUND")
		h.Do("PUT", "/users/"+id+"/avatar", jpg, h.Anon(), asJPEG).Expect(t, 401, "UNAUTHORIZED")
		other, key := h.NewTenant(h.Tenant.Settings)
		h.Do("PUT", "/users/"+id+"/avatar", jpg, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID}, asJPEG).Expect(t, 404, "NOT_FOUND")
	})
	t.Run("Upload", func(t *testing.T) {
		u := h.Do("PUT", "/users/"+id+"/avatar", jpg, ts.Token(token), asJPEG).Expect(t, 200, "").Map(t)
		if u["hasProfilePhoto"] != true || !strings.HasSuffix(u["profilePhotoUrl"].(string), "/users/avatars/"+id+".jpg") {
			t.Fatalf("user = %v", u)
		}
		out, err := h.Deps.S3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(h.Deps.Config.Buckets.Media), Key: aws.String("users/avatars/" + id + ".jpg")})
		if err != nil {
			t.Fatalf("get stored photo: %v", err)
		}
		got, _ := io.ReadAll(out.Body)
		if !bytes.Equal(got, jpg) {
			t.Errorf("stored %d bytes, want the uploaded %d", len(got), len(jpg))
		}
	})
	t.Run("AdminUploads", func(t *testing.T) {
		h.Do("PUT", "/users/"+otherID+"/avatar", jpg, h.Admin(), asJPEG).Expect(t, 200, "")
	})
	t.Run("Delete", func(t *testing.T) {
		h.Do("DELETE", "/users/"+id+"/avatar", nil, ts.Token(token)).Expect(t, 204, "")
		u := h.Do("GET", "/users/"+id, nil, ts.Token(token)).Expect(t, 200, "").Map(t)
		if u["hasProfilePhoto"] != false {
			t.Errorf("hasProfilePhoto still true")
		}
		if _, err := h.Deps.S3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(h.Deps.Config.Buckets.Media), Key: aws.String("users/avatars/" + id + ".jpg")}); err == nil {
			t.Errorf("photo still stored")
		}
		h.Do("DELETE", "/users/"+id+"/avatar", nil, ts.Token(token)).Expect(t, 204, "")
	})
}
