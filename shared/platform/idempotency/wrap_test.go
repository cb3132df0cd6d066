package idempotency_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/platform/apierr"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/idempotency"
	"github.com/loyalty-platform/platform/shared/platform/web"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// rig is a function of test routes wrapped by a real Store on DynamoDB
// Local, behind the real middleware (authentication by the harness
// tenant's service key), counting the runs of each route.
type rig struct {
	h      *ts.Harness
	srv    *httptest.Server
	runs   map[string]*atomic.Int64
	gate   chan struct{}
	inside chan struct{}
}

func (g *rig) count(route string) int64 { return g.runs[route].Load() }

func newRig(t *testing.T) *rig {
	t.Helper()
	h := ts.New(t)
	g := &rig{h: h, runs: map[string]*atomic.Int64{}, gate: make(chan struct{}), inside: make(chan struct{}, 8)}
	for _, n := range []string{"block", "status", "panic", "big", "echo", "commit"} {
		g.runs[n] = &atomic.Int64{}
	}
	routes := []web.Route{
		// The first run of block waits for the test to close gate.
		{Method: "POST", Path: "/t/block", Idempotent: true, Handler: func(w http.ResponseWriter, r *http.Request) {
			n := g.runs["block"].Add(1)
			if n == 1 {
				g.inside <- struct{}{}
				<-g.gate
			}
			web.JSON(w, http.StatusCreated, map[string]any{"run": n})
		}},
		{Method: "POST", Path: "/t/status/{code}", Idempotent: true, Handler: func(w http.ResponseWriter, r *http.Request) {
			n := g.runs["status"].Add(1)
			code, _ := strconv.Atoi(r.PathValue("code"))
			web.JSON(w, code, map[string]any{"run": n})
		}},
		{Method: "POST", Path: "/t/panic", Idempotent: true, Handler: func(w http.ResponseWriter, r *http.Request) {
			if g.runs["panic"].Add(1) == 1 {
				panic("first run fails")
			}
			web.JSON(w, http.StatusOK, map[string]any{"ok": true})
		}},
		{Method: "POST", Path: "/t/big", Idempotent: true, Handler: func(w http.ResponseWriter, r *http.Request) {
			g.runs["big"].Add(1)
			var b []byte
			switch r.URL.Query().Get("kind") {
			case "zeros": // 1 MB that compresses far below the limit
				b = bytes.Repeat([]byte("0"), 1<<20)
			default: // 400 KB that does not compress
				b = make([]byte, 400<<10)
				_, _ = rand.Read(b)
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(b)
		}},
		// commit writes an item in a transaction (ddb.Tx), then answers
		// code.
		{Method: "POST", Path: "/t/commit/{code}", Idempotent: true, Handler: func(w http.ResponseWriter, r *http.Request) {
			n := g.runs["commit"].Add(1)
			var tx ddb.Tx
			tx.Add("test", types.TransactWriteItem{Put: &types.Put{
				TableName: aws.String(h.Deps.Config.Tables.Operations),
				Item: map[string]types.AttributeValue{
					"pk": &types.AttributeValueMemberS{Value: h.Tenant.ID + "#TEST#" + strconv.FormatInt(n, 10)},
					"sk": &types.AttributeValueMemberS{Value: "TEST"},
				},
			}})
			if err := tx.Run(r.Context(), h.Deps.DB); err != nil {
				web.Error(w, r, err)
				return
			}
			code, _ := strconv.Atoi(r.PathValue("code"))
			web.JSON(w, code, map[string]any{"run": n})
		}},
		// echo answers a digest of what it read (and a Location).
		{Method: "POST", Path: "/t/echo", Idempotent: true, Handler: func(w http.ResponseWriter, r *http.Request) {
			n := g.runs["echo"].Add(1)
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Location", "/t/echo/"+strconv.FormatInt(n, 10))
			web.JSON(w, http.StatusCreated, map[string]any{"run": n, "len": len(b), "query": r.URL.RawQuery})
		}},
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	g.srv = httptest.NewServer(web.Handler(h.Deps.Idempotency().Decorate(routes), h.Deps.Auth(), log))
	t.Cleanup(g.srv.Close)
	return g
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) replayed() bool { return a.header.Get(idempotency.ReplayedHeader) == "true" }

func (a answer) code() string {
	var e web.ErrorBody
	_ = json.Unmarshal(a.body, &e)
	return e.Code
}

// send posts body to path as the tenant's service key with key (none when
// empty) and extra header pairs.
func (g *rig) send(t *testing.T, path, key, body string, extra ...string) answer {
	t.Helper()
	req, err := http.NewRequest("POST", g.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(g.h.Admin()); i += 2 {
		req.Header.Set(g.h.Admin()[i], g.h.Admin()[i+1])
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set(idempotency.Header, key)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestWrapInProgress holds the first request inside its handler: a repeat
// is 409 IDEMPOTENCY_IN_PROGRESS with Retry-After, another request with
// the key is 422 IDEMPOTENCY_KEY_REUSED, and once the first answered a
// repeat replays it.
func TestWrapInProgress(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	first := make(chan answer, 1)
	go func() { first <- g.send(t, "/t/block", "k-1", `{"a":1}`) }()
	<-g.inside

	rep := g.send(t, "/t/block", "k-1", `{"a":1}`)
	if rep.status != 409 || rep.code() != "IDEMPOTENCY_IN_PROGRESS" || rep.header.Get("Retry-After") != "1" {
		t.Errorf("repeat in flight = %d %s (Retry-After %q), want 409 IDEMPOTENCY_IN_PROGRESS with Retry-After 1", rep.status, rep.body, rep.header.Get("Retry-After"))
	}
	other := g.send(t, "/t/block", "k-1", `{"a":2}`)
	if other.status != 422 || other.code() != "IDEMPOTENCY_KEY_REUSED" {
		t.Errorf("another body in flight = %d %s, want 422 IDEMPOTENCY_KEY_REUSED", other.status, other.body)
	}

	close(g.gate)
	got := <-first
	if got.status != 201 || got.replayed() {
		t.Fatalf("first = %d %s (replayed %v)", got.status, got.body, got.replayed())
	}
	again := g.send(t, "/t/block", "k-1", `{"a":1}`)
	if again.status != got.status || !bytes.Equal(again.body, got.body) || !again.replayed() {
		t.Errorf("repeat = %d %s (replayed %v), want the first %d %s replayed", again.status, again.body, again.replayed(), got.status, got.body)
	}
	if again.header.Get("Content-Type") != "application/json" {
		t.Errorf("replayed Content-Type = %q", again.header.Get("Content-Type"))
	}
	if again.header.Get("x-request-id") == got.header.Get("x-request-id") {
		t.Errorf("the replay repeated the first response's x-request-id")
	}
	if n := g.count("block"); n != 1 {
		t.Errorf("runs = %d, want 1", n)
	}
}

// TestWrapAbandoned: a record left IN_FLIGHT longer than InFlightTimeout
// (its function crashed or timed out) is claimed again by the same
// request; the overtaken first run cannot overwrite the new record.
func TestWrapAbandoned(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	first := make(chan answer, 1)
	go func() { first <- g.send(t, "/t/block", "k-2", `{}`) }()
	<-g.inside

	g.h.Clock.Advance(idempotency.InFlightTimeout - time.Second)
	if a := g.send(t, "/t/block", "k-2", `{}`); a.status != 409 {
		t.Fatalf("before the timeout: %d %s, want 409", a.status, a.body)
	}
	if a := g.send(t, "/t/block", "k-2", `{"other":true}`); a.status != 422 {
		t.Fatalf("another request: %d %s, want 422", a.status, a.body)
	}
	g.h.Clock.Advance(2 * time.Second)
	second := g.send(t, "/t/block", "k-2", `{}`)
	if second.status != 201 || second.replayed() || !strings.Contains(string(second.body), `"run":2`) {
		t.Fatalf("after the timeout = %d %s, want the second run", second.status, second.body)
	}
	close(g.gate)
	if a := <-first; a.status != 201 {
		t.Fatalf("first = %d %s", a.status, a.body)
	}
	third := g.send(t, "/t/block", "k-2", `{}`)
	if !third.replayed() || !bytes.Equal(third.body, second.body) {
		t.Errorf("third = %s (replayed %v), want the second run's %s", third.body, third.replayed(), second.body)
	}
	if n := g.count("block"); n != 2 {
		t.Errorf("runs = %d, want 2", n)
	}
}

// TestWrapStoredStatuses: a success or a client error is stored and
// replayed; a server error, 401, 409 and 429 (and a panic) release the key
// so a retry runs again.
func TestWrapStoredStatuses(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	for _, tc := range []struct {
		status int
		stored bool
	}{
		{200, true}, {201, true}, {400, true}, {403, true}, {404, true}, {422, true},
		{401, false}, {409, false}, {429, false}, {500, false}, {502, false}, {503, false},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			key := "status-" + strconv.Itoa(tc.status)
			path := "/t/status/" + strconv.Itoa(tc.status)
			before := g.count("status")
			a := g.send(t, path, key, `{}`)
			b := g.send(t, path, key, `{}`)
			if a.status != tc.status || b.status != tc.status {
				t.Fatalf("statuses = %d, %d, want %d", a.status, b.status, tc.status)
			}
			runs := g.count("status") - before
			if tc.stored {
				if runs != 1 || !b.replayed() || !bytes.Equal(a.body, b.body) {
					t.Errorf("runs = %d, replayed %v, bodies %s / %s; want 1 run and the first replayed", runs, b.replayed(), a.body, b.body)
				}
			} else if runs != 2 || b.replayed() {
				t.Errorf("runs = %d, replayed %v; want the key released and a second run", runs, b.replayed())
			}
		})
	}
	t.Run("panic", func(t *testing.T) {
		if a := g.send(t, "/t/panic", "p-1", `{}`); a.status != 500 {
			t.Fatalf("first = %d", a.status)
		}
		b := g.send(t, "/t/panic", "p-1", `{}`)
		if b.status != 200 || b.replayed() || g.count("panic") != 2 {
			t.Errorf("retry = %d (replayed %v), runs %d; want a second run", b.status, b.replayed(), g.count("panic"))
		}
	})
}

// TestWrapLargeResponses: a body that compresses under the item limit is
// replayed byte for byte; one that does not is not stored, and a repeat
// answers 409 CONFLICT (marked replayed) rather than run again.
func TestWrapLargeResponses(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	a := g.send(t, "/t/big?kind=zeros", "big-1", ``)
	b := g.send(t, "/t/big?kind=zeros", "big-1", ``)
	if a.status != 200 || len(a.body) != 1<<20 || !b.replayed() || !bytes.Equal(a.body, b.body) || b.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("compressible: %d (%d bytes), replay %d (%d bytes, replayed %v, %q)", a.status, len(a.body), b.status, len(b.body), b.replayed(), b.header.Get("Content-Type"))
	}
	c := g.send(t, "/t/big?kind=random", "big-2", ``)
	d := g.send(t, "/t/big?kind=random", "big-2", ``)
	if c.status != 200 || len(c.body) != 400<<10 {
		t.Fatalf("incompressible first = %d (%d bytes)", c.status, len(c.body))
	}
	if d.status != 409 || d.code() != "CONFLICT" || !d.replayed() {
		t.Errorf("incompressible repeat = %d %s (replayed %v), want 409 CONFLICT replayed", d.status, d.body, d.replayed())
	}
	if n := g.count("big"); n != 2 {
		t.Errorf("runs = %d, want 2 (one per key)", n)
	}
}

// TestWrapRequestIdentity: what makes "the same request" for a key.
func TestWrapRequestIdentity(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	form := func(boundary string) (string, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.SetBoundary(boundary)
		fw, _ := mw.CreateFormFile("file", "awards.csv")
		_, _ = fw.Write([]byte("userId,perkId,points\nu1,p1,5\n"))
		_ = mw.Close()
		return b.String(), mw.FormDataContentType()
	}
	b1, ct1 := form("boundary-one")
	b2, ct2 := form("boundary-two")
	for _, tc := range []struct {
		name                 string
		path1, body1, path2  string
		body2                string
		extra1, extra2       []string
		replayed             bool
		wantStatus, wantRuns int
	}{
		{name: "SameBody", path1: "/t/echo", body1: `{"x":1}`, path2: "/t/echo", body2: `{"x":1}`, replayed: true, wantStatus: 201, wantRuns: 1},
		{name: "QueryOrder", path1: "/t/echo?a=1&b=2", path2: "/t/echo?b=2&a=1", replayed: true, wantStatus: 201, wantRuns: 1},
		{name: "MultipartBoundary", path1: "/t/echo", body1: b1, extra1: []string{"Content-Type", ct1}, path2: "/t/echo", body2: b2, extra2: []string{"Content-Type", ct2}, replayed: true, wantStatus: 201, wantRuns: 1},
		{name: "OtherBody", path1: "/t/echo", body1: `{"x":1}`, path2: "/t/echo", body2: `{"x":2}`, wantStatus: 422, wantRuns: 1},
		{name: "OtherQuery", path1: "/t/echo?a=1", path2: "/t/echo?a=2", wantStatus: 422, wantRuns: 1},
		{name: "OtherNonce", path1: "/t/echo", extra1: []string{web.HeaderNonce, "n1"}, path2: "/t/echo", extra2: []string{web.HeaderNonce, "n2"}, wantStatus: 422, wantRuns: 1},
		{name: "OtherRoute", path1: "/t/echo", path2: "/t/status/201", wantStatus: 201, wantRuns: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "id-" + tc.name
			before := g.count("echo")
			a := g.send(t, tc.path1, key, tc.body1, tc.extra1...)
			b := g.send(t, tc.path2, key, tc.body2, tc.extra2...)
			if a.status != 201 {
				t.Fatalf("first = %d %s", a.status, a.body)
			}
			if b.status != tc.wantStatus || b.replayed() != tc.replayed {
				t.Errorf("second = %d %s (replayed %v), want %d (replayed %v)", b.status, b.body, b.replayed(), tc.wantStatus, tc.replayed)
			}
			if tc.replayed && (!bytes.Equal(a.body, b.body) || a.header.Get("Location") != b.header.Get("Location")) {
				t.Errorf("replay = %s %q, want %s %q", b.body, b.header.Get("Location"), a.body, a.header.Get("Location"))
			}
			if tc.wantStatus == 422 && b.code() != "IDEMPOTENCY_KEY_REUSED" {
				t.Errorf("code = %s", b.code())
			}
			if runs := g.count("echo") - before; runs != int64(tc.wantRuns) {
				t.Errorf("echo runs = %d, want %d", runs, tc.wantRuns)
			}
		})
	}
}

// TestWrapExpiry: a key is remembered Lifetime; after that (the record
// still in the table, as TTL deletes late) the request runs again.
func TestWrapExpiry(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	g.send(t, "/t/echo", "exp-1", `{}`)
	g.h.Clock.Advance(idempotency.Lifetime - time.Minute)
	if a := g.send(t, "/t/echo", "exp-1", `{}`); !a.replayed() {
		t.Fatalf("before the lifetime: not replayed (%s)", a.body)
	}
	if a := g.send(t, "/t/echo", "exp-1", `{"other":1}`); a.status != 422 {
		t.Fatalf("another request before the lifetime: %d, want 422", a.status)
	}
	g.h.Clock.Advance(2 * time.Minute)
	a := g.send(t, "/t/echo", "exp-1", `{"other":1}`)
	if a.status != 201 || a.replayed() {
		t.Errorf("after the lifetime: %d (replayed %v), want a new run", a.status, a.replayed())
	}
	if n := g.count("echo"); n != 2 {
		t.Errorf("runs = %d, want 2", n)
	}
}

// TestWrapWithoutKey: without the header nothing changes: every request
// runs.
func TestWrapWithoutKey(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	for i := 0; i < 3; i++ {
		if a := g.send(t, "/t/echo", "", `{}`); a.status != 201 || a.replayed() {
			t.Fatalf("request %d = %d (replayed %v)", i, a.status, a.replayed())
		}
	}
	if n := g.count("echo"); n != 3 {
		t.Errorf("runs = %d, want 3", n)
	}
}

// TestWrapKeyWithComma: outside API Gateway (a plain net/http server) the
// whole value is the key as well, commas included.
func TestWrapKeyWithComma(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	first := g.send(t, "/t/echo", "order-42,retry", `{}`)
	again := g.send(t, "/t/echo", "order-42,retry", `{}`)
	if first.status != 201 || first.replayed() || again.status != 201 || !again.replayed() || !bytes.Equal(again.body, first.body) {
		t.Fatalf("first %d (replayed %v) %s, repeat %d (replayed %v) %s: want the repeat to replay the first",
			first.status, first.replayed(), first.body, again.status, again.replayed(), again.body)
	}
	if n := g.count("echo"); n != 1 {
		t.Errorf("runs = %d, want 1", n)
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		value string
		ok    bool
	}{
		{"UUID", "0b7f6c52-8c0e-4a4e-9a57-0e3f5d6c0a11", true},
		{"OneChar", "a", true},
		{"Printable", " !~{}|", true},
		{"Comma", "order-42,retry", true},
		{"CommaAndSpace", "order-42, retry", true},
		{"MaxLength", strings.Repeat("k", idempotency.MaxKeyLength), true},
		{"Empty", "", false},
		{"TooLong", strings.Repeat("k", idempotency.MaxKeyLength+1), false},
		{"NonASCII", "clé", false},
		{"Control", "a\tb", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := idempotency.ParseKey(tc.value)
			if tc.ok != (err == nil) {
				t.Fatalf("ParseKey(%q) = %q, %v; want ok %v", tc.value, key, err, tc.ok)
			}
			if err == nil && key != tc.value {
				t.Fatalf("ParseKey(%q) = %q, want the whole value", tc.value, key)
			}
			if err == nil {
				return
			}
			e, ok := apierr.As(err)
			if !ok || e.Code != apierr.ValidationFailed || !strings.HasPrefix(e.Message, idempotency.Header+": ") {
				t.Errorf("error %v: want VALIDATION_FAILED naming the header", err)
			}
		})
	}
}

// TestWrapCommittedThenUnkept: a request that committed a transaction and
// then answered what is not kept (a 5xx, a 409) keeps its key: a repeat is
// 409 IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE at once (marked replayed),
// never a second run; one that committed and answered 201 replays as
// before.
func TestWrapCommittedThenUnkept(t *testing.T) {
	t.Parallel()
	g := newRig(t)
	for _, code := range []int{500, 409} {
		k := "commit-" + strconv.Itoa(code)
		path := "/t/commit/" + strconv.Itoa(code)
		if a := g.send(t, path, k, `{}`); a.status != code {
			t.Fatalf("first = %d %s, want %d", a.status, a.body, code)
		}
		for i := 0; i < 2; i++ {
			a := g.send(t, path, k, `{}`)
			if a.status != 409 || a.code() != "IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE" || !a.replayed() {
				t.Errorf("repeat %d of %s = %d %s (replayed %v), want 409 IDEMPOTENCY_COMMITTED_WITHOUT_RESPONSE replayed", i, path, a.status, a.body, a.replayed())
			}
		}
	}
	first := g.send(t, "/t/commit/201", "commit-201", `{}`)
	again := g.send(t, "/t/commit/201", "commit-201", `{}`)
	if first.status != 201 || again.status != 201 || !again.replayed() || !bytes.Equal(first.body, again.body) {
		t.Errorf("201: first %d %s, repeat %d %s (replayed %v), want the first replayed", first.status, first.body, again.status, again.body, again.replayed())
	}
	if n := g.count("commit"); n != 3 {
		t.Errorf("runs = %d, want 3 (one per key)", n)
	}
}
