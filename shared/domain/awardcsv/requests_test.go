package awardcsv_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestImportAccess: only an admin of the tenant starts imports and
// downloads their results; a USER is 401, another tenant's file is 404.
func TestImportAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	a := newPerk(t, h, nil)
	u, token, _ := h.ActiveUser(t, "Una", "User")
	file := csvOf([]string{"user_id", "perk_id"}, []string{u, a})
	op := importFile(h, "", file)
	id := op["_id"].(string)
	loc := h.Do("POST", "/locations/exports", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, "").Map(t)
	loc = h.WaitOperation(loc["_id"].(string))

	other, otherKey := h.NewTenant(h.Tenant.Settings)
	otherAdmin := ts.Headers{"x-service-auth-token", otherKey, "x-application-id", other.ID}
	body, ct := multipartBody(t, "file", "a.csv", []byte(file))
	cases := []struct {
		name    string
		method  string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"ImportUser", "POST", "/awards/imports", body, append(ts.Token(token), "Content-Type", ct, "x-platform-req-nonce", ts.Nonce()), 401, "UNAUTHORIZED"},
		{"ImportAnon", "POST", "/awards/imports", body, append(h.Anon(), "Content-Type", ct, "x-platform-req-nonce", ts.Nonce()), 401, "UNAUTHORIZED"},
		{"FileUser", "GET", "/awards/imports/" + id, nil, ts.Token(token), 401, "UNAUTHORIZED"},
		{"FileAnon", "GET", "/awards/imports/" + id, nil, h.Anon(), 401, "UNAUTHORIZED"},
		{"FileOtherTenant", "GET", "/awards/imports/" + id, nil, otherAdmin, 404, "NOT_FOUND"},
		{"FileUnknown", "GET", "/awards/imports/0123456789abcdef01234567", nil, h.Admin(), 404, "NOT_FOUND"},
		{"FileMalformedID", "GET", "/awards/imports/x%23y", nil, h.Admin(), 404, "NOT_FOUND"},
		{"FileOfALocationJob", "GET", "/awards/imports/" + loc["_id"].(string), nil, h.Admin(), 404, "NOT_FOUND"},
		{"LocationFileOfAnAwardImport", "GET", "/locations/imports/" + id, nil, h.Admin(), 404, "NOT_FOUND"},
		{"FileOwnTenant", "GET", "/awards/imports/" + id, nil, h.Admin(), 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.Do(c.method, c.path, c.body, c.headers).Expect(t, c.status, c.code)
		})
	}
}

// TestImportRequestValidation: bad calls are answered at once with {code,
// message} and start nothing.
func TestImportRequestValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	file := []byte("user_id,perk_id\n")
	body, ct := multipartBody(t, "file", "a.csv", file)
	withNonce := func() ts.Headers { return ts.Headers{"Content-Type", ct, "x-platform-req-nonce", ts.Nonce()} }
	otherBody, otherCT := multipartBody(t, "document", "a.csv", file)
	big := bytes.Repeat([]byte("x"), job.MaxDirectUpload+1)
	cases := []struct {
		name    string
		query   string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"MissingNonce", "", body, ts.Headers{"Content-Type", ct}, 422, "VALIDATION_FAILED"},
		{"NonceNotAGUID", "", body, ts.Headers{"Content-Type", ct, "x-platform-req-nonce", "not-a-guid"}, 422, "VALIDATION_FAILED"},
		{"BadDryRun", "dryRun=maybe", body, withNonce(), 422, "VALIDATION_FAILED"},
		{"BadSuppressEvents", "suppressEvents=2", body, withNonce(), 422, "VALIDATION_FAILED"},
		{"BadUpload", "upload=ftp", body, withNonce(), 422, "VALIDATION_FAILED"},
		{"JSONBody", "", `{"file":"x"}`, ts.Headers{"x-platform-req-nonce", ts.Nonce()}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"NoFilePart", "", otherBody, ts.Headers{"Content-Type", otherCT, "x-platform-req-nonce", ts.Nonce()}, 422, "VALIDATION_FAILED"},
		{"TooLarge", "", big, withNonce(), 413, "PAYLOAD_TOO_LARGE"},
		{"BodyWithUploadURL", "upload=url", body, withNonce(), 422, "VALIDATION_FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/awards/imports"
			if c.query != "" {
				path += "?" + c.query
			}
			h.Do("POST", path, c.body, h.Admin(), c.headers).Expect(t, c.status, c.code)
		})
	}
	t.Run("UploadURL", func(t *testing.T) {
		op := h.Do("POST", "/awards/imports?upload=url", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, "").Map(t)
		up, _ := op["upload"].(map[string]any)
		if op["status"] != "PENDING" || up["url"] == nil || up["method"] != "PUT" {
			t.Fatalf("operation = %v", op)
		}
	})
}

// TestUploadTooLarge: a file uploaded to the presigned URL that is larger
// than the jobs' input limit FAILS the operation with PAYLOAD_TOO_LARGE
// before any row is read (the limit is lowered for the test).
func TestUploadTooLarge(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	capture := h.CaptureS3("jobs")
	a := newPerk(t, h, nil)
	u := h.AdminUser(t, "Lara", "Large")
	op := h.Do("POST", "/awards/imports?upload=url&dryRun=false", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, "").Map(t)
	file := csvOf([]string{"user_id", "perk_id"}, []string{u, a}, []string{u, a})
	up := op["upload"].(map[string]any)
	req, err := http.NewRequest("PUT", up["url"].(string), strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("presigned PUT: %d", resp.StatusCode)
	}
	ev := capture.Next(t)
	jobs := h.Deps.Jobs
	jobs.MaxInput = int64(len(file) - 1)
	defer func() { jobs.MaxInput = 0 }()
	if err := jobs.HandleS3(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	got := h.Do("GET", "/operations/"+op["_id"].(string), nil, h.Admin()).Expect(t, 200, "").Map(t)
	e, _ := got["error"].(map[string]any)
	if got["status"] != "FAILED" || e["code"] != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("operation = %v", got)
	}
	if n := len(h.Do("GET", "/users/"+u+"/pointawards", nil, h.Admin()).Expect(t, 200, "").Map(t)["awards"].([]any)); n != 0 {
		t.Errorf("the refused file granted %d awards", n)
	}
}
