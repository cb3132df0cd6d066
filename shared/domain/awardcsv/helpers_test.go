package awardcsv_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/action"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

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

// upload posts a CSV file to POST /awards/imports with a new nonce.
func upload(h *ts.Harness, query, content string) *ts.Resp {
	h.T.Helper()
	return uploadNonce(h, query, content, ts.Nonce())
}

func uploadNonce(h *ts.Harness, query, content, nonce string) *ts.Resp {
	h.T.Helper()
	body, ct := multipartBody(h.T, "file", "awards.csv", []byte(content))
	path := "/awards/imports"
	if query != "" {
		path += "?" + query
	}
	return h.Do("POST", path, body, h.Admin(), ts.Headers{"Content-Type", ct, "x-platform-req-nonce", nonce})
}

// importFile runs an import to its end and returns the operation.
func importFile(h *ts.Harness, query, content string) map[string]any {
	h.T.Helper()
	op := upload(h, query, content).Expect(h.T, 202, "").Map(h.T)
	return h.WaitOperation(op["_id"].(string))
}

// results downloads an operation's results file (result.href) and parses
// it.
func results(h *ts.Harness, op map[string]any) [][]string {
	h.T.Helper()
	if op["status"] != "DONE" {
		h.T.Fatalf("operation is %v: %v", op["status"], op["error"])
	}
	href := op["result"].(map[string]any)["href"].(string)
	if want := "/awards/imports/" + op["_id"].(string); href != want {
		h.T.Fatalf("result.href = %q, want %q", href, want)
	}
	resp := h.Do("GET", href, nil, h.Admin()).Expect(h.T, 200, "")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		h.T.Fatalf("content type = %q", ct)
	}
	r := csv.NewReader(bytes.NewReader(resp.Body))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
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

// newPerk creates a perk through POST /perks (a STAMP_CARD titled Card
// unless body says otherwise) and returns its id.
func newPerk(t testing.TB, h *ts.Harness, body map[string]any) string {
	t.Helper()
	b := map[string]any{"title": "Card", "template": "STAMP_CARD"}
	for k, v := range body {
		b[k] = v
	}
	return h.Do("POST", "/perks", b, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
}

// pointsOf is the perk points object {initial, max}.
func pointsOf(initial, max int) map[string]any {
	return map[string]any{"initial": initial, "max": max}
}

// users creates n ACTIVE users and returns their ids.
func users(t testing.TB, h *ts.Harness, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = h.AdminUser(t, "Ann", "Import")
	}
	return out
}

// clubPerk creates a segment with members and a CLUB perk tied to it, and
// returns the perk's id.
func clubPerk(t testing.TB, h *ts.Harness, initial int, members ...string) string {
	t.Helper()
	seg := h.Do("POST", "/segments", map[string]any{"title": "S", "type": "PERSISTENT"}, h.Admin()).Expect(t, 201, "").Map(t)["_id"].(string)
	if len(members) > 0 {
		h.Do("POST", "/segments/"+seg+"/members", map[string]any{"userIds": members}, h.Admin()).Expect(t, 200, "")
	}
	return newPerk(t, h, map[string]any{"title": "Club", "template": "CLUB", "segmentId": seg, "points": map[string]any{"initial": initial}})
}

// awards returns the points available of a user's awards by perk id
// (GET /users/{userId}/pointawards as the admin).
func awards(t testing.TB, h *ts.Harness, userID string) map[string]int {
	t.Helper()
	list := h.Do("GET", "/users/"+userID+"/pointawards", nil, h.Admin()).Expect(t, 200, "").Map(t)["awards"].([]any)
	out := map[string]int{}
	for _, a := range list {
		m := a.(map[string]any)
		out[m["perkId"].(string)] = int(m["points"].(map[string]any)["available"].(float64))
	}
	return out
}

// granted returns the user's AWARD_GRANTED actions.
func granted(t testing.TB, h *ts.Harness, userID string) []action.Action {
	t.Helper()
	all, err := h.Deps.Actions.ByUser(context.Background(), h.Tenant.ID, userID, 1000)
	if err != nil {
		t.Fatalf("actions: %v", err)
	}
	var out []action.Action
	for _, a := range all {
		if a.Type == "AWARD_GRANTED" {
			out = append(out, a)
		}
	}
	return out
}

// equalRecords fails the test unless got equals want (the results file
// without its header, or with it).
func equalRecords(t testing.TB, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("results have %d lines, want %d:\n%s\nwant:\n%s", len(got), len(want), csvOf(got...), csvOf(want...))
	}
	for i := range want {
		if strings.Join(got[i], ",") != strings.Join(want[i], ",") || len(got[i]) != len(want[i]) {
			t.Fatalf("results line %d = %q, want %q\nall:\n%s", i+1, got[i], want[i], csvOf(got...))
		}
	}
}
