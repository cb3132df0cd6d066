package award_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/loyalty-platform/platform/shared/domain/award"
	"github.com/loyalty-platform/platform/shared/domain/ledger"
	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/ddb"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// oldLot is a lot of an award an older version of the platform stored:
// its points (all of them remaining), when they were earned and when they
// expire (zero: never).
type oldLot struct {
	points          int
	earned, expires time.Time
}

// storedLot is a lot as an award item holds it.
type storedLot struct {
	ID        string `dynamodbav:"id"`
	Points    int    `dynamodbav:"points"`
	Remaining int    `dynamodbav:"remaining"`
	EarnedAt  string `dynamodbav:"earnedAt"`
	ExpiresAt string `dynamodbav:"expiresAt,omitempty"`
}

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func avN(v int) types.AttributeValue    { return &types.AttributeValueMemberN{Value: fmt.Sprint(v)} }

// putOldAward stores user uid's award of perk as a version of the
// platform from before the liability's marker stored it, with the
// DynamoDB client: the award item (counters, lots, entry count) and one
// EARN entry per lot, in one transaction, with no marker and nothing
// added to the liability.
func putOldAward(t *testing.T, h *ts.Harness, uid, perkID string, lots []oldLot) {
	t.Helper()
	available := 0
	for _, l := range lots {
		available += l.points
	}
	item, id, now := oldAwardItem(h, uid, perkID, available)
	tn, table := h.Tenant.ID, h.Deps.Awards.Table
	var entries []types.TransactWriteItem
	stored := make([]storedLot, 0, len(lots))
	balance := 0
	for i, l := range lots {
		seq := i + 1
		sl := storedLot{ID: fmt.Sprintf("%s.%d", id, seq), Points: l.points, Remaining: l.points, EarnedAt: clock.Stamp(l.earned)}
		if !l.expires.IsZero() {
			sl.ExpiresAt = clock.Stamp(l.expires)
		}
		stored = append(stored, sl)
		balance += l.points
		e, err := ledger.Item(table, tn, uid, perkID, ledger.Entry{Seq: seq, Type: ledger.Earn, Points: l.points, BalanceAfter: balance,
			Lots: []ledger.LotPoints{{LotID: sl.ID, Points: l.points, ExpiresAt: sl.ExpiresAt}}, Cause: ledger.Cause{Source: "API"}, Created: now})
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	lv, err := attributevalue.Marshal(stored)
	if err != nil {
		t.Fatal(err)
	}
	item["lots"], item["drawn"], item["seq"] = lv, &types.AttributeValueMemberL{Value: []types.AttributeValue{}}, avN(len(stored))
	item["reversed"], item["adjusted"], item["expired"] = avN(0), avN(0), avN(0)
	put := types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}}
	if err := ddb.Transact(context.Background(), h.Deps.DB, append([]types.TransactWriteItem{put}, entries...)); err != nil {
		t.Fatalf("store old award %s: %v", id, err)
	}
}

// putPointsOnlyAward stores user uid's award of perk as a version from
// before lots and the ledger stored it: its points only (no lots, no
// entry count, no entries), no marker, nothing in the liability.
func putPointsOnlyAward(t *testing.T, h *ts.Harness, uid, perkID string, points int) {
	t.Helper()
	item, id, _ := oldAwardItem(h, uid, perkID, points)
	_, err := h.Deps.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(h.Deps.Awards.Table), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if err != nil {
		t.Fatalf("store old award %s: %v", id, err)
	}
}

// oldAwardItem is the item of user uid's award of perk holding available
// points as every version stored it: its keys (and the tenant index's),
// identity, timestamps (now) and counters of grants and redemptions.
func oldAwardItem(h *ts.Harness, uid, perkID string, available int) (item map[string]types.AttributeValue, id, now string) {
	tn := h.Tenant.ID
	id, now = uid+"-"+perkID, clock.Stamp(h.Clock.Now())
	return map[string]types.AttributeValue{
		"pk": avS(tn + "#USER#" + uid), "sk": avS("AWARD#" + perkID), "gsi1pk": avS(tn + "#AWARDS"), "gsi1sk": avS(now + "#" + id),
		"id": avS(id), "tenantId": avS(tn), "userId": avS(uid), "perkId": avS(perkID), "created": avS(now), "updatedAt": avS(now),
		"available": avN(available), "granted": avN(available), "redeemed": avN(0), "refunded": avN(0), "refundable": avN(0), "redemptions": avN(0),
	}, id, now
}

// londonMidnight is the midnight in London (the tenant's zone) months
// from now.
func londonMidnight(h *ts.Harness, months int) time.Time {
	london, _ := time.LoadLocation("Europe/London")
	d := h.Clock.Now().In(london).AddDate(0, months, 0)
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, london)
}

// rebuildResult is what a finished rebuild's operation reports.
type rebuildResult struct{ total, counted, skipped int }

func resultOf(t *testing.T, op map[string]any) rebuildResult {
	t.Helper()
	if op["status"] != "DONE" {
		t.Fatalf("rebuild = %v", op)
	}
	res := op["result"].(map[string]any)
	counted, ok := res["counted"].(float64)
	if !ok {
		t.Fatalf("no result.counted: %v", res)
	}
	return rebuildResult{total: int(res["total"].(float64)), counted: int(counted), skipped: int(res["skipped"].(float64))}
}

// startRebuild sends POST /reports/points-liability/rebuild as the admin
// and returns the operation's id.
func startRebuild(t *testing.T, h *ts.Harness) string {
	t.Helper()
	op := h.Do("POST", "/reports/points-liability/rebuild", nil, h.Admin(), ts.Headers{"x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, "").Map(t)
	if op["namespace"] != "reports" || op["name"] != "points-liability-rebuild" {
		t.Fatalf("operation = %v", op)
	}
	return op["_id"].(string)
}

// rebuild runs a rebuild through the jobs function and returns its
// result.
func rebuild(t *testing.T, h *ts.Harness) rebuildResult {
	t.Helper()
	return resultOf(t, h.WaitOperation(startRebuild(t, h)))
}

// importRows runs an award import (dryRun=false) of a CSV through POST
// /awards/imports and the jobs function.
func importRows(t *testing.T, h *ts.Harness, content string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile("file", "awards.csv")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write([]byte(content))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	op := h.Do("POST", "/awards/imports?dryRun=false", buf.Bytes(), h.Admin(),
		ts.Headers{"Content-Type", w.FormDataContentType(), "x-platform-req-nonce", ts.Nonce()}).Expect(t, 202, "").Map(t)
	if done := h.WaitOperation(op["_id"].(string)); done["status"] != "DONE" || done["result"].(map[string]any)["errors"].(float64) != 0 {
		t.Fatalf("import = %v", done)
	}
}

// TestLiabilityRebuild upgrades a tenant with awards an older version
// stored (lots expiring in several months, lots that never expire, an
// award from before lots): the report misses them; a grant and an import
// row each count the old award they change whole; the rebuild counts the
// rest, after which the report equals the awards' sums (outstanding and
// every month, now and 200 days ahead); a second rebuild changes nothing;
// and later writes add only their own change.
func TestLiabilityRebuild(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	plain := newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY"})
	var users []string
	for i := range 5 {
		users = append(users, h.AdminUser(t, "Old", fmt.Sprintf("Timer%d", i)))
	}
	now := h.Clock.Now()
	later := now.Add(200 * day).UTC().Format(time.RFC3339)
	// Old awards: users[0..2] and users[4] of perk, users[0] and users[2]
	// of plain. users[3]'s awards are written by this version.
	putOldAward(t, h, users[0], perk, []oldLot{
		{points: 100, earned: now.AddDate(0, -2, 0), expires: londonMidnight(h, 10)},
		{points: 40, earned: now.AddDate(0, -11, 0), expires: londonMidnight(h, 1)},
		{points: 25, earned: now.AddDate(-2, 0, 0)},
	})
	putOldAward(t, h, users[1], perk, []oldLot{{points: 60, earned: now.AddDate(0, -6, 0), expires: londonMidnight(h, 6)}})
	putOldAward(t, h, users[2], perk, []oldLot{{points: 33, earned: now.AddDate(0, -3, 0), expires: londonMidnight(h, 9)}})
	putOldAward(t, h, users[4], perk, []oldLot{{points: 12, earned: now.AddDate(0, -1, 0), expires: londonMidnight(h, 11)}})
	putOldAward(t, h, users[0], plain, []oldLot{{points: 15, earned: now.AddDate(0, -1, 0)}})
	putPointsOnlyAward(t, h, users[2], plain, 70)
	grantAt(t, h, perk, users[3], 30, "")
	grantAt(t, h, plain, users[3], 20, "")

	// reportIs checks the report of perk against the sum of the users'
	// awards.
	reportIs := func(t *testing.T, perkID string, counted ...string) {
		t.Helper()
		got := readLiability(t, h, "perkId="+perkID)
		out, exp := expectedLiability(t, h, perkID, counted, h.Clock.Now(), got.months)
		if got.outstanding[perkID] != out || !reflect.DeepEqual(got.expiring[perkID], exp) {
			t.Errorf("perk %s: report %d %v, want %d %v (the awards of %v)", perkID, got.outstanding[perkID], got.expiring[perkID], out, exp, counted)
		}
	}
	t.Run("ReportMissesOldAwards", func(t *testing.T) {
		reportIs(t, perk, users[3])
		reportIs(t, plain, users[3])
		all, _ := expectedLiability(t, h, perk, users, h.Clock.Now(), nil)
		if got := readLiability(t, h, "perkId="+perk).outstanding[perk]; got == all {
			t.Fatalf("outstanding = %d, the old awards' sum too: the fixture proves nothing", got)
		}
	})
	t.Run("GrantCountsOldAwardWhole", func(t *testing.T) {
		grantAt(t, h, perk, users[1], 10, "")
		reportIs(t, perk, users[1], users[3])
	})
	t.Run("ImportCountsOldAwardWhole", func(t *testing.T) {
		importRows(t, h, "user_id,perk_id,points\n"+users[4]+","+perk+",5\n"+users[3]+","+perk+",1\n")
		reportIs(t, perk, users[1], users[3], users[4])
	})
	t.Run("Rebuild", func(t *testing.T) {
		// 8 awards: 3 counted by their writes, 5 left.
		if got, want := rebuild(t, h), (rebuildResult{total: 8, counted: 4, skipped: 4}); got != want {
			t.Errorf("result = %+v, want %+v", got, want)
		}
		for _, p := range []string{perk, plain} {
			checkLiability(t, h, p, users, "")
			checkLiability(t, h, p, users, later)
		}
	})
	t.Run("RebuildAgain", func(t *testing.T) {
		before := readLiability(t, h, "")
		if got, want := rebuild(t, h), (rebuildResult{total: 8, counted: 0, skipped: 8}); got != want {
			t.Errorf("result = %+v, want %+v", got, want)
		}
		after := readLiability(t, h, "")
		// The reads' asOf are their own instants (a second may pass).
		after.asOf = before.asOf
		if !reflect.DeepEqual(after, before) {
			t.Errorf("a second rebuild changed the report:\nbefore %+v\nafter  %+v", before, after)
		}
	})
	t.Run("WritesAfterRebuild", func(t *testing.T) {
		h.Do("POST", "/users/"+users[0]+"/pointawards/"+users[0]+"-"+perk+"/redeem", map[string]any{"valueToRedeem": 50}, h.Admin()).Expect(t, 200, "")
		grantAt(t, h, plain, users[2], 5, "")
		h.Do("PUT", "/pointawards/"+users[2]+"-"+perk, map[string]any{"points": map[string]any{"available": 10}}, h.Admin()).Expect(t, 200, "")
		for _, p := range []string{perk, plain} {
			checkLiability(t, h, p, users, "")
			checkLiability(t, h, p, users, later)
		}
	})
	t.Run("ExpiryOfOldLots", func(t *testing.T) {
		// users[0]'s lot of 40 expires in a month: first not written off,
		// then by the expiry run.
		h.Clock.Advance(40 * day)
		checkLiability(t, h, perk, users, "")
		runExpiry(t, h)
		checkLiability(t, h, perk, users, "")
	})
}

// TestLiabilityRebuildRequests checks who may start a rebuild and what
// its request accepts.
func TestLiabilityRebuildRequests(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	_, token, _ := h.ActiveUser(t, "Us", "Er")
	nonce := ts.Nonce()
	send := func(body any, caller ts.Headers, n string) *ts.Resp {
		hs := ts.Headers{}
		if n != "" {
			hs = ts.Headers{"x-platform-req-nonce", n}
		}
		return h.Do("POST", "/reports/points-liability/rebuild", body, caller, hs)
	}
	first := send(nil, h.Admin(), nonce).Expect(t, 202, "").Map(t)
	if again := send(map[string]any{}, h.Admin(), nonce).Expect(t, 202, "").Map(t); again["_id"] != first["_id"] {
		t.Errorf("a repeated nonce started operation %v, want %v", again["_id"], first["_id"])
	}
	tests := []struct {
		name   string
		body   any
		caller ts.Headers
		nonce  string
		status int
		code   string
	}{
		{"NoBody", nil, h.Admin(), ts.Nonce(), 202, ""},
		{"EmptyObject", map[string]any{}, h.Admin(), ts.Nonce(), 202, ""},
		{"UnknownField", map[string]any{"perkId": "5f1c0a9b2d3e4f5a6b7c8d9e"}, h.Admin(), ts.Nonce(), 422, "VALIDATION_FAILED"},
		{"NoNonce", nil, h.Admin(), "", 422, "VALIDATION_FAILED"},
		{"MalformedNonce", nil, h.Admin(), "not-a-guid", 422, "VALIDATION_FAILED"},
		{"User", nil, ts.Token(token), ts.Nonce(), 401, "UNAUTHORIZED"},
		{"Anonymous", nil, h.Anon(), ts.Nonce(), 401, "UNAUTHORIZED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			send(tc.body, tc.caller, tc.nonce).Expect(t, tc.status, tc.code)
		})
	}
	if op := h.WaitOperation(first["_id"].(string)); op["status"] != "DONE" {
		t.Errorf("rebuild of a tenant without awards = %v", op)
	}
}

// raceDB is the award domain's DynamoDB with a hook run before each
// transaction (once it returns, the transaction goes on), and counts of
// the transactions whose award condition failed: the rebuild's counts,
// and the other writes of awards.
type raceDB struct {
	ddb.API
	before func(in *dynamodb.TransactWriteItemsInput)
	// lostCounts and lostWrites count the lost races.
	lostCounts, lostWrites atomic.Int64
}

// isCount reports whether a transaction is a rebuild's count of an award.
func isCount(in *dynamodb.TransactWriteItemsInput) bool {
	u := in.TransactItems[0].Update
	return u != nil && strings.HasPrefix(aws.ToString(u.UpdateExpression), "SET liabilityCounted = ")
}

// awardWrite returns the index of the write of an award in a transaction
// other than a rebuild's count, or -1.
func awardWrite(in *dynamodb.TransactWriteItemsInput) int {
	if isCount(in) {
		return -1
	}
	for i, it := range in.TransactItems {
		if u := it.Update; u != nil {
			if sk, ok := u.Key["sk"].(*types.AttributeValueMemberS); ok && strings.HasPrefix(sk.Value, "AWARD#") {
				return i
			}
		}
	}
	return -1
}

func (d *raceDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if d.before != nil {
		d.before(in)
	}
	out, err := d.API.TransactWriteItems(ctx, in, o...)
	switch {
	case err == nil:
	case isCount(in) && ddb.Failed(err, 0):
		d.lostCounts.Add(1)
	case awardWrite(in) >= 0 && ddb.Failed(err, awardWrite(in)):
		d.lostWrites.Add(1)
	}
	return out, err
}

// withRaceDB puts a raceDB under the award domain of the loyalty function
// (its routes) and of the jobs function (the rebuild) for the rest of the
// test.
func withRaceDB(t *testing.T, h *ts.Harness) *raceDB {
	d := &raceDB{API: h.Deps.Awards.DB}
	awards := []*award.Service{h.Deps.Fn.Loyalty.Awards, h.Deps.Fn.Jobs.Awards}
	for _, a := range awards {
		a.DB = d
	}
	t.Cleanup(func() {
		for _, a := range awards {
			a.DB = d.API
		}
	})
	return d
}

// awardOfCount returns the user and perk of the award a rebuild's count
// names.
func awardOfCount(in *dynamodb.TransactWriteItemsInput) (uid, perkID string) {
	k := in.TransactItems[0].Update.Key
	pk := k["pk"].(*types.AttributeValueMemberS).Value
	sk := k["sk"].(*types.AttributeValueMemberS).Value
	return pk[strings.LastIndex(pk, "#")+1:], strings.TrimPrefix(sk, "AWARD#")
}

// TestLiabilityRebuildRaces races the rebuild with grants of the same
// old awards: a grant that commits between the rebuild's read of an award
// and its count (the count fails, reads again, finds the award counted by
// the grant); a rebuild that counts an award between a grant's read and
// its write (the grant's write fails, reads again, adds only its own
// points); and grants from several goroutines while a rebuild runs one
// award per checkpoint. Each ends with the report equal to the awards'
// sums, and the rebuild reports what it counted.
func TestLiabilityRebuildRaces(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	plain := newPerk(t, h, map[string]any{"template": "PSEUDO_CURRENCY"})
	c := h.CaptureS3("jobs")
	db := withRaceDB(t, h)
	runRebuild := func(t *testing.T) rebuildResult {
		t.Helper()
		id := startRebuild(t, h)
		op, _ := h.RunJob(h.Deps.Jobs, c, id, c.Next(t), 10, nil)
		return resultOf(t, op)
	}
	var users []string
	oldAwards := func(t *testing.T, n int) []string {
		t.Helper()
		var out []string
		for i := range n {
			uid := h.AdminUser(t, "Ra", fmt.Sprintf("Cer%d", len(users)))
			users = append(users, uid)
			out = append(out, uid)
			putOldAward(t, h, uid, perk, []oldLot{{points: 50 + i, earned: h.Clock.Now().AddDate(0, -1, 0), expires: londonMidnight(h, 3+i%8)}})
			putPointsOnlyAward(t, h, uid, plain, 20+i)
		}
		return out
	}
	check := func(t *testing.T) {
		t.Helper()
		for _, p := range []string{perk, plain} {
			checkLiability(t, h, p, users, "")
		}
	}

	t.Run("GrantBetweenReadAndCount", func(t *testing.T) {
		oldAwards(t, 2)
		var once sync.Once
		var granted string
		db.before = func(in *dynamodb.TransactWriteItemsInput) {
			if !isCount(in) {
				return
			}
			once.Do(func() {
				uid, perkID := awardOfCount(in)
				granted = uid + "-" + perkID
				if r := h.Do("POST", "/pointperks/"+perkID+"/awards", map[string]any{"userId": uid, "points": 7}, h.Admin()); r.Status != 200 {
					t.Errorf("grant: %d %s", r.Status, r.Body)
				}
			})
		}
		lost := db.lostCounts.Load()
		res := runRebuild(t)
		db.before = nil
		if granted == "" || db.lostCounts.Load() == lost {
			t.Fatalf("no count lost its race (granted %q)", granted)
		}
		// 4 old awards read; the granted one counted by its grant.
		if want := (rebuildResult{total: 4, counted: 3, skipped: 1}); res != want {
			t.Errorf("result = %+v, want %+v", res, want)
		}
		check(t)
	})
	t.Run("CountBetweenReadAndGrant", func(t *testing.T) {
		mine := oldAwards(t, 2)
		id := startRebuild(t, h)
		ev := c.Next(t)
		var once sync.Once
		var runErr error
		db.before = func(in *dynamodb.TransactWriteItemsInput) {
			if awardWrite(in) < 0 {
				return
			}
			// The grant read the award without the marker: the rebuild
			// runs to its end before the grant writes.
			once.Do(func() { runErr = h.Deps.Jobs.HandleS3(context.Background(), ev) })
		}
		lost := db.lostWrites.Load()
		a := h.Do("POST", "/pointperks/"+perk+"/awards", map[string]any{"userId": mine[0], "points": 9}, h.Admin()).Expect(t, 200, "").Map(t)
		db.before = nil
		if runErr != nil {
			t.Fatal(runErr)
		}
		if got := available(t, a); got != 50+9 {
			t.Errorf("available = %d, want %d", got, 50+9)
		}
		if db.lostWrites.Load() == lost {
			t.Error("the grant's write did not lose its race")
		}
		op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		// 4 new old awards and the 2 counted before; the grant's award
		// counted by the rebuild.
		if got, want := resultOf(t, op), (rebuildResult{total: 8, counted: 4, skipped: 4}); got != want {
			t.Errorf("result = %+v, want %+v", got, want)
		}
		check(t)
	})
	t.Run("ConcurrentGrants", func(t *testing.T) {
		mine := oldAwards(t, 12)
		h.Deps.AwardJobs.RebuildPage = 1
		defer func() { h.Deps.AwardJobs.RebuildPage = 0 }()
		countsBefore, writesBefore := db.lostCounts.Load(), db.lostWrites.Load()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var grants atomic.Int64
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := rand.New(rand.NewPCG(uint64(w), 7))
				for {
					select {
					case <-stop:
						return
					default:
					}
					uid := mine[rnd.IntN(len(mine))]
					p := perk
					if rnd.IntN(2) == 0 {
						p = plain
					}
					r := h.Do("POST", "/pointperks/"+p+"/awards", map[string]any{"userId": uid, "points": 1 + rnd.IntN(5)}, h.Admin())
					if r.Status != 200 && r.Status != 409 {
						t.Errorf("grant: %d %s", r.Status, r.Body)
						return
					}
					grants.Add(1)
				}
			}()
		}
		res := runRebuild(t)
		close(stop)
		wg.Wait()
		t.Logf("%d grants during the rebuild; %d counts and %d grants lost a race; result %+v",
			grants.Load(), db.lostCounts.Load()-countsBefore, db.lostWrites.Load()-writesBefore, res)
		// The awards the grants changed since the request are not read
		// (their grants counted them).
		if res.counted > 24 || res.total > 32 || res.counted+res.skipped != res.total {
			t.Errorf("result = %+v: at most the 24 old awards counted, each of the 32 awards read at most once", res)
		}
		check(t)
		// Whatever the grants counted and the rebuild did not, a second
		// rebuild finds counted.
		if again := runRebuild(t); again.counted != 0 {
			t.Errorf("second rebuild counted %d", again.counted)
		}
		check(t)
	})
}

// errCommit is the fault TestLiabilityRebuildResumes injects in the
// rebuild's checkpoints.
var errCommit = errors.New("injected: the run died before its checkpoint")

// failingOps fails every other checkpoint of a job (the operation's
// UpdateItem that writes cp): the run dies after counting a page's awards,
// before its checkpoint.
type failingOps struct {
	ddb.API
	commits atomic.Int64
}

func (f *failingOps) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if strings.HasPrefix(aws.ToString(in.UpdateExpression), "SET cp = :cp") && f.commits.Add(1)%2 == 0 {
		return nil, errCommit
	}
	return f.API.UpdateItem(ctx, in, o...)
}

// TestLiabilityRebuildResumes runs a rebuild two awards per checkpoint
// that continues in a new invocation after each, and dies before every
// other checkpoint: each run resumes at the last checkpoint, finds the
// awards the run that died counted past it (they name the operation), and
// counts them once; the result and the report are exact.
func TestLiabilityRebuildResumes(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	perk := expiringPerk(t, h, map[string]any{"policy": "AFTER_EARN", "duration": "P12M"})
	var users []string
	for i := range 7 {
		uid := h.AdminUser(t, "Re", fmt.Sprintf("Sume%d", i))
		users = append(users, uid)
		putOldAward(t, h, uid, perk, []oldLot{{points: 10 + i, earned: h.Clock.Now().AddDate(0, -2, 0), expires: londonMidnight(h, 1+i)}})
	}
	grantAt(t, h, perk, users[6], 4, "")
	c := h.CaptureS3("jobs")
	jobs := h.Deps.Jobs
	ops := &failingOps{API: jobs.Ops.DB}
	jobs.Ops.DB, h.Deps.AwardJobs.RebuildPage, jobs.MaxRowsPerRun = ops, 2, 2
	t.Cleanup(func() { jobs.Ops.DB, h.Deps.AwardJobs.RebuildPage, jobs.MaxRowsPerRun = ops.API, 0, 0 })
	id := startRebuild(t, h)
	ev := c.Next(t)
	deaths := 0
	for runs := 1; ; runs++ {
		err := jobs.HandleS3(context.Background(), ev)
		switch {
		case errors.Is(err, errCommit):
			deaths++ // Lambda retries the same event
		case err != nil:
			t.Fatal(err)
		default:
			if pending := c.Pending(); len(pending) > 0 {
				ev = pending[len(pending)-1]
			}
		}
		op := h.Do("GET", "/operations/"+id, nil, h.Admin()).Expect(t, 200, "").Map(t)
		if op["status"] == "DONE" {
			if got, want := resultOf(t, op), (rebuildResult{total: 7, counted: 6, skipped: 1}); got != want {
				t.Errorf("result = %+v, want %+v", got, want)
			}
			break
		}
		if runs > 30 {
			t.Fatalf("not done after %d runs: %v", runs, op)
		}
	}
	if deaths == 0 {
		t.Fatal("no run died")
	}
	t.Logf("%d runs died before their checkpoint", deaths)
	checkLiability(t, h, perk, users, "")
	checkLiability(t, h, perk, users, h.Clock.Now().Add(90*day).UTC().Format(time.RFC3339))
}
