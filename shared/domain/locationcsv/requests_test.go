package locationcsv_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/job"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

const goodFile = header + "\nA,1,2\n"

// TestImportRequestValidation: bad calls are answered at once with
// {code, message} and start nothing.
func TestImportRequestValidation(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	body, ct := multipartBody(t, "file", "l.csv", []byte(goodFile))
	withNonce := func(extra ...string) ts.Headers {
		return append(ts.Headers{"Content-Type", ct, "x-platform-req-nonce", nonce()}, extra...)
	}
	otherBody, otherCT := multipartBody(t, "document", "l.csv", []byte(goodFile))
	var twoFiles bytes.Buffer
	mw := multipart.NewWriter(&twoFiles)
	for _, name := range []string{"a.csv", "b.csv"} {
		part, _ := mw.CreateFormFile("file", name)
		_, _ = part.Write([]byte(goodFile))
	}
	_ = mw.Close()
	twoCT := mw.FormDataContentType()
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
		{"NonceTooShort", "", body, ts.Headers{"Content-Type", ct, "x-platform-req-nonce", "3f2504e0-4f89-41d3-9a0c-0305e82c330"}, 422, "VALIDATION_FAILED"},
		{"BadDryRun", "dryRun=maybe", body, withNonce(), 422, "VALIDATION_FAILED"},
		{"BadSuppressEvents", "suppressEvents=2", body, withNonce(), 422, "VALIDATION_FAILED"},
		{"BadUpload", "upload=ftp", body, withNonce(), 422, "VALIDATION_FAILED"},
		{"JSONBody", "", `{"file":"x"}`, ts.Headers{"x-platform-req-nonce", nonce()}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"NoBody", "", nil, ts.Headers{"x-platform-req-nonce", nonce()}, 415, "UNSUPPORTED_MEDIA_TYPE"},
		{"NoBoundary", "", body, ts.Headers{"Content-Type", "multipart/form-data", "x-platform-req-nonce", nonce()}, 422, "VALIDATION_FAILED"},
		{"MalformedMultipart", "", "--zzz\r\nnot a part", ts.Headers{"Content-Type", "multipart/form-data; boundary=zzz", "x-platform-req-nonce", nonce()}, 422, "VALIDATION_FAILED"},
		{"NoFilePart", "", otherBody, ts.Headers{"Content-Type", otherCT, "x-platform-req-nonce", nonce()}, 422, "VALIDATION_FAILED"},
		{"TwoFiles", "", twoFiles.Bytes(), ts.Headers{"Content-Type", twoCT, "x-platform-req-nonce", nonce()}, 422, "VALIDATION_FAILED"},
		{"TooLarge", "", big, ts.Headers{"Content-Type", ct, "x-platform-req-nonce", nonce()}, 413, "PAYLOAD_TOO_LARGE"},
		{"BodyWithUploadURL", "upload=url", body, withNonce(), 422, "VALIDATION_FAILED"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := "/locations/imports"
			if c.query != "" {
				path += "?" + c.query
			}
			r := h.Do("POST", path, c.body, h.Admin(), c.headers).Expect(t, c.status, c.code)
			if c.code == "VALIDATION_FAILED" && strings.Contains(c.name, "Nonce") && !strings.Contains(string(r.Body), "x-platform-req-nonce") {
				t.Fatalf("the message does not name the header: %s", r.Body)
			}
		})
	}
}

// TestJobAccess: only an admin of the tenant starts jobs, reads their
// operations and downloads their files; another tenant's are 404.
func TestJobAccess(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	op := importFile(h, "dryRun=false", goodFile)
	id := op["_id"].(string)
	exp := h.Do("POST", "/locations/exports", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", nonce()}).Expect(t, 202, "").Map(t)
	exp = h.WaitOperation(exp["_id"].(string))
	expID := exp["_id"].(string)

	other, otherKey := h.NewTenant(h.Tenant.Settings)
	otherAdmin := ts.Headers{"x-service-auth-token", otherKey, "x-application-id", other.ID}
	userToken := activeUser(t, h)

	body, ct := multipartBody(t, "file", "l.csv", []byte(goodFile))
	cases := []struct {
		name    string
		method  string
		path    string
		body    any
		headers ts.Headers
		status  int
		code    string
	}{
		{"OperationAnon", "GET", "/operations/" + id, nil, h.Anon(), 401, "UNAUTHORIZED"},
		{"OperationUser", "GET", "/operations/" + id, nil, ts.Token(userToken), 401, "UNAUTHORIZED"},
		{"OperationOtherTenant", "GET", "/operations/" + id, nil, otherAdmin, 404, "NOT_FOUND"},
		{"OperationUnknown", "GET", "/operations/0123456789abcdef01234567", nil, h.Admin(), 404, "NOT_FOUND"},
		{"OperationMalformedID", "GET", "/operations/x%23y", nil, h.Admin(), 404, "NOT_FOUND"},
		{"ImportAnon", "POST", "/locations/imports", body, append(h.Anon(), "Content-Type", ct, "x-platform-req-nonce", nonce()), 401, "UNAUTHORIZED"},
		{"ImportUser", "POST", "/locations/imports", body, append(ts.Token(userToken), "Content-Type", ct, "x-platform-req-nonce", nonce()), 401, "UNAUTHORIZED"},
		{"ExportUser", "POST", "/locations/exports", nil, append(ts.Token(userToken), "x-platform-req-nonce", nonce()), 401, "UNAUTHORIZED"},
		{"ImportFileUser", "GET", "/locations/imports/" + id, nil, ts.Token(userToken), 401, "UNAUTHORIZED"},
		{"ImportFileOtherTenant", "GET", "/locations/imports/" + id, nil, otherAdmin, 404, "NOT_FOUND"},
		{"ExportFileOtherTenant", "GET", "/locations/exports/" + expID, nil, otherAdmin, 404, "NOT_FOUND"},
		{"ImportFileOfAnExport", "GET", "/locations/imports/" + expID, nil, h.Admin(), 404, "NOT_FOUND"},
		{"ExportFileOfAnImport", "GET", "/locations/exports/" + id, nil, h.Admin(), 404, "NOT_FOUND"},
		{"ImportFileUnknown", "GET", "/locations/imports/0123456789abcdef01234567", nil, h.Admin(), 404, "NOT_FOUND"},
		{"OperationOwnTenant", "GET", "/operations/" + id, nil, h.Admin(), 200, ""},
		{"ImportFileOwnTenant", "GET", "/locations/imports/" + id, nil, h.Admin(), 200, ""},
		{"ExportFileOwnTenant", "GET", "/locations/exports/" + expID, nil, h.Admin(), 200, ""},
		{"UnambiguousExportFileUser", "GET", "/locations/exports/files/" + expID, nil, ts.Token(userToken), 401, "UNAUTHORIZED"},
		{"UnambiguousExportFileOtherTenant", "GET", "/locations/exports/files/" + expID, nil, otherAdmin, 404, "NOT_FOUND"},
		{"UnambiguousExportFileOfAnImport", "GET", "/locations/exports/files/" + id, nil, h.Admin(), 404, "NOT_FOUND"},
		{"UnambiguousExportFileOwnTenant", "GET", "/locations/exports/files/" + expID, nil, h.Admin(), 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.Do(c.method, c.path, c.body, c.headers).Expect(t, c.status, c.code)
		})
	}
}

// activeUser registers an ACTIVE user and returns its session token.
func activeUser(t *testing.T, h *ts.Harness) string {
	t.Helper()
	_, token, _ := h.ActiveUser(t, "Ada", "Tester")
	return token
}

// TestNonce: a repeated nonce answers the same operation and starts
// nothing, also when the calls arrive together; a nonce of another request
// is 409.
func TestNonce(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	n := nonce()
	first := uploadNonce(h, "dryRun=false", goodFile, n).Expect(t, 202, "").Map(t)
	id := first["_id"].(string)
	if first["nonce"] != n || first["status"] != "PENDING" || first["result"] != nil || first["endedAt"] != nil {
		t.Fatalf("first answer = %v", first)
	}
	done := h.WaitOperation(id)

	t.Run("RepeatAnswersTheSameOperation", func(t *testing.T) {
		again := uploadNonce(h, "dryRun=false", goodFile, n).Expect(t, 202, "").Map(t)
		if again["_id"] != id || again["status"] != "DONE" || again["updatedAt"] != done["updatedAt"] {
			t.Fatalf("repeat = %v", again)
		}
		// Nothing ran again: one location, the operation unchanged.
		list := h.Do("GET", "/locations", nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got := len(list["items"].([]any)); got != 1 {
			t.Fatalf("locations = %d", got)
		}
	})
	t.Run("UpperCaseNonceIsTheSame", func(t *testing.T) {
		again := uploadNonce(h, "dryRun=false", goodFile, strings.ToUpper(n)).Expect(t, 202, "").Map(t)
		if again["_id"] != id {
			t.Fatalf("repeat = %v", again)
		}
	})
	t.Run("OtherFileIsConflict", func(t *testing.T) {
		uploadNonce(h, "dryRun=false", header+"\nB,1,2\n", n).Expect(t, 409, "CONFLICT")
	})
	t.Run("OtherParametersAreConflict", func(t *testing.T) {
		uploadNonce(h, "dryRun=true", goodFile, n).Expect(t, 409, "CONFLICT")
	})
	t.Run("OtherEndpointIsConflict", func(t *testing.T) {
		h.Do("POST", "/locations/exports", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 409, "CONFLICT")
	})
	t.Run("SameNonceInAnotherTenantIsAnotherOperation", func(t *testing.T) {
		other, key := h.NewTenant(h.Tenant.Settings)
		body, ct := multipartBody(t, "file", "locations.csv", []byte(goodFile))
		op := h.Do("POST", "/locations/imports?dryRun=false", body, ts.Headers{"x-service-auth-token", key, "x-application-id", other.ID, "Content-Type", ct, "x-platform-req-nonce", n}).Expect(t, 202, "").Map(t)
		if op["_id"] == id || op["tenantId"] != other.ID {
			t.Fatalf("operation = %v", op)
		}
	})
	t.Run("ConcurrentCallsCreateOneOperation", func(t *testing.T) {
		n := nonce()
		const calls = 8
		ids := make([]string, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids[i] = postImport(t, h, "dryRun=false", header+"\nConcurrent,1,2\n", n)
			}()
		}
		wg.Wait()
		for _, got := range ids {
			if got == "" || got != ids[0] {
				t.Fatalf("operation ids = %v", ids)
			}
		}
		op := h.WaitOperation(ids[0])
		if counts(op) != [4]int{1, 1, 0, 0} {
			t.Fatalf("operation = %v", op)
		}
		list := h.Do("GET", "/locations?title=Concurrent", nil, h.Admin()).Expect(t, 200, "").Map(t)
		if got := len(list["items"].([]any)); got != 1 {
			t.Fatalf("locations titled Concurrent = %d", got)
		}
	})
}

// postImport posts an import from a goroutine (no t.Fatal there) and
// returns the operation id, or "" on any failure.
func postImport(t *testing.T, h *ts.Harness, query, content, n string) string {
	body, ct := multipartBody(t, "file", "locations.csv", []byte(content))
	req, err := http.NewRequest("POST", h.Server.URL+"/locations/imports?"+query, bytes.NewReader(body))
	if err != nil {
		return ""
	}
	for i, hs := 0, h.Admin(); i+1 < len(hs); i += 2 {
		req.Header.Set(hs[i], hs[i+1])
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("x-platform-req-nonce", n)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 202 {
		t.Errorf("status %d: %s", resp.StatusCode, b)
		return ""
	}
	const key = `"_id":"`
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return ""
	}
	rest := b[i+len(key):]
	return string(rest[:bytes.IndexByte(rest, '"')])
}

// TestPresignedUpload: with upload=url the operation waits for the file;
// the client PUTs it to the presigned S3 URL and the upload starts the job.
func TestPresignedUpload(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	n := nonce()
	op := h.Do("POST", "/locations/imports?upload=url&dryRun=false", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 202, "").Map(t)
	up, ok := op["upload"].(map[string]any)
	if !ok || op["status"] != "PENDING" || up["method"] != "PUT" || !strings.Contains(up["url"].(string), "X-Amz-Signature=") {
		t.Fatalf("operation = %v", op)
	}
	// A repeat while the upload is awaited hands out a fresh URL for the
	// same operation.
	again := h.Do("POST", "/locations/imports?upload=url&dryRun=false", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 202, "").Map(t)
	if again["_id"] != op["_id"] || again["upload"] == nil {
		t.Fatalf("repeat = %v", again)
	}
	// Still PENDING: nothing runs before the upload.
	if got := h.Do("GET", "/operations/"+op["_id"].(string), nil, h.Admin()).Expect(t, 200, "").Map(t); got["status"] != "PENDING" || got["upload"] != nil {
		t.Fatalf("before the upload = %v", got)
	}
	req, err := http.NewRequest("PUT", up["url"].(string), strings.NewReader(header+"\nUploaded,1,2\nUploaded too,3,4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if hs, ok := up["headers"].(map[string]any); ok {
		for k, v := range hs {
			req.Header.Set(k, v.(string))
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("presigned PUT: %d", resp.StatusCode)
	}
	done := h.WaitOperation(op["_id"].(string))
	if done["status"] != "DONE" || counts(done) != [4]int{2, 2, 0, 0} || done["metadata"].(map[string]any)["upload"] != "url" {
		t.Fatalf("operation = %v", done)
	}
	// Once the upload started the job, a repeat hands out no URL.
	if got := h.Do("POST", "/locations/imports?upload=url&dryRun=false", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", n}).Expect(t, 202, "").Map(t); got["upload"] != nil {
		t.Fatalf("repeat after the upload = %v", got)
	}
}

// TestPresignedUploadNeverCame: an operation whose upload URL expired
// without the file turns FAILED.
func TestPresignedUploadNeverCame(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	op := h.Do("POST", "/locations/imports?upload=url", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", nonce()}).Expect(t, 202, "").Map(t)
	id := op["_id"].(string)
	h.Clock.Advance(job.DefaultPresignExpiry)
	if got := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t); got["status"] != "PENDING" {
		t.Fatalf("within the grace period = %v", got)
	}
	h.Clock.Advance(6 * time.Minute)
	got := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
	e, _ := got["error"].(map[string]any)
	if got["status"] != "FAILED" || e["code"] != "NOT_FOUND" || got["isRetryable"] != true || got["endedAt"] == nil {
		t.Fatalf("operation = %v", got)
	}
}
