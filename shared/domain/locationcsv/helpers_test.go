package locationcsv_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"mime/multipart"
	"strings"
	"sync/atomic"
	"testing"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// nonce returns a new GUID.
func nonce() string { return ts.Nonce() }

// multipartBody returns a multipart/form-data body with one file part
// named field, and its content type.
func multipartBody(t testing.TB, field, filename string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile(field, filename)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := part.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// upload posts a CSV file to POST /locations/imports with a new nonce.
func upload(h *ts.Harness, query string, content string) *ts.Resp {
	h.T.Helper()
	return uploadNonce(h, query, content, nonce())
}

func uploadNonce(h *ts.Harness, query, content, n string) *ts.Resp {
	h.T.Helper()
	body, ct := multipartBody(h.T, "file", "locations.csv", []byte(content))
	path := "/locations/imports"
	if query != "" {
		path += "?" + query
	}
	return h.Do("POST", path, body, h.Admin(), ts.Headers{"Content-Type", ct, "x-platform-req-nonce", n})
}

// importFile runs an import to its end and returns the operation.
func importFile(h *ts.Harness, query, content string) map[string]any {
	h.T.Helper()
	op := upload(h, query, content).Expect(h.T, 202, "").Map(h.T)
	return h.WaitOperation(op["_id"].(string))
}

// results downloads an operation's file (result.href) and parses it.
func results(h *ts.Harness, op map[string]any) [][]string {
	h.T.Helper()
	if op["status"] != "DONE" {
		h.T.Fatalf("operation is %v: %v", op["status"], op["error"])
	}
	href := op["result"].(map[string]any)["href"].(string)
	resp := h.Do("GET", href, nil, h.Admin()).Expect(h.T, 200, "")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		h.T.Fatalf("content type = %q", ct)
	}
	recs, err := csv.NewReader(bytes.NewReader(resp.Body)).ReadAll()
	if err != nil {
		h.T.Fatalf("results are not CSV: %v\n%s", err, resp.Body)
	}
	return recs
}

// column returns the values of a named column (header excluded).
func column(t testing.TB, recs [][]string, name string) []string {
	t.Helper()
	idx := -1
	for i, c := range recs[0] {
		if c == name {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no column %q in %v", name, recs[0])
	}
	out := make([]string, 0, len(recs)-1)
	for _, r := range recs[1:] {
		out = append(out, r[idx])
	}
	return out
}

// counts returns result.total, imported, skipped and errors.
func counts(op map[string]any) [4]int {
	r, _ := op["result"].(map[string]any)
	n := func(k string) int { f, _ := r[k].(float64); return int(f) }
	return [4]int{n("total"), n("imported"), n("skipped"), n("errors")}
}

// csvOf renders records as CSV text.
func csvOf(recs ...[]string) string {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.WriteAll(recs)
	return buf.String()
}

var titleSeq atomic.Int64

// title returns a title unique in the test binary.
func title(base string) string {
	return fmt.Sprintf("%s %d", base, titleSeq.Add(1))
}
