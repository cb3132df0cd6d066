// Package events_test runs every sample event in events/ through the real
// Lambda handler of its function (the api-proxy adapter included for HTTP
// API events) against DynamoDB Local, and checks the result.
//
// Placeholders. The samples stay realistic and fixed: they name a user
// 5f1c0a9b2d3e4f5a6b7c8d9e, a location 6a2d1b0c3e4f5a6b7c8d9e0f, an
// address, a secondary credential, an import's and an export's operation,
// a perk, a segment, an OPEN order, a POS transaction, a rule, a session
// token and two codes that no stack holds, so sent as they are to a fresh
// stack (make invoke) they answer 404 (401 for the logout's token). So
// that each sample proves its success path, seedSamples first creates
// those entities through the API in the seeded tenant local (an ACTIVE
// user with a profile photo, a password and a session, its address and
// unverified secondary credential, a PENDING user, a location offering
// check-ins, a finished import and export, a STAMP_CARD perk, a ROLLING
// segment, a finished award import and actions export, an OPEN PAYATPOS
// order of the user at the location, a card transaction of the user (its
// order generated and completed), and a rule), and returns one map,
// placeholder -> real value. The POS short codes of the transactions the
// samples record (T12-0042-1, T12-0043-1) are placeholders too, bound to
// codes new in each run: a short code names one transaction of a tenant
// for good, so fixed ones would be taken by an earlier run. Before an HTTP
// sample reaches its handler, bindEvent replaces every placeholder in its
// rawPath, requestContext.http.path, pathParameters, rawQueryString,
// queryStringParameters, Authorization header and text body; a code
// placeholder (written with its quotes) is bound only where it is a whole
// JSON string of the body. The jobs function's S3 and SQS samples and the
// tenants samples are run as they are; its operator commands
// (jobs-operation-*.json) name the finished import's operation, bound by a
// plain replace over the file's text. Every tenants sample, the operators'
// requests and the HTTP API event of PUT /tenant alike, goes through the
// function's one Lambda handler, which tells them apart.
//
// The stream sample (rules-stream.json) is a DynamoDB Streams event of
// the Actions table: an INSERT whose NewImage is a CHECKIN_CREATED action
// of the user at the location, as the table stores it. Its placeholders
// are bound by a plain replace over the file's text before it is decoded.
// seedSamples also creates, and returns apart from the map, an enabled
// CHECKIN_CREATED rule granting streamPoints of the perk at that location;
// the sample runs twice through the rules function's handler (the award
// grows by streamPoints once, no batch item failures), then the rule is
// deleted, before any other sample checks in. Rules left in local by an
// earlier run are deleted first.
//
// The webhook samples: webhooks-endpoints-list.json is an HTTP API event
// like the others; webhookfanout-stream.json a DynamoDB Streams record of
// the user's feed head in the Actions table (pk <tenant>#FEED#USER#<user>,
// sk FEED, seq, and the events of one transaction as stored), run twice
// through the webhookfanout function's handler with no endpoint in the
// tenant (nothing is queued); webhooksender-deleted-endpoint.json a
// message of the FIFO delivery queue for an endpoint seedSamples created
// and deleted (phEndpoint), which the webhooksender function drops.
// Their placeholders are bound by a plain replace over the file's text.
package events_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/loyalty-platform/platform/shared/domain/action"
	"github.com/loyalty-platform/platform/shared/domain/tenant"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	"github.com/loyalty-platform/platform/shared/platform/job"
	"github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The placeholders of the samples, bound by seedSamples.
const (
	phUser        = "5f1c0a9b2d3e4f5a6b7c8d9e" // the ACTIVE user most user samples act on
	phLocation    = "6a2d1b0c3e4f5a6b7c8d9e0f" // a location offering check-ins
	phAddress     = "aa1b2c3d4e5f60718293a4b5" // an address of the user
	phCredential  = "0a1b2c3d4e5f60718293a4b5" // an unverified secondary credential of the user
	phImport      = "6b8e4f2a1c3d5e7f9a0b2c4d" // a finished (dry-run) import's operation
	phExport      = "6c1f7a3e9b5d2c8f4a6e0b1d" // a finished export's operation
	phPerk        = "7a3e5c1b9d2f4a6e8b0c2d4f" // a STAMP_CARD perk (its awards are <user>-<perk>)
	phSegment     = "7b4f6d2c0e3a5b7f9c1d3e5a" // a ROLLING segment
	phAwardsImp   = "6d2a8c4e0f1b3d5f7a9c1e3b" // a finished (dry-run) award import's operation
	phActionsExp  = "6e3b9d5f1a2c4e6a8b0d2f4b" // a finished actions export's operation
	phOrder       = "6f2b8d4a0c1e3f5b7d9a1c3e" // an OPEN order of the user at the location
	phTransaction = "6e5c1a7f3b9d0e2c4f6a8b1d" // a CARD_AT_POS transaction of the user (pos-transactions-refund.json)
	phRule        = "7c5a9e1f3b0d2c4e6a8f0b2d" // an enabled ORDER_COMPLETED rule (ADD_TO_SEGMENT of the segment)
	// phShortCode and phShortCodeApp are the POS short codes of the
	// transactions pos-transactions-create-user.json (found again by
	// pos-transactions-find.json) and pos-transactions-create.json record,
	// bound to codes new in each run.
	phShortCode    = "T12-0042-1"
	phShortCodeApp = "T12-0043-1"
	// phSession is a session token of the user (users-logout.json).
	phSession = "local.Vq3cX9mR2tLw8yKb5nJ0hFz4pGd7sAe1uCo6iTkQxM0"
	// phActivation is the activation code of the PENDING user
	// (users-activate.json) and phVerification the verification code of
	// the secondary credential (credentials-verify.json), both as JSON
	// strings of the body.
	phActivation   = `"4821"`
	phVerification = `"7305"`
	// phEndpoint is a webhook endpoint of the tenant that was deleted
	// (webhooksender-deleted-endpoint.json: its message is dropped).
	phEndpoint = "7d6b0a2f4c8e1d3b5f7a9c0e"
)

// The identifiers and password of the seeded users, and the identifiers
// the samples register. Every run releases them first (an earlier run may
// have stopped before users-delete.json).
const (
	userEmail    = "alan.events@example.com"
	userPassword = "correct-horse-9"
	workEmail    = "alan.work@example.com"
	pendingEmail = "grace.events@example.com" // users-activate.json
)

var fixedIdentifiers = []string{
	userEmail, workEmail, pendingEmail,
	"ada.events@example.com", // users-create.json, users-login.json, users-reset.json
	"second@example.com",     // credentials-add.json
}

// samples lists every file in events/ in the order it runs, with the
// function it belongs to and the status (HTTP) or outcome (direct invoke)
// it must produce against the seeded local tenant. Samples that end or
// remove what others use run last.
var samples = []struct {
	file     string
	function string
	status   int
}{
	{"users-create.json", "accounts", 201},
	{"users-create-invalid.json", "accounts", 422}, // deliberately invalid: no credential
	{"users-list.json", "users", 200},
	{"users-list-stage.json", "users", 200}, // through a named stage (/prod/users)
	{"users-lookup.json", "users", 200},
	{"users-get.json", "users", 200},
	{"users-update.json", "users", 200},
	{"users-activate.json", "accounts", 200},
	{"users-login.json", "accounts", 200},
	{"users-reset.json", "accounts", 200},
	// No OpenID Connect issuer is reachable, so the ID token fails
	// verification (real sign-ins are tested in shared/domain/account with a local
	// issuer).
	{"users-sso-google.json", "accounts", 422},
	{"guests-create.json", "accounts", 201},
	{"sessions-create.json", "accounts", 201},
	{"users-avatar-put.json", "avatars", 200},
	{"credentials-list.json", "accounts", 200},
	{"credentials-add.json", "accounts", 201},
	{"credentials-verify.json", "accounts", 200},
	{"credentials-delete.json", "accounts", 204},
	{"addresses-suggestions.json", "users", 200},
	{"addresses-coordinates.json", "users", 200},
	{"addresses-list.json", "users", 200},
	{"addresses-create.json", "users", 201},
	{"addresses-update.json", "users", 200},
	{"addresses-delete.json", "users", 200},
	{"locations-create.json", "locations", 201},
	{"locations-list.json", "locations", 200},
	{"locations-get.json", "locations", 200},
	{"locations-taggroups-create.json", "locations", 201},
	{"locations-taggroups-list.json", "locations", 200},
	{"locations-imports-create.json", "locationfiles", 202},
	{"locations-imports-file.json", "locationfiles", 200},
	{"locations-exports-create.json", "locationfiles", 202},
	{"locations-exports-file.json", "locationfiles", 200},
	{"operations-get.json", "operations", 200},
	{"operations-openapi.json", "operations", 200},
	// DynamoDB Streams batch of the Actions table: a CHECKIN_CREATED
	// action, run twice through the rules function's handler against the
	// CHECKIN_CREATED rule seedSamples made, deleted right after. Before
	// the check-ins (the rule would react to theirs) and the awards (its
	// points start the award; the grant after them still fits the perk's
	// max).
	{"rules-stream.json", "rules", 0},
	{"checkins-create.json", "checkins", 201},
	{"checkins-list-user.json", "checkins", 200},
	{"checkins-list-location.json", "checkins", 200},
	{"checkins-delete.json", "checkins", 204},
	{"perks-create.json", "loyalty", 201},
	{"perks-list.json", "loyalty", 200},
	{"perks-get.json", "loyalty", 200},
	{"perks-update.json", "loyalty", 200},
	{"enrichments-create.json", "loyalty", 201},
	{"awards-grant.json", "loyalty", 200},
	{"awards-grant-segment.json", "loyalty", 202},
	{"awards-list.json", "loyalty", 200},
	{"awards-user-point.json", "loyalty", 200},
	{"awards-redeem.json", "loyalty", 200},
	{"awards-refund.json", "loyalty", 200},
	{"awards-set.json", "loyalty", 200},
	{"awards-ledger.json", "loyalty", 200},
	{"reports-liability.json", "loyalty", 200},
	{"awards-imports-create.json", "awardimports", 202},
	{"awards-imports-file.json", "awardimports", 200},
	{"reports-liability-exports-create.json", "awardimports", 202},
	{"reports-liability-rebuild.json", "awardimports", 202},
	{"actions-list.json", "actions", 200},
	{"actions-user.json", "actions", 200},
	{"actions-location.json", "actions", 200},
	{"actions-exports-create.json", "actions", 202},
	{"actions-exports-file.json", "actions", 200},
	{"webhooks-endpoints-list.json", "webhooks", 200},
	// DynamoDB Streams record of a user's feed head in the Actions table
	// (two events of one transaction), run through the webhookfanout
	// function's handler: the tenant has no endpoints, so nothing is
	// queued.
	{"webhookfanout-stream.json", "webhookfanout", 0},
	// A message of the FIFO delivery queue for an endpoint deleted since
	// it was queued, run through the webhooksender function's handler:
	// dropped, not retried.
	{"webhooksender-deleted-endpoint.json", "webhooksender", 0},
	{"segments-create.json", "audiences", 201},
	{"segments-members-add.json", "audiences", 200},
	{"segments-members-list.json", "audiences", 200},
	{"segments-members-remove.json", "audiences", 204},
	// After the awards: the rule rules-create.json makes grants points of
	// the perk on every completed order of 5 or more (pos-orders-update's).
	{"rules-create.json", "audiences", 201},
	{"rules-list.json", "audiences", 200},
	{"rules-get.json", "audiences", 200},
	{"rules-update.json", "audiences", 200}, // disables the seeded rule (get, update and delete act on it)
	// The app balance that pos-transactions-create.json (APP) spends.
	{"pos-credits.json", "pos", 200},
	{"pos-orders-create.json", "pos", 201},
	{"pos-orders-get.json", "pos", 200},
	// A transaction on the OPEN order, then its completion.
	{"pos-transactions-create-user.json", "pos", 201},
	{"pos-orders-update.json", "pos", 200},
	{"pos-transactions-create.json", "pos", 201}, // its order generated and completed
	{"pos-transactions-find.json", "pos", 200},   // the transaction of pos-transactions-create-user.json
	{"pos-transactions-search.json", "pos", 200}, // the transactions whose metadata has till T12 (pos-transactions-create-user.json's)
	{"pos-transactions-refund.json", "pos", 200},
	// The balance's ledger: the credit, the APP payment.
	{"pos-balance-ledger.json", "pos", 200},
	// EventBridge's daily event: the run removes the ended memberships of
	// every tenant (real expiry is tested in shared/domain/audience).
	{"expiry-scheduled.json", "expiry", 0},
	{"perks-delete.json", "loyalty", 204},
	{"rules-delete.json", "audiences", 204},
	// Retires the location, so after the check-ins and the orders.
	{"locations-update.json", "locations", 200},
	{"users-avatar-delete.json", "avatars", 204},
	{"users-logout.json", "accounts", 200},
	{"sessions-delete.json", "accounts", 200},
	{"users-delete.json", "avatars", 204},
	// S3 ObjectCreated of an import's input: the sample names an operation
	// that does not exist, which the jobs function ignores without error
	// (real deliveries are tested in shared/domain/locationcsv).
	{"jobs-s3-put.json", "jobs", 0},
	// SQS message of the jobs function's failure queue: Lambda's
	// destination record of a continuation's S3 event whose invocations
	// all failed. Its operation does not exist either, so nothing changes
	// and no message is reported for another delivery (real records are
	// tested in shared/platform/job).
	{"jobs-failure.json", "jobs", 0},
	// An operator's commands, invoked directly (no records): describe,
	// resume and fail the finished import's operation, which they leave as
	// it is (stuck operations are tested in shared/platform/job).
	{"jobs-operation-describe.json", "jobs", 0},
	{"jobs-operation-resume.json", "jobs", 0},
	{"jobs-operation-fail.json", "jobs", 0},
	{"tenants-create.json", "tenants", 0},
	{"tenants-get.json", "tenants", 0},
	// A tenant admin's PUT /tenant (HTTP API), through the same handler as
	// the operators' invocations: it sets two settings to their defaults.
	{"tenants-update.json", "tenants", 200},
	// Rotates the local tenant's key: last (the next run seeds it again).
	{"tenants-rotate-key.json", "tenants", 0},
}

func TestSampleEvents(t *testing.T) {
	// Not parallel: the samples name the fixed tenant "local", which it
	// seeds and whose key it rotates.
	h := testkit.New(t)
	ctx := context.Background()
	local, err := h.Deps.Tenants.Seed(ctx, "local", "Local tenant", "local-service-token")
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	// The harness acts as the samples' tenant: h.Admin() and h.Basic are
	// local's, as WaitOperation's polling is.
	h.Tenant, h.ServiceKey = local, "local-service-token"
	bindings, streamRule := seedSamples(t, h)
	t.Run("EveryFileListed", func(t *testing.T) {
		files, _ := filepath.Glob("*.json")
		listed := map[string]bool{}
		for _, s := range samples {
			listed[s.file] = true
		}
		for _, f := range files {
			if !listed[f] {
				t.Errorf("%s is not run by this test", f)
			}
		}
	})
	t.Run("EveryPlaceholderUsed", func(t *testing.T) {
		var all strings.Builder
		for _, s := range samples {
			raw, err := os.ReadFile(s.file)
			if err != nil {
				t.Fatal(err)
			}
			all.Write(raw)
		}
		text := all.String()
		for ph := range bindings {
			// Quoted code placeholders sit in a JSON-encoded body.
			if !strings.Contains(text, ph) && !strings.Contains(text, strings.ReplaceAll(ph, `"`, `\"`)) {
				t.Errorf("placeholder %s is in no sample", ph)
			}
		}
	})
	for _, s := range samples {
		t.Run(strings.TrimSuffix(s.file, ".json"), func(t *testing.T) {
			raw, err := os.ReadFile(s.file)
			if err != nil {
				t.Fatal(err)
			}
			if s.function == "rules" {
				runStreamSample(t, h, raw, bindings, streamRule, s.function)
				return
			}
			if s.function == "webhookfanout" {
				runFanoutSample(t, h, raw, bindings, s.function)
				return
			}
			if s.function == "webhooksender" {
				runSenderSample(t, h, raw, bindings, s.function)
				return
			}
			if s.function == "jobs" {
				// The jobs function gets S3 events and the SQS events of
				// its failure queue.
				var probe struct {
					Records []struct{ EventSource string }
				}
				_ = json.Unmarshal(raw, &probe)
				switch {
				case len(probe.Records) == 0:
					runOperatorSample(t, h, raw, bindings)
				case probe.Records[0].EventSource == "aws:sqs":
					runFailureSample(t, h, raw, s.function)
				default:
					runS3Sample(t, h, raw, s.function)
				}
				return
			}
			if s.function == "expiry" {
				var ev events.EventBridgeEvent
				if err := json.Unmarshal(raw, &ev); err != nil || ev.DetailType != "Scheduled Event" || ev.Source != "aws.events" {
					t.Fatalf("%s is not an EventBridge scheduled event (%v)", s.file, err)
				}
				handler, err := h.Deps.ScheduleHandler(s.function)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := handler(ctx, ev); err != nil {
					t.Fatalf("run: %v", err)
				}
				return
			}
			// The tenants function gets operators' requests and HTTP API
			// events, told apart by its handler (see below for the latter).
			if s.function == "tenants" && !isHTTPEvent(raw) {
				var req tenant.Request
				dec := json.NewDecoder(strings.NewReader(string(raw)))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&req); err != nil {
					t.Fatalf("decode: %v", err)
				}
				out, err := h.Deps.Fn.Tenants.Handle(ctx, raw)
				if err != nil {
					t.Fatalf("invoke: %v", err)
				}
				resp, ok := out.(tenant.Response)
				if !ok || resp.Tenant == nil || resp.Tenant.ID == "" {
					t.Fatalf("response = %+v", out)
				}
				return
			}
			var ev events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &ev); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if ev.Version != "2.0" || ev.RouteKey != ev.RequestContext.RouteKey || ev.RequestContext.HTTP.Method == "" {
				t.Fatalf("%s is not a payload 2.0 event", s.file)
			}
			if ev.IsBase64Encoded {
				if _, err := base64.StdEncoding.DecodeString(ev.Body); err != nil {
					t.Fatalf("isBase64Encoded, but the body is not base64: %v", err)
				}
			}
			fn, ok := h.Template.Function(s.function)
			if !ok {
				t.Fatalf("no function %s in template.yaml", s.function)
			}
			routed := false
			for _, r := range fn.Routes {
				routed = routed || r.Key() == ev.RouteKey
			}
			if !routed {
				t.Fatalf("route %q is not an HttpApi event of %s in template.yaml", ev.RouteKey, fn.LogicalID)
			}
			bindEvent(&ev, bindings)
			handler, err := h.Deps.LambdaHandler(s.function)
			if err != nil {
				t.Fatal(err)
			}
			if s.function == "tenants" {
				handler = tenantsHTTP(h)
			}
			resp, err := handler(ctx, ev)
			if err != nil {
				t.Fatalf("handler: %v", err)
			}
			if resp.StatusCode != s.status {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, s.status, resp.Body)
			}
			if ct := header(resp.Headers, "Content-Type"); strings.HasPrefix(ct, "application/json") && !json.Valid([]byte(resp.Body)) {
				t.Fatalf("body is not JSON: %s", resp.Body)
			} else if resp.Body != "" && ct == "" {
				t.Fatalf("body without a Content-Type: %s", resp.Body)
			}
		})
	}
}

// isHTTPEvent reports whether a sample is an API Gateway HTTP API event
// (it names its route).
func isHTTPEvent(raw []byte) bool {
	var probe struct {
		RouteKey string `json:"routeKey"`
	}
	return json.Unmarshal(raw, &probe) == nil && probe.RouteKey != ""
}

// tenantsHTTP runs an HTTP API event through the tenants function's
// Lambda handler, as Lambda delivers it (JSON), which tells it from an
// operator's request.
func tenantsHTTP(h *testkit.Harness) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		payload, err := json.Marshal(ev)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		out, err := h.Deps.Fn.Tenants.Handle(ctx, payload)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		resp, ok := out.(events.APIGatewayV2HTTPResponse)
		if !ok {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("the tenants function answered an HTTP API event with %T", out)
		}
		return resp, nil
	}
}

// header returns the value of the header named name (in any case).
func header(hs map[string]string, name string) string {
	for k, v := range hs {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// bindEvent replaces the samples' placeholders in the parts of an HTTP
// event that name entities: the path (raw, routed and its parameters), the
// query string, the Authorization header and a text body.
func bindEvent(ev *events.APIGatewayV2HTTPRequest, bindings map[string]string) {
	var allPairs []string
	for ph, real := range bindings {
		allPairs = append(allPairs, ph, real)
	}
	ids := idReplacer(bindings)
	ev.RawPath = ids.Replace(ev.RawPath)
	ev.RequestContext.HTTP.Path = ids.Replace(ev.RequestContext.HTTP.Path)
	ev.RawQueryString = ids.Replace(ev.RawQueryString)
	for k, v := range ev.PathParameters {
		ev.PathParameters[k] = ids.Replace(v)
	}
	for k, v := range ev.QueryStringParameters {
		ev.QueryStringParameters[k] = ids.Replace(v)
	}
	for k, v := range ev.Headers {
		if strings.EqualFold(k, "authorization") {
			ev.Headers[k] = ids.Replace(v)
		}
	}
	if !ev.IsBase64Encoded {
		ev.Body = strings.NewReplacer(allPairs...).Replace(ev.Body)
	}
}

// idReplacer replaces every placeholder but the quoted codes (which are
// bound in HTTP bodies only) by its real value.
func idReplacer(bindings map[string]string) *strings.Replacer {
	var pairs []string
	for ph, real := range bindings {
		if !strings.HasPrefix(ph, `"`) {
			pairs = append(pairs, ph, real)
		}
	}
	return strings.NewReplacer(pairs...)
}

// seedSamples releases the samples' fixed identifiers and deletes the
// rules an earlier run left in the harness tenant (local), creates there
// the entities the samples' placeholders stand for, and returns the map
// placeholder -> real value, and the id of the rule the stream sample
// triggers (see runStreamSample).
func seedSamples(t *testing.T, h *testkit.Harness) (map[string]string, string) {
	t.Helper()
	admin := h.Admin()
	v4 := testkit.Headers{"x-api-version", "4"}
	for _, id := range fixedIdentifiers {
		var found struct{ Items []struct{ ID string } }
		h.Do("GET", "/users?credentialId="+id, nil, admin, v4).Expect(t, 200, "").JSON(t, &found)
		for _, u := range found.Items {
			h.Do("DELETE", "/users/"+u.ID, nil, admin).Expect(t, 204, "")
		}
	}
	// Rules an earlier run left would run on this run's actions.
	for {
		var left struct{ Items []entity }
		h.Do("GET", "/rules?limit=1000", nil, admin).Expect(t, 200, "").JSON(t, &left)
		if len(left.Items) == 0 {
			break
		}
		for _, r := range left.Items {
			h.Do("DELETE", "/rules/"+r.ID, nil, admin).Expect(t, 204, "")
		}
	}

	// The user, ACTIVE, with a profile photo (check-ins need one), an
	// address, an unverified secondary credential and a session.
	var u struct{ ID string }
	h.Do("POST", "/users?autoActivate=true", map[string]any{
		"firstName": "Alan", "lastName": "Events", "password": userPassword,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": userEmail}},
	}, admin).Expect(t, 201, "").JSON(t, &u)
	h.Do("PUT", "/users/"+u.ID+"/avatar", sampleBody(t, "users-avatar-put.json"), admin,
		testkit.Headers{"Content-Type", "image/jpeg"}).Expect(t, 200, "")
	var addrs []entity
	h.Do("POST", "/users/"+u.ID+"/addresses", map[string]any{
		"name":        "Office",
		"address":     map[string]any{"line1": "1 Canada Square", "city": "London", "postalCode": "E14 5AB", "country": "GB"},
		"coordinates": []float64{-0.0195, 51.5049},
	}, admin).Expect(t, 201, "").JSON(t, &addrs)
	if len(addrs) != 1 {
		t.Fatalf("addresses = %+v, want one", addrs)
	}
	var cred entity
	h.Do("POST", "/users/"+u.ID+"/credentials", map[string]any{"provider": "EMAIL", "id": workEmail}, admin).
		Expect(t, 201, "").JSON(t, &cred)
	verification := h.LastCode(t, workEmail)
	var session entity
	h.Do("GET", "/users/login", nil, h.Basic(userEmail, userPassword, "EMAIL")).Expect(t, 200, "").JSON(t, &session)

	// A PENDING user; an admin sees its activation code.
	var pending struct {
		Tokens struct{ Activation string }
	}
	h.Do("POST", "/users", map[string]any{
		"firstName": "Grace", "lastName": "Events", "password": userPassword,
		"credentials": []map[string]any{{"provider": "EMAIL", "id": pendingEmail}},
	}, admin).Expect(t, 201, "").JSON(t, &pending)
	if pending.Tokens.Activation == "" {
		t.Fatal("no activation code in the admin's view of a PENDING user")
	}

	// A location offering check-ins.
	var loc entity
	h.Do("POST", "/locations", map[string]any{
		"title": "Canary Wharf Kitchen", "geo": []float64{-0.0195, 51.5049}, "state": "ACTIVE",
		"timezone": "Europe/London", "services": map[string]any{"checkins": true},
	}, admin).Expect(t, 201, "").JSON(t, &loc)

	// A dry-run import of the import sample's CSV, and an export, both
	// finished (results file written).
	var imp, exp entity
	h.Do("POST", "/locations/imports?dryRun=true", sampleBody(t, "locations-imports-create.json"), admin,
		testkit.Headers{"Content-Type", "multipart/form-data; boundary=----platformboundary7MA4YWxkTrZu0gW", "x-platform-req-nonce", testkit.Nonce()}).
		Expect(t, 202, "").JSON(t, &imp)
	h.Do("POST", "/locations/exports", map[string]any{"limit": 10}, admin,
		testkit.Headers{"x-platform-req-nonce", testkit.Nonce()}).Expect(t, 202, "").JSON(t, &exp)
	for _, id := range []string{imp.ID, exp.ID} {
		if op := h.WaitOperation(id); op["status"] != "DONE" {
			t.Fatalf("operation %s = %v, want DONE", id, op)
		}
	}

	// A perk and a segment of the loyalty samples, and a finished dry-run
	// award import of the import sample's file.
	var perk, seg, awardsImp entity
	h.Do("POST", "/perks", map[string]any{"title": "Coffee card", "template": "STAMP_CARD", "points": map[string]any{"max": 10}}, admin).
		Expect(t, 201, "").JSON(t, &perk)
	h.Do("POST", "/segments", map[string]any{"title": "Regulars", "type": "ROLLING", "expiryHorizon": "P30D"}, admin).
		Expect(t, 201, "").JSON(t, &seg)
	h.Do("POST", "/awards/imports?dryRun=true", sampleBody(t, "awards-imports-create.json"), admin,
		testkit.Headers{"Content-Type", "multipart/form-data; boundary=----platformboundary7MA4YWxkTrZu0gW", "x-platform-req-nonce", testkit.Nonce()}).
		Expect(t, 202, "").JSON(t, &awardsImp)
	if op := h.WaitOperation(awardsImp.ID); op["status"] != "DONE" {
		t.Fatalf("award import %s = %v, want DONE", awardsImp.ID, op)
	}
	// A finished actions export.
	var actionsExp entity
	h.Do("POST", "/actions/exports", map[string]any{"from": "2020-01-01T00:00:00Z", "to": "2099-01-01T00:00:00Z", "types": []string{"CHECKIN_CREATED"}}, admin,
		testkit.Headers{"x-platform-req-nonce", testkit.Nonce()}).Expect(t, 202, "").JSON(t, &actionsExp)
	if op := h.WaitOperation(actionsExp.ID); op["status"] != "DONE" {
		t.Fatalf("actions export %s = %v, want DONE", actionsExp.ID, op)
	}

	// An OPEN PAYATPOS order of the user at the location, and a card
	// transaction of the user without an order (the platform generates
	// its order and completes it). A short code names one transaction of
	// the tenant for good: this run's are new.
	run := testkit.Nonce()[:8]
	var order, txn entity
	h.Do("POST", "/users/"+u.ID+"/orders", map[string]any{
		"locationId": loc.ID, "scenario": "PAYATPOS", "shortCode": "T12-0042",
		"basket": []map[string]any{{"id": "flat-white", "category": "coffee", "title": "Flat white", "quantity": 2, "price": 3.2}},
	}, admin).Expect(t, 201, "").JSON(t, &order)
	h.Do("POST", "/users/"+u.ID+"/transactions", map[string]any{
		"shortCode": "T12-0040-1-" + run, "totalPrice": 3.8, "paymentType": "CARD_AT_POS", "locationId": loc.ID,
	}, admin).Expect(t, 201, "").JSON(t, &txn)

	// A rule for the rules samples (an order of 50 or more joins the
	// segment: no sample's order is that large), created after the
	// transaction so that its order's completion does not run it, and the
	// stream sample's rule: a check-in at the location earns streamPoints
	// of the perk.
	var rule, streamRule entity
	h.Do("POST", "/rules", map[string]any{
		"title": "Big spenders", "trigger": "ORDER_COMPLETED",
		"conditions": []map[string]any{{"path": "metadata.value", "operator": "GTE", "value": 50}},
		"effects":    []map[string]any{{"type": "ADD_TO_SEGMENT", "segmentId": seg.ID}},
	}, admin).Expect(t, 201, "").JSON(t, &rule)
	h.Do("POST", "/rules", map[string]any{
		"title": "Check-in stamp at Canary Wharf", "trigger": "CHECKIN_CREATED",
		"conditions": []map[string]any{{"path": "context.location._id", "operator": "EQ", "value": loc.ID}},
		"effects":    []map[string]any{{"type": "GRANT_PERK", "perkId": perk.ID, "points": streamPoints}},
	}, admin).Expect(t, 201, "").JSON(t, &streamRule)

	// A webhook endpoint, deleted: the sender drops its messages.
	var hook entity
	h.Do("POST", "/webhooks/endpoints", map[string]any{"url": "https://hooks.example.com/events", "eventTypes": []string{"ORDER_COMPLETED"}}, admin).
		Expect(t, 201, "").JSON(t, &hook)
	h.Do("DELETE", "/webhooks/endpoints/"+hook.ID, nil, admin).Expect(t, 204, "")

	return map[string]string{
		phEndpoint:     hook.ID,
		phOrder:        order.ID,
		phTransaction:  txn.ID,
		phRule:         rule.ID,
		phShortCode:    phShortCode + "-" + run,
		phShortCodeApp: phShortCodeApp + "-" + run,
		phPerk:         perk.ID,
		phAwardsImp:    awardsImp.ID,
		phActionsExp:   actionsExp.ID,
		phSegment:      seg.ID,
		phUser:         u.ID,
		phLocation:     loc.ID,
		phAddress:      addrs[0].ID,
		phCredential:   cred.ID,
		phImport:       imp.ID,
		phExport:       exp.ID,
		phSession:      session.ID,
		phActivation:   `"` + pending.Tokens.Activation + `"`,
		phVerification: `"` + verification + `"`,
	}, streamRule.ID
}

// entity holds the id of what an answer describes.
type entity struct {
	ID string `json:"_id"`
}

// sampleBody returns the decoded body of an HTTP sample.
func sampleBody(t *testing.T, file string) []byte {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	if !ev.IsBase64Encoded {
		return []byte(ev.Body)
	}
	body, err := base64.StdEncoding.DecodeString(ev.Body)
	if err != nil {
		t.Fatalf("%s: body: %v", file, err)
	}
	return body
}

// runS3Sample checks that an S3 sample is an ObjectCreated event that one
// of the function's template S3 triggers matches, and runs it through the
// function's handler.
func runS3Sample(t *testing.T, h *testkit.Harness, raw []byte, function string) {
	t.Helper()
	ev := checkS3Event(t, h, raw, function)
	handler, err := h.Deps.S3Handler(function)
	if err != nil {
		t.Fatal(err)
	}
	if err := handler(context.Background(), ev); err != nil {
		t.Fatalf("handler: %v", err)
	}
}

// checkS3Event decodes an S3 ObjectCreated event that one of the
// function's template S3 triggers matches.
func checkS3Event(t *testing.T, h *testkit.Harness, raw []byte, function string) events.S3Event {
	t.Helper()
	var ev events.S3Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(ev.Records) != 1 || ev.Records[0].EventSource != "aws:s3" || !strings.HasPrefix(ev.Records[0].EventName, "ObjectCreated:") {
		t.Fatalf("not an S3 ObjectCreated event: %+v", ev)
	}
	fn, ok := h.Template.Function(function)
	if !ok {
		t.Fatalf("no function %s in template.yaml", function)
	}
	key := ev.Records[0].S3.Object.URLDecodedKey
	matched := false
	for _, trig := range fn.S3Events {
		matched = matched || (strings.HasPrefix(key, trig.Prefix) && strings.HasSuffix(key, trig.Suffix))
	}
	if !matched || ev.Records[0].S3.Bucket.Name != h.Deps.Config.Buckets.Files {
		t.Fatalf("key %q of bucket %q matches no S3 trigger of %s", key, ev.Records[0].S3.Bucket.Name, fn.LogicalID)
	}
	return ev
}

// runOperatorSample runs an operator's command (its operation bound to
// the seeded finished import) through the jobs function's handler, as a
// direct invocation delivers it, and checks that it answers the
// operation's state and leaves a finished operation as it is.
func runOperatorSample(t *testing.T, h *testkit.Harness, raw []byte, bindings map[string]string) {
	t.Helper()
	bound := idReplacer(bindings).Replace(string(raw))
	var req job.OperatorRequest
	dec := json.NewDecoder(strings.NewReader(bound))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("decode: %v", err)
	}
	before := h.Do("GET", "/operations/"+req.OperationID, nil, h.Admin()).Expect(t, 200, "").Map(t)
	out, err := h.Deps.Jobs.Handle(context.Background(), json.RawMessage(bound))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	var resp job.OperatorResponse
	dec = json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		t.Fatalf("answer %s: %v", out, err)
	}
	if st := resp.State; st.Operation.ID != req.OperationID || st.Operation.Status != "DONE" || st.Stuck || resp.Outcome == "" || resp.ContinueKey != "" {
		t.Fatalf("answer = %s", out)
	}
	after := h.Do("GET", "/operations/"+req.OperationID, nil, h.Admin()).Expect(t, 200, "").Map(t)
	if after["updatedAt"] != before["updatedAt"] || after["status"] != before["status"] {
		t.Fatalf("the command changed a finished operation: %v", after)
	}
}

// runFailureSample checks that an SQS sample carries Lambda destination
// records of S3 events that the function's template S3 triggers match, and
// runs it through the function's Lambda handler (which dispatches by event
// source), expecting no message reported for another delivery.
func runFailureSample(t *testing.T, h *testkit.Harness, raw []byte, function string) {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(ev.Records) == 0 {
		t.Fatal("no SQS messages")
	}
	for _, msg := range ev.Records {
		if msg.EventSource != "aws:sqs" || msg.MessageId == "" {
			t.Fatalf("not an SQS message: %+v", msg)
		}
		rec, s3ev, err := job.ParseDestinationRecord([]byte(msg.Body))
		if err != nil {
			t.Fatalf("message %s: %v", msg.MessageId, err)
		}
		if rec.Version != "1.0" || rec.RequestContext.Condition == "" || rec.RequestContext.ApproximateInvokeCount == 0 {
			t.Fatalf("not a destination record: %+v", rec)
		}
		payload, err := json.Marshal(s3ev)
		if err != nil {
			t.Fatal(err)
		}
		checkS3Event(t, h, payload, function)
	}
	handler, err := h.Deps.EventHandler(function)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := handler(context.Background(), raw)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	if resp == nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("response = %+v, want no batch item failures", resp)
	}
}

// streamPoints are the points the rule of the stream sample grants.
const streamPoints = 2

// runStreamSample checks that a sample is a DynamoDB Streams event of a
// table whose stream one of the function's template events reads (INSERT
// records, see checkStreamEvent), binds its placeholders by a plain
// replace over its text, and runs it twice through the function's stream
// handler, as Lambda delivers a record again: the first run applies ruleID
// (the user's award of the perk grows by streamPoints), the second changes
// nothing (a rule applies once per action); neither reports a batch item
// failure. ruleID is deleted after, whatever happened, so that no later
// action triggers it.
func runStreamSample(t *testing.T, h *testkit.Harness, raw []byte, bindings map[string]string, ruleID, function string) {
	t.Helper()
	defer func() {
		if r := h.Do("DELETE", "/rules/"+ruleID, nil, h.Admin()); r.Status != 204 {
			t.Errorf("delete the stream sample's rule: status %d: %s", r.Status, r.Body)
		}
	}()
	ev := checkStreamEvent(t, h, raw, bindings, function, "INSERT")
	handler, err := h.Deps.StreamHandler(function)
	if err != nil {
		t.Fatal(err)
	}
	user, perk := bindings[phUser], bindings[phPerk]
	want := availablePoints(t, h, user, perk) + streamPoints
	for run := 1; run <= 2; run++ {
		resp, err := handler(context.Background(), ev)
		if err != nil {
			t.Fatalf("run %d: handler: %v", run, err)
		}
		if len(resp.BatchItemFailures) != 0 {
			t.Fatalf("run %d: batch item failures %+v", run, resp.BatchItemFailures)
		}
		if got := availablePoints(t, h, user, perk); got != want {
			t.Fatalf("run %d: the award holds %d points, want %d", run, got, want)
		}
	}
}

// checkStreamEvent binds a stream sample's placeholders by a plain
// replace over its text, decodes it and checks that it is a DynamoDB
// Streams event of a table whose stream one of the function's template
// events reads: records of one of names (INSERT, MODIFY), with keys that
// are the new image's, in the table's stream view.
func checkStreamEvent(t *testing.T, h *testkit.Harness, raw []byte, bindings map[string]string, function string, names ...string) events.DynamoDBEvent {
	t.Helper()
	var ev events.DynamoDBEvent
	if err := json.Unmarshal([]byte(idReplacer(bindings).Replace(string(raw))), &ev); err != nil {
		t.Fatalf("decode: %v", err)
	}
	fn, ok := h.Template.Function(function)
	if !ok {
		t.Fatalf("no function %s in template.yaml", function)
	}
	if len(ev.Records) == 0 {
		t.Fatal("no stream records")
	}
	for _, rec := range ev.Records {
		c := rec.Change
		if rec.EventSource != "aws:dynamodb" || rec.EventVersion != "1.1" || !slices.Contains(names, rec.EventName) || rec.EventID == "" || rec.AWSRegion == "" ||
			c.SequenceNumber == "" || c.SizeBytes <= 0 || c.ApproximateCreationDateTime.IsZero() || len(c.Keys) == 0 || len(c.NewImage) == 0 {
			t.Fatalf("not a DynamoDB Streams %s record with keys and a new image: %+v", strings.Join(names, " or "), rec)
		}
		for k, v := range c.Keys {
			if !reflect.DeepEqual(c.NewImage[k], v) {
				t.Fatalf("key %s is not the new image's", k)
			}
		}
		// arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>
		_, tableStream, _ := strings.Cut(rec.EventSourceArn, ":table/")
		table, label, _ := strings.Cut(tableStream, "/stream/")
		matched := false
		for _, st := range fn.Streams {
			view := ""
			for _, tb := range h.Template.Tables {
				if tb.LogicalID == st.Table {
					view = tb.StreamView
				}
			}
			matched = matched || (st.Table != "" && strings.Contains(table, st.Table) && label != "" && c.StreamViewType == view)
		}
		if !matched {
			t.Fatalf("%s (%s) is the stream of no table %s reads in template.yaml", rec.EventSourceArn, c.StreamViewType, fn.LogicalID)
		}
	}
	return ev
}

// runFanoutSample checks that a sample is a DynamoDB Streams event of the
// Actions table (see checkStreamEvent) whose records are feed heads (sk
// FEED, the only records the function's FilterCriteria lets through), and
// runs it twice through the webhookfanout function's handler, as Lambda
// delivers a record again: neither run reports a batch item failure. The
// tenant has no webhook endpoints, so nothing is queued. The events
// action.FeedOf reads from each head must be its actions, in its scope,
// with sequences that end at its seq; a head it reads no events from is
// accepted (logged) while the feed heads are not written.
func runFanoutSample(t *testing.T, h *testkit.Harness, raw []byte, bindings map[string]string, function string) {
	t.Helper()
	ev := checkStreamEvent(t, h, raw, bindings, function, "INSERT", "MODIFY")
	var list struct{ Items []entity }
	h.Do("GET", "/webhooks/endpoints", nil, h.Admin()).Expect(t, 200, "").JSON(t, &list)
	if len(list.Items) != 0 {
		t.Fatalf("the tenant has webhook endpoints %v: the sample would be queued", list.Items)
	}
	for _, rec := range ev.Records {
		img := rec.Change.NewImage
		pk, sk, seq := img["pk"], img["sk"], img["seq"]
		if pk.DataType() != events.DataTypeString || sk.DataType() != events.DataTypeString || sk.String() != "FEED" || seq.DataType() != events.DataTypeNumber {
			t.Fatalf("not a feed head (pk, sk FEED, seq): %v", img)
		}
		tenantID, scope, ok := strings.Cut(pk.String(), "#FEED#")
		if !ok {
			t.Fatalf("pk %s is not <tenant>#FEED#<scope>", pk.String())
		}
		n, err := seq.Integer()
		if err != nil {
			t.Fatalf("seq: %v", err)
		}
		got, ok, err := action.FeedOf(ddb.StreamItem(img))
		if err != nil {
			t.Fatalf("action.FeedOf(%s): %v", pk.String(), err)
		}
		if !ok || len(got) == 0 {
			t.Logf("action.FeedOf reads no events from %s: the feed heads are not written yet", pk.String())
			continue
		}
		stored := img["events"].List()
		if len(got) != len(stored) {
			t.Fatalf("action.FeedOf read %d events, the head holds %d", len(got), len(stored))
		}
		for i, e := range got {
			want := n - int64(len(got)) + 1 + int64(i)
			if e.Sequence != want || e.Scope != scope || e.TenantID != tenantID || e.ID != stored[i].Map()["id"].String() {
				t.Errorf("event %d = %s %s scope %s sequence %d, want %s of scope %s, sequence %d", i, e.ID, e.Type, e.Scope, e.Sequence, stored[i].Map()["id"].String(), scope, want)
			}
		}
	}
	handler, err := h.Deps.StreamHandler(function)
	if err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		resp, err := handler(context.Background(), ev)
		if err != nil {
			t.Fatalf("run %d: handler: %v", run, err)
		}
		if len(resp.BatchItemFailures) != 0 {
			t.Fatalf("run %d: batch item failures %+v", run, resp.BatchItemFailures)
		}
	}
}

// runSenderSample checks that a sample is an SQS event of the FIFO queue
// the function receives from (an SQS event of the function in
// template.yaml, on a FIFO queue whose name the records' ARN ends with),
// each message with the FIFO attributes (MessageGroupId,
// MessageDeduplicationId, SequenceNumber) and a body that names an event
// for an endpoint of the tenant; binds its placeholders by a plain replace
// over its text; and runs it through the webhooksender function's
// handler. The endpoint was deleted (its GET is 404), so every message is
// dropped: none is reported for another delivery.
func runSenderSample(t *testing.T, h *testkit.Harness, raw []byte, bindings map[string]string, function string) {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal([]byte(idReplacer(bindings).Replace(string(raw))), &ev); err != nil {
		t.Fatalf("decode: %v", err)
	}
	queue := fifoQueueSuffix(t, h, function)
	if len(ev.Records) == 0 {
		t.Fatal("no SQS messages")
	}
	for _, msg := range ev.Records {
		a := msg.Attributes
		if msg.EventSource != "aws:sqs" || msg.MessageId == "" || msg.ReceiptHandle == "" || !strings.HasSuffix(msg.EventSourceARN, queue) ||
			a["MessageGroupId"] == "" || a["MessageDeduplicationId"] == "" || a["SequenceNumber"] == "" || a["ApproximateReceiveCount"] == "" {
			t.Fatalf("not a message of the FIFO queue *%s with its group, deduplication id and sequence number: %+v", queue, msg)
		}
		var body struct {
			Kind     string `json:"k"`
			TenantID string `json:"t"`
			Endpoint string `json:"e"`
			EventID  string `json:"ev"`
			Type     string `json:"ty"`
		}
		if err := json.Unmarshal([]byte(msg.Body), &body); err != nil || body.Kind != "event" || body.TenantID != h.Tenant.ID || body.Endpoint == "" || body.EventID == "" || body.Type == "" {
			t.Fatalf("message %s: body %s is not an event of the tenant for an endpoint (%v)", msg.MessageId, msg.Body, err)
		}
		if !strings.HasPrefix(a["MessageGroupId"], body.Endpoint+":") || !strings.HasPrefix(a["MessageDeduplicationId"], body.Endpoint+":") {
			t.Fatalf("message %s: group %q and deduplication id %q do not start with its endpoint", msg.MessageId, a["MessageGroupId"], a["MessageDeduplicationId"])
		}
		h.Do("GET", "/webhooks/endpoints/"+body.Endpoint, nil, h.Admin()).Expect(t, 404, "NOT_FOUND")
	}
	handler, err := h.Deps.QueueHandler(function)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := handler(context.Background(), ev)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("batch item failures %+v, want none (a deleted endpoint's message is dropped)", resp.BatchItemFailures)
	}
}

// fifoQueueSuffix returns the end of the name of the FIFO queue an SQS
// event of the function reads in template.yaml (its QueueName after the
// stack name: -webhooks.fifo).
func fifoQueueSuffix(t *testing.T, h *testkit.Harness, function string) string {
	t.Helper()
	fn, ok := h.Template.Function(function)
	if !ok {
		t.Fatalf("no function %s in template.yaml", function)
	}
	evs, _ := h.Template.Resources[fn.LogicalID].Properties["Events"].(map[string]any)
	for _, e := range evs {
		m, _ := e.(map[string]any)
		props, _ := m["Properties"].(map[string]any)
		if m["Type"] != "SQS" {
			continue
		}
		att, _ := props["Queue"].(map[string]any)
		ref, _ := att["Fn::GetAtt"].(string)
		id, _, _ := strings.Cut(ref, ".")
		q := h.Template.Resources[id]
		sub, _ := q.Properties["QueueName"].(map[string]any)
		name, _ := sub["Fn::Sub"].(string)
		_, suffix, _ := strings.Cut(name, "}")
		if q.Type == "AWS::SQS::Queue" && fmt.Sprint(q.Properties["FifoQueue"]) == "true" && strings.HasSuffix(suffix, ".fifo") {
			return suffix
		}
	}
	t.Fatalf("%s has no SQS event on a FIFO queue of the template", fn.LogicalID)
	return ""
}

// availablePoints returns the points the user's award of the perk holds
// (0 while the user holds none).
func availablePoints(t *testing.T, h *testkit.Harness, userID, perkID string) int {
	t.Helper()
	var out struct {
		Awards []struct {
			ID     string `json:"_id"`
			Points struct {
				Available int `json:"available"`
			} `json:"points"`
		} `json:"awards"`
	}
	h.Do("GET", "/users/"+userID+"/pointawards", nil, h.Admin()).Expect(t, 200, "").JSON(t, &out)
	for _, a := range out.Awards {
		if a.ID == userID+"-"+perkID {
			return a.Points.Available
		}
	}
	return 0
}
