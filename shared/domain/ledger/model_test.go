package ledger_test

// The model-based test of money and points: random sequences of the
// requests that move them (grants, credits, redemptions, refunds, settings,
// orders, transactions and their refunds, retries with the same
// Idempotency-Key, repeats of a POS shortCode, segment joins and leaves of
// a CLUB perk's members, the clock and the daily expiry), with rules that
// earn on orders, chain on grants and add to the segment, run through the
// real handlers and, step by step, against a reference model in plain Go
// (exact: money in pence). After every step the model predicts the answer
// (status and error code, the award or balance it shows) and the state:
// every award of the step's user, its totals, the ledger entries the step
// wrote (numbered on, each balanceAfter the running sum, the entries the
// model expects; the whole ledger every wholeEvery steps and at the end)
// and the app balance with its money ledger (the same checks). Some steps
// send two requests at once (two redemptions of one award; an order's
// completion and the refund of its transaction) and the model moves by the
// order that fits the answers and the state. A failing run is shrunk
// (steps removed greedily, each candidate run on a fresh tenant) and
// printed with its seed.
//
//	MODEL_SEED=S MODEL_STEPS=N go test -run TestModel ./shared/ledger/
//
// runs one seed for N steps (make model SEED=S STEPS=N).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ts "github.com/loyalty-platform/platform/shared/testkit"
)

func TestMain(m *testing.M) { ts.Main(m) }

// Default run: these seeds, each for defaultSteps steps (make test).
var defaultSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

const defaultSteps = 250

// wholeEvery is how often (in steps) the step's user's ledgers are read
// whole.
const wholeEvery = 200

// maxShrinkRuns bounds the re-runs of a failing sequence (MODEL_SHRINK).
var maxShrinkRuns = 30

// envInt reads the environment variable name as a number from lo to hi
// (def when it is not set).
func envInt(t *testing.T, name string, def, lo, hi int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		t.Fatalf("%s=%q: want a number from %d to %d", name, v, lo, hi)
	}
	return n
}

// deadline, when set (MODEL_DURATION), ends each run's generation of
// steps; progressEvery (MODEL_PROGRESS) is how often a run tells the
// steps it passed on stderr (0: never).
var (
	deadline      time.Time
	progressEvery int
)

func TestModel(t *testing.T) {
	seeds, steps := defaultSeeds, defaultSteps
	if v := os.Getenv("MODEL_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("MODEL_DURATION=%q: want a duration such as 90m", v)
		}
		deadline = time.Now().Add(d)
		steps = math.MaxInt // unless MODEL_STEPS bounds them too
	}
	maxShrinkRuns = envInt(t, "MODEL_SHRINK", maxShrinkRuns, 0, math.MaxInt)
	progressEvery = envInt(t, "MODEL_PROGRESS", 0, 0, math.MaxInt)
	steps = envInt(t, "MODEL_STEPS", steps, 1, math.MaxInt)
	if v := os.Getenv("MODEL_SEED"); v != "" {
		if v == "random" {
			// MODEL_RUNS random seeds at once (default 1).
			n := envInt(t, "MODEL_RUNS", 1, 1, 64)
			seeds = nil
			for i := range n {
				seeds = append(seeds, uint64(time.Now().UnixNano())+uint64(i)*0x9e3779b97f4a7c15)
			}
		} else {
			s, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("MODEL_SEED=%q: want a number or random", v)
			}
			seeds = []uint64{s}
		}
	}
	// The seeds run at once, each on its own tenant (the requests wait on
	// DynamoDB Local more than they use a core); each is reported in its
	// own subtest.
	type result struct {
		seq   []step
		fail  *failure
		took  time.Duration
		stats string
	}
	results := make([]result, len(seeds))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		wg.Go(func() {
			start := time.Now()
			seq, fail, stats := run(t, seed, nil, steps)
			results[i] = result{seq, fail, time.Since(start), stats}
			if fail != nil && progressEvery > 0 {
				// A long run tells its failure at once (the shrinking
				// after it can take long).
				fmt.Fprintf(os.Stderr, "model: seed %d failed at step %d of %d: %s\n", seed, fail.at, len(seq), fail.msg)
			}
		})
	}
	wg.Wait()
	for i, seed := range seeds {
		t.Run(fmt.Sprintf("Seed%d", seed), func(t *testing.T) {
			res := results[i]
			if res.fail == nil {
				t.Logf("seed %d: %d steps in %v (%s)", seed, len(res.seq), res.took.Round(time.Millisecond), res.stats)
				return
			}
			seq, fail := res.seq, res.fail
			short, sfail, runs := shrink(t, seed, seq[:fail.at+1], fail)
			var b strings.Builder
			fmt.Fprintf(&b, "seed %d (MODEL_SEED=%d MODEL_STEPS=%d): step %d of %d failed: %s\n", seed, seed, steps, fail.at, len(seq), fail.msg)
			fmt.Fprintf(&b, "shortest failing sequence found (%d steps, %d re-runs), failing at #%d: %s\n", len(short), runs, short[sfail.at].ID, sfail.msg)
			for _, s := range short {
				fmt.Fprintf(&b, "  %s\n", s)
			}
			t.Error(b.String())
		})
	}
}

// ---- steps ----

type kind int

const (
	kGrant kind = iota
	kCreditPoints
	kCreditBalance
	kRedeem
	kRefund
	kSet
	kOrder
	kComplete
	kTxn
	kTxnRefund
	kRetry     // the request of step Ref again, with its Idempotency-Key
	kReuse     // step Ref's Idempotency-Key with another body
	kTxnRepeat // step Ref's transaction again (same shortCode; Alt: another body)
	kAdvance   // the clock moves N days on
	kExpire    // the daily points expiry runs for the tenant
	kPair      // two redemptions of one award (N and N2) at once
	kDelete    // the user is deleted
	kJoin      // the user joins the club segment (the CLUB perk's)
	kLeave     // the user is removed from the club segment
	kRace      // order Ref's completion and the refund of its transaction N at once
)

var kindNames = map[kind]string{
	kGrant: "grant", kCreditPoints: "credit-points", kCreditBalance: "credit-balance", kRedeem: "redeem", kRefund: "refund",
	kSet: "set", kOrder: "order", kComplete: "complete", kTxn: "txn", kTxnRefund: "txn-refund", kRetry: "retry",
	kReuse: "key-reuse", kTxnRepeat: "txn-repeat", kAdvance: "advance", kExpire: "expiry-run", kPair: "redeem-pair", kDelete: "delete-user",
	kJoin: "join", kLeave: "leave", kRace: "complete-and-refund",
}

// red is a redemption of an order: the perk, value and quantity (0:
// absent).
type red struct{ Perk, Value, Qty int }

// step is one request, as data: references to earlier steps are by their
// ID (generation index), so that a step whose referent was removed by the
// shrinker is skipped.
type step struct {
	ID   int
	Kind kind
	User int
	Perk int
	N    int // points, value or amount (money in pence)
	Key  string
	Ref  int // the step this one names (order, transaction, retried step); -1 none
	App  bool
	Pay  int // totalPayment in pence (0: absent)
	Reds []red
	Code string
	Alt  bool
	// Back is how many days before now a grant's points were earned
	// (earnedAt; 0: absent).
	Back int
	// N2 is the second value of a pair of redemptions.
	N2 int
}

func (s step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", s.ID, kindNames[s.Kind])
	switch s.Kind {
	case kGrant, kCreditPoints, kRedeem, kRefund, kSet:
		fmt.Fprintf(&b, " u%d p%d n=%d", s.User, s.Perk, s.N)
		if s.Back > 0 {
			fmt.Fprintf(&b, " earned %d days ago", s.Back)
		}
	case kAdvance:
		fmt.Fprintf(&b, " %d days", s.N)
	case kPair:
		fmt.Fprintf(&b, " u%d p%d n=%d and n=%d at once", s.User, s.Perk, s.N, s.N2)
	case kCreditBalance:
		fmt.Fprintf(&b, " u%d amount=%s", s.User, pence(s.N))
	case kOrder:
		fmt.Fprintf(&b, " u%d redemptions=%v", s.User, s.Reds)
		if s.N > 0 {
			fmt.Fprintf(&b, " totalPrice=%s", pence(s.N))
		}
	case kComplete, kTxnRefund:
		fmt.Fprintf(&b, " of #%d", s.Ref)
	case kTxn:
		pt := "CARD_AT_POS"
		if s.App {
			pt = "APP"
		}
		fmt.Fprintf(&b, " u%d %s %s price=%s", s.User, s.Code, pt, pence(s.N))
		if s.Pay > 0 {
			fmt.Fprintf(&b, " payment=%s", pence(s.Pay))
		}
		if s.Ref >= 0 {
			fmt.Fprintf(&b, " order #%d", s.Ref)
		} else {
			b.WriteString(" no order")
		}
	case kRace:
		fmt.Fprintf(&b, " of order #%d and transaction #%d at once", s.Ref, s.N)
	case kJoin, kLeave, kDelete:
		fmt.Fprintf(&b, " u%d", s.User)
	case kRetry, kReuse, kTxnRepeat:
		fmt.Fprintf(&b, " of #%d", s.Ref)
		if s.Alt {
			b.WriteString(" (another body)")
		}
	}
	if s.Key != "" {
		fmt.Fprintf(&b, " key=%s", s.Key)
	}
	return b.String()
}

func pence(n int) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	return fmt.Sprintf("%s%d.%02d", sign, n/100, n%100)
}

// ---- the model ----

type perkDef struct {
	title  string
	points map[string]any
	min    int
	max    int // -1: none
	maxR   int // 0: none
	redeem int // an order redemption's default value
	// expires tells that the perk's lots expire lotDays days after the
	// day they were earned (AFTER_EARN P<lotDays>D).
	expires bool
	// global tells that every user holds the perk's award (isGlobal): a
	// virtual award showing initial until its first change stores it.
	global  bool
	initial int
	// club tells that the perk is a CLUB perk: held exactly while the
	// user is a member of the run's segment (a virtual award showing
	// initial until its first change stores it; its points stay stored
	// while the user is out).
	club bool
}

// lotDays is the Expiring perk's AFTER_EARN duration in days: a lot
// earned on day d is spendable through day d+lotDays and expires at the
// start of day d+lotDays+1 (the tenant's midnight).
const lotDays = 10

var perkDefs = []perkDef{
	{title: "Capped", points: map[string]any{"max": 60}, max: 60, redeem: 1},
	{title: "Floored", points: map[string]any{"min": 5, "redemption": 2}, min: 5, max: -1, redeem: 2},
	{title: "Limited", points: map[string]any{"maxTotalRedemptions": 6}, max: -1, maxR: 6, redeem: 1},
	{title: "Expiring", points: map[string]any{"expiry": map[string]any{"policy": "AFTER_EARN", "duration": fmt.Sprintf("P%dD", lotDays)}}, max: -1, redeem: 1, expires: true},
	{title: "Welcome", points: map[string]any{"initial": 8, "max": 80, "redemption": 2}, max: 80, redeem: 2, global: true, initial: 8},
	{title: "Club", points: map[string]any{"initial": 5, "max": 50}, max: 50, redeem: 1, initial: 5, club: true},
}

const users = 3

type entry struct {
	typ string
	pts int
}

// mLot is a lot: id is the seq of the entry that earned it; earned is
// the day it was earned and at the run's step that first sent it (the
// order of earnedAt); expires whether it ever expires.
type mLot struct {
	id, remaining int
	day, at, sub  int
	expires       bool
	// order is the order whose rules earned the lot (its id; "": none).
	order string
}

func (l mLot) expiredOn(day int) bool { return l.expires && day >= l.day+lotDays+1 }

// spendsBefore is the order burns take lots in (lots.go spendOrder).
func (l mLot) spendsBefore(o mLot) bool {
	if l.expires != o.expires {
		return l.expires
	}
	if l.expires && l.day != o.day {
		return l.day < o.day
	}
	if l.day != o.day || l.at != o.at || l.sub != o.sub {
		return l.day < o.day || l.day == o.day && (l.at < o.at || l.at == o.at && l.sub < o.sub)
	}
	return fmt.Sprint(l.id) < fmt.Sprint(o.id)
}

// mDraw is what burns not yet refunded took from a lot.
type mDraw struct {
	lot    mLot
	points int
}

type mAward struct {
	exists                                                                   bool
	avail, granted, redeemed, refunded, reversed, adjusted, redemptions, rfd int
	expired                                                                  int
	// member tells, of a CLUB perk's award, that the user is a member of
	// its segment.
	member  bool
	entries []entry
	lots    []mLot
	drawn   []mDraw
}

func (a mAward) clone() mAward {
	a.entries = append([]entry(nil), a.entries...)
	a.lots = append([]mLot(nil), a.lots...)
	a.drawn = append([]mDraw(nil), a.drawn...)
	return a
}

func (a *mAward) move(typ string, pts int) {
	if pts != 0 {
		a.entries = append(a.entries, entry{typ, pts})
	}
}

// expire writes off the lots expired on day (an EXPIRY entry).
func (a *mAward) expire(day int) {
	n := 0
	kept := a.lots[:0]
	for _, l := range a.lots {
		if l.expiredOn(day) {
			n += l.remaining
			continue
		}
		kept = append(kept, l)
	}
	a.lots = kept
	a.avail -= n
	a.expired += n
	a.move("EXPIRY", -n)
}

// view is the award as a read on day sees it (expired lots not counted).
func (a mAward) view(day int) mAward {
	v := a.clone()
	v.expire(day)
	return v
}

// take takes v points from the lots in spend order (the lots order
// earned first, when given: a reversal of its earn).
func (a *mAward) take(v int, order string) []mDraw {
	var from []mDraw
	before := func(l, o mLot) bool {
		if order != "" && (l.order == order) != (o.order == order) {
			return l.order == order
		}
		return l.spendsBefore(o)
	}
	for v > 0 {
		best := -1
		for i, l := range a.lots {
			if best < 0 || before(l, a.lots[best]) {
				best = i
			}
		}
		l := &a.lots[best]
		t := min(v, l.remaining)
		l.remaining -= t
		v -= t
		from = append(from, mDraw{*l, t})
		if l.remaining == 0 {
			a.lots = append(a.lots[:best], a.lots[best+1:]...)
		}
	}
	return from
}

// now is when a change happens: the day, the run's step and, within
// the step, the transaction (the rules' grants commit after the
// request's own change, a little later).
type now struct{ day, at, sub int }

// store is the first change of a global perk's virtual award: it is
// stored with its initial points, an EARN (source INITIAL) and their lot.
func (a *mAward) store(d perkDef, t now) {
	a.exists = true
	a.avail = d.initial
	a.move("EARN", d.initial)
	if d.initial > 0 {
		a.lots = append(a.lots, mLot{id: len(a.entries), remaining: d.initial, day: t.day, at: t.at, sub: t.sub, expires: d.expires})
	}
}

// held tells whether the user holds the award (stored, or a global
// perk's; a CLUB perk's while a member).
func (a mAward) held(d perkDef) bool {
	if d.club {
		return a.member
	}
	return a.exists || d.global
}

// outOfClub tells that a change of the award is refused because the
// user is not a member of the CLUB perk's segment (AWARD_NOT_HELD: the
// transaction's membership check, after the award's own rules).
func (a mAward) outOfClub(d perkDef) bool { return d.club && !a.member }

// shown is the award as reads show it on day: a global perk's virtual
// award holds its initial points.
func (a mAward) shown(d perkDef, day int) mAward {
	if !a.exists && (d.global || d.club) {
		return mAward{avail: d.initial}
	}
	return a.view(day)
}

// grant is work.go's opGrant: the result clamped to max (never below
// what the award holds), a lot earned on day earned (for order, when a
// rule granted on an order). It returns the points granted.
func (a *mAward) grant(d perkDef, pts int, t now, earned now, order string) int {
	if a.exists {
		a.expire(t.day)
	} else if d.global || d.club {
		a.store(d, t)
	}
	next := a.avail + pts
	if d.max >= 0 && next > d.max {
		next = max(d.max, a.avail)
	}
	g := next - a.avail
	a.granted += g
	a.avail = next
	a.exists = true
	a.move("EARN", g)
	if g > 0 {
		a.lots = append(a.lots, mLot{id: len(a.entries), remaining: g, day: earned.day, at: earned.at, sub: earned.sub, expires: d.expires, order: order})
		a.expire(t.day)
	}
	return g
}

// reverse is work.go's opReverse, as a refund after an order's
// completion takes back its earn: at most what the award holds, the
// order's own lots first. It returns the points taken. An award not
// stored, or stored holding nothing, is not written at all.
func (a *mAward) reverse(pts int, order string, t now) int {
	if !a.exists || a.avail <= 0 || pts <= 0 {
		return 0
	}
	a.expire(t.day)
	taken := min(pts, a.avail)
	if taken <= 0 {
		return 0
	}
	a.take(taken, order)
	a.avail -= taken
	a.reversed += taken
	a.move("REVERSAL", -taken)
	return taken
}

func (a *mAward) redeem(d perkDef, v, units int, t now) string {
	if !a.held(d) && !d.club {
		return "NOT_FOUND"
	}
	b := a.clone()
	if b.exists {
		b.expire(t.day)
	} else {
		b.store(d, t)
	}
	switch {
	case d.maxR > 0 && b.redemptions+units > d.maxR:
		return "REDEMPTION_LIMIT_REACHED"
	case b.avail < d.min+v:
		return "INSUFFICIENT_POINTS"
	case a.outOfClub(d):
		return "AWARD_NOT_HELD"
	}
	for _, f := range b.take(v, "") {
		for i, x := range b.drawn {
			if x.lot.id == f.lot.id {
				f.points += x.points
				b.drawn = append(b.drawn[:i], b.drawn[i+1:]...)
				break
			}
		}
		b.drawn = append(b.drawn, f)
	}
	b.avail -= v
	b.rfd += v
	b.redeemed += v
	b.redemptions += units
	b.move("BURN", -v)
	*a = b
	return ""
}

func (a *mAward) refund(v int, t now) string {
	switch {
	case !a.exists:
		return "NOT_FOUND"
	case a.rfd < v:
		return "REFUND_EXCEEDS_REDEEMED"
	}
	a.expire(t.day)
	left := v
	for left > 0 {
		d := &a.drawn[len(a.drawn)-1]
		x := min(left, d.points)
		d.points -= x
		left -= x
		found := false
		for i := range a.lots {
			if a.lots[i].id == d.lot.id {
				a.lots[i].remaining += x
				found = true
			}
		}
		if !found {
			l := d.lot
			l.remaining = x
			a.lots = append(a.lots, l)
		}
		if d.points == 0 {
			a.drawn = a.drawn[:len(a.drawn)-1]
		}
	}
	a.avail += v
	a.rfd -= v
	a.refunded += v
	a.move("REFUND", v)
	a.expire(t.day)
	return ""
}

func (a *mAward) set(d perkDef, v int, t now) string {
	switch {
	case d.max >= 0 && v > d.max:
		return "VALIDATION_FAILED"
	case a.outOfClub(d):
		return "AWARD_NOT_HELD"
	case !a.held(d):
		return "NOT_FOUND"
	}
	if a.exists {
		a.expire(t.day)
	} else {
		a.store(d, t)
	}
	diff := v - a.avail
	a.adjusted += diff
	a.move("ADJUST", diff)
	a.avail = v
	switch {
	case diff > 0:
		a.lots = append(a.lots, mLot{id: len(a.entries), remaining: diff, day: t.day, at: t.at, sub: t.sub, expires: d.expires})
	case diff < 0:
		a.take(-diff, "")
	}
	return ""
}

type mUser struct {
	balance int // pence
	awards  []mAward
	// money is the app balance's ledger entries the model expects.
	money []mMoney
	// deleted tells that the user was deleted (DELETE /users/{userId}):
	// their awards, ledgers and payments stay; nothing new is theirs.
	deleted bool
}

// mMoney is an entry of the app balance's ledger: its type and signed
// amount in pence.
type mMoney struct {
	typ   string
	pence int
}

type mOrder struct {
	user      int
	id        string
	completed bool
	reds      []red
	returned  bool
	// price is the order's totalPrice in pence (0: absent); txns the sum
	// of its transactions not refunded; refunded what its refunds moved
	// in all, after what was refunded after its completion; base the sum
	// of its transactions when it completed (store.go's EarnedBase).
	price, txns, refunded, after, base int
	// earned and reversed are the points the rules earned on the order
	// and the refunds took back, by perk.
	earned, reversed []int
}

func newOrder(user int, id string) *mOrder {
	return &mOrder{user: user, id: id, earned: make([]int, len(perkDefs)), reversed: make([]int, len(perkDefs))}
}

// value is the order's value (store.go's value): totalPrice less what was
// refunded while it was OPEN (never below zero), else its transactions.
func (o *mOrder) value() int {
	if o.price > 0 {
		return max(o.price-(o.refunded-o.after), 0)
	}
	return o.txns
}

// shareFloor is money.ShareFloor: floor(n * part / whole), n itself for
// a part that is the whole or more (or no whole).
func shareFloor(n, part, whole int) int {
	switch {
	case whole <= 0 || part >= whole:
		return n
	case part <= 0:
		return 0
	}
	return n * part / whole
}

// ---- the rules ----

// The perks the rules grant (Expiring and Welcome) and the CLUB perk.
const (
	pExpiring = 3
	pWelcome  = 4
	pClub     = 5
)

// mRule is a rule of the run's tenant: on an action of trigger (for
// AWARD_GRANTED, of perk cond with points granted), grant perk grant
// points (perUnit: one point per whole unit of the order's value).
type mRule struct {
	trigger string
	cond    int
	grant   int
	points  int
	perUnit bool
	// join: the rule adds the user to the club segment (ADD_TO_SEGMENT)
	// when the order's value is at least minValue pence.
	join     bool
	minValue int
}

// modelRules are created on every run's tenant: an order earns Expiring
// points, an Expiring grant earns 2 Welcome points, a Welcome grant 1
// Expiring point (a chain: each rule applies once per originating
// action, and not on actions at depth 3), and an order of 20.00 or more
// makes the user a member of the club.
var modelRules = []mRule{
	{trigger: "ORDER_COMPLETED", cond: -1, grant: pExpiring, perUnit: true},
	{trigger: "ORDER_COMPLETED", cond: -1, join: true, minValue: 2000},
	{trigger: "AWARD_GRANTED", cond: pExpiring, grant: pWelcome, points: 2},
	{trigger: "AWARD_GRANTED", cond: pWelcome, grant: pExpiring, points: 1},
}

// mEvent is an action the rules see: its type, the perk and points an
// AWARD_GRANTED granted, an ORDER_COMPLETED's order value (pence), its
// depth in the chain and the rule that recorded it (-1: none).
type mEvent struct {
	typ     string
	perk    int
	granted int
	value   int
	depth   int
	rule    int
}

// runRules runs the rules on user u's action ev, as the request that
// recorded it does before it answers (rule.Engine.Run): each matching
// rule once per originating action, depth first after each action's
// rules; a grant on an order (o) records the points earned on it.
func (m *model) runRules(u int, ev mEvent, o *mOrder, t now) {
	applied := map[int]bool{}
	grants := 0
	var run func(ev mEvent)
	run = func(ev mEvent) {
		if ev.depth >= 3 {
			return
		}
		var produced []mEvent
		for i, rl := range modelRules {
			if rl.trigger != ev.typ || ev.rule == i || applied[i] {
				continue
			}
			if rl.trigger == "AWARD_GRANTED" && (ev.perk != rl.cond || ev.granted <= 0) {
				continue
			}
			if rl.join {
				if ev.value >= rl.minValue && !m.users[u].awards[pClub].member {
					m.users[u].awards[pClub].member = true
					m.stats.ruleJoins++
				}
				continue
			}
			applied[i] = true
			pts := rl.points
			if rl.perUnit {
				pts = ev.value / 100
			}
			if pts <= 0 {
				continue
			}
			order := ""
			if o != nil {
				order = o.id
			}
			if m.beforeGrant != nil {
				m.beforeGrant(grants)
			}
			grants++
			m.sub++
			at := now{day: t.day, at: t.at, sub: m.sub}
			a := &m.users[u].awards[rl.grant]
			g := a.grant(perkDefs[rl.grant], pts, at, at, order)
			m.stats.ruleGrants++
			if o != nil && g > 0 {
				o.earned[rl.grant] += g
				// A refund that landed after the completion, before this
				// grant: its share of the grant is taken back at once, in
				// the grant's transaction (pos AddEarned).
				if due := shareFloor(o.earned[rl.grant], o.after, o.base) - o.reversed[rl.grant]; o.completed && o.after > 0 && due > 0 {
					o.reversed[rl.grant] += due
					m.stats.reversed += a.reverse(due, o.id, at)
				}
			}
			produced = append(produced, mEvent{typ: "AWARD_GRANTED", perk: rl.grant, granted: g, depth: ev.depth + 1, rule: i})
		}
		for _, p := range produced {
			run(p)
		}
	}
	run(ev)
}

type mTxn struct {
	user     int
	id       string
	ord      *mOrder
	app      bool
	price    int
	charge   int
	refunded bool
}

type codeUse struct {
	body string
	txn  *mTxn
}

type model struct {
	// day is the model's day: days since the run began (see align).
	day    int
	users  []*mUser
	orders map[int]*mOrder // by the ID of the step that created it
	txns   map[int]*mTxn
	codes  map[string]codeUse
	// sub numbers the rules' grants (now.sub).
	sub int
	// beforeGrant, when set, runs before the j-th grant of a run of the
	// rules (a concurrent request landing between two of them).
	beforeGrant func(j int)
	// stats counts what the run exercised (reported with its time).
	stats struct {
		ruleGrants, reversed, joins, ruleJoins, clubChanges int
		// races counts the raced completions by the order that fitted:
		// the refund first, then after 0, 1, 2, 3 grants.
		races [5]int
	}
	// For the generator, in creation order.
	orderIDs, txnIDs, keyed, txnSteps []int
}

func newModel() *model {
	m := &model{orders: map[int]*mOrder{}, txns: map[int]*mTxn{}, codes: map[string]codeUse{}}
	for range users {
		m.users = append(m.users, &mUser{awards: make([]mAward, len(perkDefs))})
	}
	return m
}

// clone returns a deep copy of m (its orders, transactions and short
// codes point at the copy's own).
func (m *model) clone() *model {
	c := *m
	c.users = nil
	for _, u := range m.users {
		cu := *u
		cu.awards = make([]mAward, len(u.awards))
		for i, a := range u.awards {
			cu.awards[i] = a.clone()
		}
		cu.money = slices.Clone(u.money)
		c.users = append(c.users, &cu)
	}
	orders := map[*mOrder]*mOrder{}
	c.orders = map[int]*mOrder{}
	for id, o := range m.orders {
		co := *o
		co.earned, co.reversed = slices.Clone(o.earned), slices.Clone(o.reversed)
		orders[o] = &co
		c.orders[id] = &co
	}
	order := func(o *mOrder) *mOrder {
		if co, ok := orders[o]; ok {
			return co
		}
		co := *o // a transaction's generated order
		co.earned, co.reversed = slices.Clone(o.earned), slices.Clone(o.reversed)
		orders[o] = &co
		return &co
	}
	txns := map[*mTxn]*mTxn{}
	c.txns = map[int]*mTxn{}
	for id, t := range m.txns {
		ct := *t
		ct.ord = order(t.ord)
		txns[t] = &ct
		c.txns[id] = &ct
	}
	c.codes = map[string]codeUse{}
	for k, v := range m.codes {
		if ct, ok := txns[v.txn]; ok {
			v.txn = ct
		}
		c.codes[k] = v
	}
	c.orderIDs, c.txnIDs = slices.Clone(m.orderIDs), slices.Clone(m.txnIDs)
	c.keyed, c.txnSteps = slices.Clone(m.keyed), slices.Clone(m.txnSteps)
	return &c
}

// completeOrder burns o's redemptions on copies of the awards, in order;
// the first refusal is the answer and nothing changes.
func (m *model) completeOrder(o *mOrder, t now) string {
	u := m.users[o.user]
	next := make([]mAward, len(u.awards))
	for i, a := range u.awards {
		next[i] = a.clone()
	}
	// The awards' own rules refuse first (each redemption in turn, as
	// the completion adds them), then the transaction's membership checks.
	out := ""
	for _, r := range o.reds {
		d := perkDefs[r.Perk]
		switch code := next[r.Perk].redeem(d, redPoints(r), max(r.Qty, 1), t); code {
		case "":
		case "AWARD_NOT_HELD":
			out = code
		default:
			return code
		}
	}
	if out != "" {
		return out
	}
	u.awards = next
	o.completed = true
	o.base, o.after = o.txns, 0
	m.runRules(o.user, mEvent{typ: "ORDER_COMPLETED", value: o.value(), rule: -1}, o, t)
	return ""
}

func redPoints(r red) int {
	v, q := perkDefs[r.Perk].redeem, 1
	if r.Value > 0 {
		v = r.Value
	}
	if r.Qty > 0 {
		q = r.Qty
	}
	return v * q
}

// ---- the generator ----

type gen struct {
	rng  *rand.Rand
	seed uint64
}

func (g *gen) pick(n int) int { return g.rng.IntN(n) }
func (g *gen) chance(p float64) bool {
	return g.rng.Float64() < p
}

// weights of the step kinds.
var weights = []struct {
	k kind
	w int
}{
	{kGrant, 12}, {kCreditPoints, 7}, {kCreditBalance, 9}, {kRedeem, 15}, {kRefund, 8}, {kSet, 4},
	{kOrder, 8}, {kComplete, 8}, {kTxn, 12}, {kTxnRefund, 7}, {kRetry, 10}, {kReuse, 3}, {kTxnRepeat, 3},
	{kAdvance, 3}, {kExpire, 3}, {kPair, 5}, {kDelete, 1}, {kJoin, 3}, {kLeave, 2}, {kRace, 6},
}

func (g *gen) next(id int, m *model) step {
	total := 0
	for _, w := range weights {
		total += w.w
	}
	for {
		x := g.pick(total)
		var k kind
		for _, w := range weights {
			if x < w.w {
				k = w.k
				break
			}
			x -= w.w
		}
		if s, ok := g.make(id, k, m); ok {
			if s.Key == "" && k != kTxnRepeat && k != kRetry && k != kReuse && k != kAdvance && k != kExpire && k != kPair && k != kDelete && k != kJoin && k != kLeave && k != kRace && g.chance(0.85) {
				s.Key = fmt.Sprintf("k%d-%d", g.seed, id)
			}
			return s
		}
	}
}

func (g *gen) make(id int, k kind, m *model) (step, bool) {
	s := step{ID: id, Kind: k, User: g.pick(users), Perk: g.pick(len(perkDefs)), Ref: -1}
	a := m.users[s.User].awards[s.Perk]
	d := perkDefs[s.Perk]
	switch k {
	case kGrant, kCreditPoints:
		s.N = g.pick(26)
		if k == kCreditPoints {
			s.N++ // a credit is 1 or more
		}
		if k == kGrant && g.chance(0.3) {
			s.Back = 1 + g.pick(14)
		}
	case kAdvance:
		s.N = 1 + g.pick(3)
	case kPair:
		s.N, s.N2 = 1+g.pick(a.avail/2+3), 1+g.pick(a.avail/2+3)
	case kDelete:
		// One user at least stays.
		left := 0
		for _, u := range m.users {
			if !u.deleted {
				left++
			}
		}
		if left < 2 || m.users[s.User].deleted {
			return s, false
		}
	case kExpire:
	case kCreditBalance:
		s.N = 1 + g.pick(2500)
		if g.chance(0.3) {
			s.N = -(1 + g.pick(m.users[s.User].balance+400))
		}
	case kRedeem:
		if free := a.avail - d.min; free >= 1 && g.chance(0.75) {
			s.N = 1 + g.pick(min(free, 15))
		} else {
			s.N = 1 + g.pick(a.avail+10)
		}
	case kRefund:
		if a.rfd >= 1 && g.chance(0.7) {
			s.N = 1 + g.pick(a.rfd)
		} else {
			s.N = a.rfd + 1 + g.pick(5)
		}
	case kSet:
		s.N = g.pick(70)
	case kOrder:
		for _, p := range g.rng.Perm(len(perkDefs))[:g.pick(4)] {
			r := red{Perk: p}
			if g.chance(0.7) {
				r.Value = 1 + g.pick(6)
			}
			if g.chance(0.4) {
				r.Qty = 1 + g.pick(3)
			}
			s.Reds = append(s.Reds, r)
		}
		if g.chance(0.3) {
			s.N = 100 + g.pick(3000)
		}
	case kComplete:
		if len(m.orderIDs) == 0 {
			return s, false
		}
		s.Ref = g.recent(m.orderIDs)
	case kTxn:
		s.Code = fmt.Sprintf("S%d-%d", g.seed, id)
		s.N = 1 + g.pick(3000)
		s.App = g.chance(0.5)
		if s.App && g.chance(0.2) {
			s.Pay = s.N + g.pick(300)
		}
		if len(m.orderIDs) > 0 && g.chance(0.6) {
			s.Ref = g.recent(m.orderIDs)
			s.User = m.orders[s.Ref].user
		}
	case kTxnRefund:
		if len(m.txnIDs) == 0 {
			return s, false
		}
		s.Ref = g.recent(m.txnIDs)
	case kRace:
		// An open order with a transaction not refunded.
		var txns []int
		for _, id := range m.txnIDs {
			if t := m.txns[id]; !t.refunded && !t.ord.completed && t.ord.id != "" && !m.users[t.user].deleted {
				txns = append(txns, id)
			}
		}
		if len(txns) == 0 {
			return s, false
		}
		s.N = g.recent(txns)
		for id, o := range m.orders {
			if o == m.txns[s.N].ord {
				s.Ref = id
			}
		}
		if s.Ref < 0 {
			return s, false
		}
		s.User = m.orders[s.Ref].user
	case kRetry, kReuse:
		if len(m.keyed) == 0 {
			return s, false
		}
		s.Ref = g.recent(m.keyed)
	case kTxnRepeat:
		if len(m.txnSteps) == 0 {
			return s, false
		}
		s.Ref = g.recent(m.txnSteps)
		s.Alt = g.chance(0.4)
		if g.chance(0.5) {
			s.Key = fmt.Sprintf("k%d-%d", g.seed, id)
		}
	}
	return s, true
}

// recent picks one of ids, the later ones more often.
func (g *gen) recent(ids []int) int {
	if g.chance(0.6) {
		return ids[len(ids)-1-g.pick(min(len(ids), 4))]
	}
	return ids[g.pick(len(ids))]
}

// ---- running ----

// failure is where and why a run failed.
type failure struct {
	at  int // index in the sequence
	msg string
}

// quiet is the harness's testing.TB for a run: errors are collected (and
// Fatal aborts the run) instead of failing the test, so that a failing
// run can be told and shrunk.
type quiet struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

type abort struct{}

func (q *quiet) Helper() {}
func (q *quiet) add(s string) {
	q.mu.Lock()
	q.msgs = append(q.msgs, s)
	q.mu.Unlock()
}
func (q *quiet) Errorf(f string, a ...any) { q.add(fmt.Sprintf(f, a...)) }
func (q *quiet) Error(a ...any)            { q.add(fmt.Sprint(a...)) }
func (q *quiet) Fatalf(f string, a ...any) { q.add(fmt.Sprintf(f, a...)); panic(abort{}) }
func (q *quiet) Fatal(a ...any)            { q.add(fmt.Sprint(a...)); panic(abort{}) }
func (q *quiet) FailNow()                  { q.add("FailNow"); panic(abort{}) }
func (q *quiet) Fail()                     { q.add("Fail") }
func (q *quiet) Failed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs) > 0
}
func (q *quiet) Log(a ...any)            {}
func (q *quiet) Logf(f string, a ...any) {}
func (q *quiet) take() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := strings.Join(q.msgs, "; ")
	q.msgs = nil
	return s
}

// sent is a request a step sent and its answer.
type sent struct {
	method, path string
	body         []byte
	key          string
	user         int
	day          int // the model's day of the request (keys are kept 7 days)
	status       int
	resp         []byte
	// redo re-runs the step's logic (a retry of a request whose answer
	// was not kept runs again).
	redo func(key string) error
}

// kept tells whether the answer is kept for retries with its key.
func (s *sent) kept() bool {
	return s.key != "" && s.status < 500 && s.status != 401 && s.status != 409 && s.status != 429
}

type runner struct {
	q     *quiet
	h     *ts.Harness
	m     *model
	uids  []string
	pids  []string
	sent  map[int]*sent
	steps map[int]step
	n     int // steps run
	// calls and notHeld count the requests sent and the AWARD_NOT_HELD
	// answers (two requests may be sent at once).
	calls, notHeld atomic.Int64
	// segment is the CLUB perk's segment.
	segment string
	// start is the tenant's local time of day 0 (see align).
	start time.Time
	// earned is when the points of a grant with earnedAt were earned, by
	// the grant's step ID (the body keeps its date on a retry).
	earned map[int]now
}

// now is the model's time of the step being run.
func (r *runner) now() now { return now{day: r.m.day, at: r.n} }

// align moves the harness clock on to the tenant's next 01:30 (Europe/
// London) at the start of a run; advance moves it days whole days on. The
// days of lots and of the model then agree for the next 21 hours of real
// time (a DST change moves the local time by an hour), and the clock
// stays the real time plus one offset, so that earnedAt values order as
// the steps that sent them.
func (r *runner) align() {
	london, err := time.LoadLocation("Europe/London")
	if err != nil {
		panic(err)
	}
	cur := r.h.Clock.Now().In(london)
	target := time.Date(cur.Year(), cur.Month(), cur.Day(), 1, 30, 0, 0, london)
	if !target.After(cur) {
		target = time.Date(cur.Year(), cur.Month(), cur.Day()+1, 1, 30, 0, 0, london)
	}
	r.h.Clock.Advance(target.Sub(cur))
	r.start = target
}

func (r *runner) advance(days int) { r.h.Clock.Advance(time.Duration(days) * 24 * time.Hour) }

func newRunner(t testing.TB) (r *runner, err error) {
	q := &quiet{TB: t}
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(abort); !ok {
				panic(p)
			}
			err = fmt.Errorf("setup: %s", q.take())
		}
	}()
	// The rules run in the requests alone, on the run's clock (see
	// NewKeptFromStreams).
	h := ts.NewKeptFromStreams(q)
	r = &runner{q: q, h: h, m: newModel(), sent: map[int]*sent{}, steps: map[int]step{}, earned: map[int]now{}}
	r.align()
	for i := range users {
		r.uids = append(r.uids, h.AdminUser(q, fmt.Sprintf("Model%d", i), "User"))
	}
	resp := h.Do("POST", "/segments", map[string]any{"title": "Model club", "type": "PERSISTENT"}, h.Admin())
	if resp.Status != 201 {
		return nil, fmt.Errorf("create segment: %d %s", resp.Status, resp.Body)
	}
	r.segment = decode(resp.Body)["_id"].(string)
	for _, d := range perkDefs {
		body := map[string]any{"title": d.title, "template": "PSEUDO_CURRENCY", "points": d.points}
		if d.global {
			body["isGlobal"] = true
		}
		if d.club {
			body["template"], body["segmentId"] = "CLUB", r.segment
		}
		resp := h.Do("POST", "/perks", body, h.Admin())
		if resp.Status != 201 {
			return nil, fmt.Errorf("create perk %s: %d %s", d.title, resp.Status, resp.Body)
		}
		r.pids = append(r.pids, decode(resp.Body)["_id"].(string))
	}
	for i, rl := range modelRules {
		ef := map[string]any{"type": "GRANT_PERK", "perkId": r.pids[rl.grant]}
		conds := []map[string]any{}
		switch {
		case rl.join:
			ef = map[string]any{"type": "ADD_TO_SEGMENT", "segmentId": r.segment}
			conds = append(conds, map[string]any{"path": "metadata.value", "operator": "GTE", "value": rl.minValue / 100})
		case rl.perUnit:
			ef["pointsPerUnit"] = 1
		default:
			ef["points"] = rl.points
		}
		if rl.cond >= 0 {
			conds = append(conds,
				map[string]any{"path": "metadata.perkId", "operator": "EQ", "value": r.pids[rl.cond]},
				map[string]any{"path": "metadata.pointsGranted", "operator": "GT", "value": 0})
		}
		body := map[string]any{"title": fmt.Sprintf("Model rule %d", i), "trigger": rl.trigger, "conditions": conds, "effects": []any{ef}, "enabled": true}
		if resp := h.Do("POST", "/rules", body, h.Admin()); resp.Status != 201 {
			return nil, fmt.Errorf("create rule %d: %d %s", i, resp.Status, resp.Body)
		}
	}
	if msg := q.take(); msg != "" {
		return nil, fmt.Errorf("setup: %s", msg)
	}
	return r, nil
}

// run runs seq on a fresh tenant, then (gen != nil) generates and runs
// steps up to n; it returns the steps run, the first failure and what the
// run exercised.
func run(t testing.TB, seed uint64, seq []step, n int) ([]step, *failure, string) {
	r, err := newRunner(t)
	if err != nil {
		return seq, &failure{at: 0, msg: err.Error()}, ""
	}
	seq, fail := r.run(seed, seq, n)
	st := r.m.stats
	return seq, fail, fmt.Sprintf("%d requests; %d rule grants, %d points reversed, %d joins (%d by a rule), %d AWARD_NOT_HELD, %d changes of CLUB awards, completions raced by a refund %v (refund first, after 0-3 grants)",
		r.calls.Load(), st.ruleGrants, st.reversed, st.joins+st.ruleJoins, st.ruleJoins, r.notHeld.Load(), st.clubChanges, st.races)
}

func (r *runner) run(seed uint64, seq []step, n int) ([]step, *failure) {
	var g *gen
	if seq == nil {
		g = &gen{rng: rand.New(rand.NewPCG(seed, 0x5eed)), seed: seed}
	}
	for i := 0; ; i++ {
		if g != nil {
			if i >= n || !deadline.IsZero() && time.Now().After(deadline) {
				break
			}
			if progressEvery > 0 && i > 0 && i%progressEvery == 0 {
				fmt.Fprintf(os.Stderr, "model: seed %d: %d steps passed at %s\n", seed, i, time.Now().UTC().Format(time.TimeOnly))
			}
			seq = append(seq, g.next(i, r.m))
		} else if i >= len(seq) {
			break
		}
		if err := r.step(seq[i]); err != nil {
			return seq, &failure{at: i, msg: err.Error()}
		}
	}
	// The end: every user, every ledger read whole.
	for u := range users {
		if err := r.final(u); err != nil {
			return seq, &failure{at: len(seq) - 1, msg: "at the end: " + err.Error()}
		}
	}
	if err := r.checkLiability(); err != nil {
		return seq, &failure{at: len(seq) - 1, msg: "at the end: " + err.Error()}
	}
	return seq, nil
}

// shrink removes steps from a failing sequence, greedily (halves, then
// quarters, ... then single steps), keeping a removal when the rest still
// fails; at most maxShrinkRuns re-runs.
func shrink(t testing.TB, seed uint64, seq []step, fail *failure) ([]step, *failure, int) {
	runs := 0
	for chunk := max(len(seq)/2, 1); chunk >= 1 && runs < maxShrinkRuns; chunk /= 2 {
		for start := 0; start < len(seq) && runs < maxShrinkRuns; {
			end := min(start+chunk, len(seq))
			cand := append(append([]step(nil), seq[:start]...), seq[end:]...)
			if len(cand) == 0 {
				start = end
				continue
			}
			runs++
			if _, f, _ := run(t, seed, cand, 0); f != nil {
				seq, fail = cand[:f.at+1], f
				continue // the same start, on the shorter sequence
			}
			start = end
		}
		if chunk == 1 {
			break
		}
	}
	return seq, fail, runs
}

// step runs one step and checks the answer and the state of the users it
// touched against the model.
func (r *runner) step(s step) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(abort); !ok {
				panic(p)
			}
			err = fmt.Errorf("%s: %s", s, r.q.take())
		}
	}()
	r.steps[s.ID] = s
	before := r.counts()
	touched, err := r.exec(s)
	if err != nil {
		return fmt.Errorf("%s: %w", s, err)
	}
	if msg := r.q.take(); msg != "" {
		return fmt.Errorf("%s: %s", s, msg)
	}
	r.n++
	for _, u := range touched {
		if len(r.m.users[u].awards[pClub].entries) != before[u][pClub] {
			r.m.stats.clubChanges++
		}
		if err := r.check(u, before[u]); err != nil {
			return fmt.Errorf("%s: after it: %w", s, err)
		}
	}
	if msg := r.q.take(); msg != "" {
		return fmt.Errorf("%s: %s", s, msg)
	}
	return nil
}

// final checks user u with every ledger read whole.
func (r *runner) final(u int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(abort); !ok {
				panic(p)
			}
			err = fmt.Errorf("%s", r.q.take())
		}
	}()
	if err := r.check(u, nil); err != nil {
		return err
	}
	if msg := r.q.take(); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// counts returns the number of ledger entries the model holds per user
// and perk, and last, per user, of the app balance's ledger.
func (r *runner) counts() [][]int {
	out := make([][]int, users)
	for u, mu := range r.m.users {
		for _, a := range mu.awards {
			out[u] = append(out[u], len(a.entries))
		}
		out[u] = append(out[u], len(mu.money))
	}
	return out
}

func (r *runner) send(method, path string, body []byte, key string) *ts.Resp {
	hs := r.h.Admin()
	if key != "" {
		hs = append(hs, "Idempotency-Key", key)
	}
	var b any
	if body != nil {
		b = body
	}
	resp := r.h.Do(method, path, b, hs)
	r.calls.Add(1)
	if resp.Status == 422 && bytes.Contains(resp.Body, []byte(`"AWARD_NOT_HELD"`)) {
		r.notHeld.Add(1)
	}
	return resp
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func decode(b []byte) map[string]any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return map[string]any{}
	}
	return m
}

// money is a pence amount as a JSON number.
func money(p int) json.Number { return json.Number(pence(p)) }

// penceOf reads a JSON number of money exactly.
func penceOf(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 2 || strings.ContainsAny(s, "eE") {
		return 0, fmt.Errorf("%s is not an amount of pence", n)
	}
	w, err := strconv.Atoi(whole)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", n, err)
	}
	f := 0
	if frac != "" {
		frac += strings.Repeat("0", 2-len(frac))
		if f, err = strconv.Atoi(frac); err != nil {
			return 0, fmt.Errorf("%s: %w", n, err)
		}
	}
	p := w*100 + f
	if neg {
		p = -p
	}
	return p, nil
}

func intOf(v any) int {
	n, _ := v.(json.Number)
	i, err := strconv.Atoi(string(n))
	if err != nil {
		return -1 << 31
	}
	return i
}

// expect checks an answer's status and, for errors, its code.
func expect(resp *ts.Resp, status int, code string) error {
	got := ""
	if resp.Status >= 400 {
		got, _ = decode(resp.Body)["code"].(string)
	}
	if resp.Status != status || got != code {
		want := fmt.Sprint(status)
		if code != "" {
			want += " " + code
		}
		return fmt.Errorf("answer %d %s, the model expects %s; body: %.300s", resp.Status, got, want, resp.Body)
	}
	return nil
}

var codeStatus = map[string]int{
	"": 200, "NOT_FOUND": 404, "CONFLICT": 409, "VALIDATION_FAILED": 422, "INSUFFICIENT_POINTS": 422,
	"REDEMPTION_LIMIT_REACHED": 422, "REFUND_EXCEEDS_REDEEMED": 422, "INSUFFICIENT_BALANCE": 422, "IDEMPOTENCY_KEY_REUSED": 422,
	"AWARD_NOT_HELD": 422,
}

func (r *runner) awardID(u, p int) string { return r.uids[u] + "-" + r.pids[p] }

// exec sends step s and checks its answer against the model, which it
// moves on; it returns the users whose state to check.
func (r *runner) exec(s step) ([]int, error) {
	if r.gone(s) {
		return nil, nil // a deleted user's: nothing new is theirs
	}
	switch s.Kind {
	case kJoin, kLeave:
		a := &r.m.users[s.User].awards[pClub]
		if s.Kind == kJoin {
			resp := r.send("POST", "/segments/"+r.segment+"/members", marshal(map[string]any{"userIds": []string{r.uids[s.User]}}), "")
			if err := expect(resp, 200, ""); err != nil {
				return nil, err
			}
			field := "added"
			if a.member {
				field = "alreadyMembers"
			}
			if ids, _ := decode(resp.Body)[field].([]any); len(ids) != 1 || ids[0] != r.uids[s.User] {
				return nil, fmt.Errorf("a join answered %.300s; the model expects the user in %s", resp.Body, field)
			}
			a.member = true
			r.m.stats.joins++
			return []int{s.User}, nil
		}
		resp := r.send("DELETE", "/segments/"+r.segment+"/members/"+r.uids[s.User], nil, "")
		want, code := 204, ""
		if !a.member {
			want, code = 404, "NOT_FOUND"
		}
		if err := expect(resp, want, code); err != nil {
			return nil, err
		}
		a.member = false
		return []int{s.User}, nil
	case kDelete:
		resp := r.send("DELETE", "/users/"+r.uids[s.User], nil, "")
		if resp.Status != 204 {
			return nil, fmt.Errorf("DELETE user: %d %.300s", resp.Status, resp.Body)
		}
		r.m.users[s.User].deleted = true
		return []int{s.User}, nil
	case kAdvance:
		r.advance(s.N)
		r.m.day += s.N
		return nil, nil
	case kPair:
		return []int{s.User}, r.pair(s)
	case kRace:
		o, ok := r.m.orders[s.Ref]
		t, ok2 := r.m.txns[s.N]
		if !ok || !ok2 || o.completed || t.refunded || t.ord != o {
			return nil, nil // what it names was not made, or moved on
		}
		return nil, r.race(s)
	case kExpire:
		if _, err := r.h.Deps.Awards.ExpireTenantLots(context.Background(), r.h.Tenant.ID); err != nil {
			return nil, fmt.Errorf("expiry run: %w", err)
		}
		var all []int
		for u, mu := range r.m.users {
			for p := range mu.awards {
				if mu.awards[p].exists {
					mu.awards[p].expire(r.m.day)
				}
			}
			all = append(all, u)
		}
		return all, nil
	case kRetry:
		prev, ok := r.sent[s.Ref]
		if !ok {
			return nil, nil // the step it repeats was not run
		}
		if r.m.day-prev.day >= 7 {
			switch r.steps[s.Ref].Kind {
			case kOrder, kTxn:
				// A key older than keys live (7 days) would make a second
				// order or transaction under the same step: not modelled.
				return nil, nil
			}
			return []int{prev.user}, prev.redo(prev.key)
		}
		if !prev.kept() {
			// Not kept: it runs again.
			return []int{prev.user}, prev.redo(prev.key)
		}
		resp := r.send(prev.method, prev.path, prev.body, prev.key)
		if resp.Status != prev.status || !bytes.Equal(resp.Body, prev.resp) {
			return nil, fmt.Errorf("a retry with key %s answered %d %.300s, the first answer was %d %.300s", prev.key, resp.Status, resp.Body, prev.status, prev.resp)
		}
		if resp.Header.Get("Idempotent-Replayed") != "true" {
			return nil, fmt.Errorf("a retry with key %s has no Idempotent-Replayed: true", prev.key)
		}
		return []int{prev.user}, nil
	case kReuse:
		prev, ok := r.sent[s.Ref]
		if !ok || !prev.kept() || r.m.day-prev.day >= 7 {
			return nil, nil
		}
		alt := r.steps[s.Ref]
		switch alt.Kind {
		case kOrder, kComplete, kTxnRefund:
			return nil, nil // no number in the body to change
		}
		alt.N++
		method, path, body, ok := r.request(alt)
		if !ok || method != prev.method || path != prev.path {
			return nil, nil
		}
		resp := r.send(method, path, body, prev.key)
		return []int{prev.user}, expect(resp, 422, "IDEMPOTENCY_KEY_REUSED")
	case kTxnRepeat:
		orig, ok := r.steps[s.Ref]
		if !ok {
			return nil, nil
		}
		t := orig
		t.ID, t.Key = s.ID, s.Key
		if s.Alt {
			t.N++
		}
		r.steps[s.ID] = t
		return r.exec(t)
	}
	method, path, body, ok := r.request(s)
	if !ok {
		return nil, nil // it names an order or transaction that was not made
	}
	rec := &sent{method: method, path: path, body: body, key: s.Key, user: s.User, day: r.m.day}
	rec.redo = func(key string) error {
		resp := r.send(method, path, body, key)
		// The key is stored anew with this answer: kept 7 days from now.
		rec.status, rec.resp, rec.day = resp.Status, resp.Body, r.m.day
		return r.answer(s, resp)
	}
	if s.Kind == kComplete || s.Kind == kTxnRefund {
		switch {
		case s.Kind == kComplete:
			rec.user = r.m.orders[s.Ref].user
		default:
			rec.user = r.m.txns[s.Ref].user
		}
	}
	if s.Key != "" {
		if _, seen := r.sent[s.ID]; !seen {
			r.m.keyed = append(r.m.keyed, s.ID)
		}
		r.sent[s.ID] = rec
	}
	return []int{rec.user}, rec.redo(s.Key)
}

// request returns the request of a step (ok false: it names an order or
// transaction this run did not make).
func (r *runner) request(s step) (method, path string, body []byte, ok bool) {
	uid := r.uids[s.User]
	switch s.Kind {
	case kGrant:
		b := map[string]any{"userId": uid, "points": s.N}
		if s.Back > 0 {
			b["earnedAt"] = r.h.Clock.Now().AddDate(0, 0, -s.Back).Format(time.RFC3339Nano)
			if _, ok := r.earned[s.ID]; !ok {
				r.earned[s.ID] = now{day: r.m.day - s.Back, at: r.n}
			}
		}
		return "POST", "/pointperks/" + r.pids[s.Perk] + "/awards", marshal(b), true
	case kCreditPoints:
		return "POST", "/users/" + uid + "/credits", marshal(map[string]any{"type": "POINTS", "amount": s.N, "perkId": r.pids[s.Perk]}), true
	case kCreditBalance:
		return "POST", "/users/" + uid + "/credits", marshal(map[string]any{"type": "BALANCE", "amount": money(s.N)}), true
	case kRedeem:
		return "POST", "/users/" + uid + "/pointawards/" + r.awardID(s.User, s.Perk) + "/redeem", marshal(map[string]any{"valueToRedeem": s.N}), true
	case kRefund:
		return "POST", "/users/" + uid + "/pointawards/" + r.awardID(s.User, s.Perk) + "/refund", marshal(map[string]any{"value": s.N}), true
	case kSet:
		return "PUT", "/pointawards/" + r.awardID(s.User, s.Perk), marshal(map[string]any{"points": map[string]any{"available": s.N}}), true
	case kOrder:
		reds := []map[string]any{}
		for _, rd := range s.Reds {
			m := map[string]any{"awardId": r.awardID(s.User, rd.Perk)}
			if rd.Value > 0 {
				m["value"] = rd.Value
			}
			if rd.Qty > 0 {
				m["quantity"] = rd.Qty
			}
			reds = append(reds, m)
		}
		b := map[string]any{"redemptions": reds}
		if s.N > 0 {
			b["totalPrice"] = money(s.N)
		}
		return "POST", "/users/" + uid + "/orders", marshal(b), true
	case kComplete:
		o, ok := r.m.orders[s.Ref]
		if !ok {
			return "", "", nil, false
		}
		return "PUT", "/orders/" + o.id, marshal(map[string]any{"state": "COMPLETED"}), true
	case kTxn:
		b := map[string]any{"shortCode": s.Code, "totalPrice": money(s.N), "paymentType": "CARD_AT_POS"}
		if s.App {
			b["paymentType"] = "APP"
		}
		if s.Pay > 0 {
			b["totalPayment"] = money(s.Pay)
		}
		if s.Ref >= 0 {
			o, ok := r.m.orders[s.Ref]
			if !ok {
				return "", "", nil, false
			}
			b["orderId"] = o.id
		}
		return "POST", "/users/" + uid + "/transactions", marshal(b), true
	case kTxnRefund:
		t, ok := r.m.txns[s.Ref]
		if !ok {
			return "", "", nil, false
		}
		return "PUT", "/transactions/" + t.id + "?refund=true", nil, true
	}
	panic(fmt.Sprintf("no request for %v", s.Kind))
}

// answer moves the model by step s and checks the server's answer.
func (r *runner) answer(s step, resp *ts.Resp) error {
	m := r.m
	u := m.users[s.User]
	d := perkDefs[s.Perk]
	a := &u.awards[s.Perk]
	awardAnswer := func(code string, view func(map[string]any) map[string]any) error {
		if err := expect(resp, codeStatus[code], code); err != nil {
			return err
		}
		if code != "" {
			return nil
		}
		return sameAward(view(decode(resp.Body)), a.shown(d, m.day), r.pids[s.Perk])
	}
	// grantAnswer checks the answer of a grant of g points: the award as
	// the grant left it (the rules its AWARD_GRANTED triggers run after
	// the grant committed, before the answer, and change the model after
	// it).
	grantAnswer := func(g int, view func(map[string]any) map[string]any) error {
		shown := a.shown(d, m.day)
		m.runRules(s.User, mEvent{typ: "AWARD_GRANTED", perk: s.Perk, granted: g, rule: -1}, nil, r.now())
		if err := expect(resp, 200, ""); err != nil {
			return err
		}
		return sameAward(view(decode(resp.Body)), shown, r.pids[s.Perk])
	}
	t := r.now()
	self := func(m map[string]any) map[string]any { return m }
	if (s.Kind == kGrant || s.Kind == kCreditPoints) && a.outOfClub(d) {
		return expect(resp, 422, "AWARD_NOT_HELD")
	}
	switch s.Kind {
	case kGrant:
		earned := t
		if s.Back > 0 {
			earned = r.earned[s.ID]
		}
		return grantAnswer(a.grant(d, s.N, t, earned, ""), self)
	case kCreditPoints:
		return grantAnswer(a.grant(d, s.N, t, t, ""), func(m map[string]any) map[string]any { v, _ := m["award"].(map[string]any); return v })
	case kCreditBalance:
		next := u.balance + s.N
		if next < 0 {
			return expect(resp, 422, "INSUFFICIENT_BALANCE")
		}
		u.balance = next
		u.money = append(u.money, mMoney{"CREDIT", s.N})
		if err := expect(resp, 200, ""); err != nil {
			return err
		}
		if got, err := penceOf(decode(resp.Body)["balance"]); err != nil || got != next {
			return fmt.Errorf("answer's balance %v, the model has %s (%v)", decode(resp.Body)["balance"], pence(next), err)
		}
		return nil
	case kRedeem:
		return awardAnswer(a.redeem(d, s.N, 1, t), self)
	case kRefund:
		return awardAnswer(a.refund(s.N, t), self)
	case kSet:
		code := a.set(d, s.N, t)
		if err := expect(resp, codeStatus[code], code); err != nil {
			return err
		}
		if code == "" && len(resp.Body) != 0 {
			return fmt.Errorf("a setting answered a body: %.200s", resp.Body)
		}
		return nil
	case kOrder:
		if err := expect(resp, 201, ""); err != nil {
			return err
		}
		id, _ := decode(resp.Body)["_id"].(string)
		if _, seen := m.orders[s.ID]; !seen {
			m.orderIDs = append(m.orderIDs, s.ID)
		}
		o := newOrder(s.User, id)
		o.reds, o.price = s.Reds, s.N
		m.orders[s.ID] = o
		return nil
	case kComplete:
		o := m.orders[s.Ref]
		code := "CONFLICT"
		if !o.completed {
			code = m.completeOrder(o, t)
		}
		if err := expect(resp, codeStatus[code], code); err != nil {
			return err
		}
		if code != "" {
			return nil
		}
		got := decode(resp.Body)
		if got["state"] != "COMPLETED" {
			return fmt.Errorf("completed order answered %.300s", resp.Body)
		}
		return r.sameEarned(o, got, true)
	case kTxn:
		return r.transaction(s, resp)
	case kTxnRefund:
		return r.refundTxn(s, resp)
	}
	return fmt.Errorf("no model for %v", s.Kind)
}

func (r *runner) transaction(s step, resp *ts.Resp) error {
	m := r.m
	u := m.users[s.User]
	_, _, body, _ := r.request(s)
	if use, taken := m.codes[s.Code]; taken {
		if use.body != string(body) {
			return expect(resp, 409, "CONFLICT")
		}
		if err := expect(resp, 201, ""); err != nil {
			return err
		}
		if id := decode(resp.Body)["_id"]; id != use.txn.id {
			return fmt.Errorf("a repeat of shortCode %s answered transaction %v, not %s", s.Code, id, use.txn.id)
		}
		return nil
	}
	var o *mOrder
	if s.Ref >= 0 {
		o = m.orders[s.Ref]
		if o.completed {
			return expect(resp, 409, "CONFLICT")
		}
	}
	charge := s.N
	if s.Pay > 0 {
		charge = s.Pay
	}
	if !s.App {
		charge = 0
	}
	if u.balance < charge {
		return expect(resp, 422, "INSUFFICIENT_BALANCE")
	}
	if err := expect(resp, 201, ""); err != nil {
		return err
	}
	got := decode(resp.Body)
	if o == nil {
		// The order the transaction made, completed at once: its rules
		// run before the answer.
		id, _ := got["orderId"].(string)
		o = newOrder(s.User, id)
		if got["orderGenerated"] != true || id == "" {
			return fmt.Errorf("a transaction without orderId answered %.300s", resp.Body)
		}
		o.txns, o.base, o.completed = s.N, s.N, true
		m.runRules(s.User, mEvent{typ: "ORDER_COMPLETED", value: o.value(), rule: -1}, o, r.now())
	} else {
		o.txns += s.N
	}
	u.balance -= charge
	if charge > 0 {
		u.money = append(u.money, mMoney{"PAYMENT", -charge})
	}
	t := &mTxn{user: s.User, id: got["_id"].(string), ord: o, app: s.App, price: s.N, charge: charge}
	if _, seen := m.txns[s.ID]; !seen {
		m.txnIDs = append(m.txnIDs, s.ID)
	}
	m.txns[s.ID] = t
	m.txnSteps = append(m.txnSteps, s.ID)
	m.codes[s.Code] = codeUse{body: string(body), txn: t}
	return nil
}

func (r *runner) refundTxn(s step, resp *ts.Resp) error {
	t := r.m.txns[s.Ref]
	if t.refunded {
		return expect(resp, 409, "CONFLICT")
	}
	out, err := r.m.refund(t, r.now())
	if err != nil {
		return err
	}
	return out.same(t, resp)
}

// refunded is what a transaction's refund answers.
type refunded struct{ returned, reversed, short int }

// same compares a refund's answer with the model's.
func (out refunded) same(t *mTxn, resp *ts.Resp) error {
	if err := expect(resp, 200, ""); err != nil {
		return err
	}
	got := decode(resp.Body)
	restored, err := penceOf(got["balanceRestored"])
	if err != nil || restored != t.charge || intOf(got["redemptionsReturned"]) != out.returned || intOf(got["pointsReversed"]) != out.reversed ||
		intOf(got["pointsNotReversed"]) != out.short {
		return fmt.Errorf("refund answered balanceRestored %v, redemptionsReturned %v, pointsReversed %v, pointsNotReversed %v; the model: %s, %d, %d, %d",
			got["balanceRestored"], got["redemptionsReturned"], got["pointsReversed"], got["pointsNotReversed"], pence(t.charge), out.returned, out.reversed, out.short)
	}
	return nil
}

// refund is the refund of transaction t (not refunded yet) at at: the
// app payment given back; after its order's completion, an APP payment's
// redemptions given back (once per order) and the share of the order's
// earn taken back.
func (m *model) refund(t *mTxn, at now) (refunded, error) {
	u := m.users[t.user]
	t.refunded = true
	u.balance += t.charge
	if t.charge > 0 {
		u.money = append(u.money, mMoney{"PAYMENT_REFUND", t.charge})
	}
	returned := 0
	if o := t.ord; o.completed && t.app && !o.returned && len(o.reds) > 0 {
		for _, rd := range o.reds {
			a := &u.awards[rd.Perk]
			if v := min(redPoints(rd), a.rfd); v > 0 {
				if code := a.refund(v, at); code != "" {
					return refunded{}, fmt.Errorf("model: the return of %v: %s", rd, code)
				}
				returned++
			}
		}
		o.returned = true
	}
	// After a completion, the refund takes back its share of what the
	// rules earned on the order: (what was refunded since) / (the
	// transactions when it completed), rounded down, less what earlier
	// refunds took; from what each award holds.
	o := t.ord
	reversed, short := 0, 0
	if o.completed {
		part := o.after + t.price
		for p := range perkDefs {
			target := shareFloor(o.earned[p], part, o.base)
			due := target - o.reversed[p]
			if due <= 0 {
				continue
			}
			o.reversed[p] = target
			taken := u.awards[p].reverse(due, o.id, at)
			m.stats.reversed += taken
			reversed += taken
			short += due - taken
		}
		o.after += t.price
	}
	o.txns -= t.price
	o.refunded += t.price
	return refunded{returned: returned, reversed: reversed, short: short}, nil
}

// race sends the completion of order s.Ref and the refund of its
// transaction s.N at once. The answers and the state must be those of one
// of the orders they can land in: the refund first (the order still
// OPEN: it completes on what was not refunded), or the completion first
// and the refund after k of the grants its rules make (k = 0: before the
// first; a refund landing before a grant takes its share back in the
// grant's transaction). The model moves by the first that fits.
func (r *runner) race(s step) error {
	o, t := r.m.orders[s.Ref], r.m.txns[s.N]
	before := r.counts()
	var comp, ref *ts.Resp
	var wg sync.WaitGroup
	wg.Go(func() { comp = r.send("PUT", "/orders/"+o.id, marshal(map[string]any{"state": "COMPLETED"}), "") })
	wg.Go(func() { ref = r.send("PUT", "/transactions/"+t.id+"?refund=true", nil, "") })
	wg.Wait()
	at := r.now()
	var misfits []string
	for k := -1; k <= 3; k++ {
		c := r.m.clone()
		co, ct := c.orders[s.Ref], c.txns[s.N]
		var out refunded
		var err error
		landed := false
		land := func() { landed = true; out, err = c.refund(ct, at) }
		if k < 0 {
			land()
		} else {
			c.beforeGrant = func(j int) {
				if j == k && !landed {
					land()
				}
			}
		}
		code := c.completeOrder(co, at)
		c.beforeGrant = nil
		if !landed {
			if k > 0 && code == "" && !slices.ContainsFunc(co.earned, func(n int) bool { return n > 0 }) {
				continue // no grants: the same as k = 0
			}
			land()
		}
		if err != nil {
			return err
		}
		fit := func() error {
			if err := expect(comp, codeStatus[code], code); err != nil {
				return fmt.Errorf("completion: %w", err)
			}
			if code == "" {
				if err := r.sameEarned(co, decode(comp.Body), false); err != nil {
					return err
				}
			}
			if err := out.same(ct, ref); err != nil {
				return err
			}
			saved := r.m
			r.m = c
			err := r.check(o.user, before[o.user])
			if msg := r.q.take(); err == nil && msg != "" {
				err = fmt.Errorf("%s", msg)
			}
			r.m = saved
			return err
		}
		if err := fit(); err != nil {
			misfits = append(misfits, fmt.Sprintf("refund after %d grants: %v", k, err))
			continue
		}
		r.m = c
		r.m.stats.races[k+1]++
		return nil
	}
	return fmt.Errorf("the answers (completion %d %.200s; refund %d %.200s) and state fit no order of the two: %s",
		comp.Status, comp.Body, ref.Status, ref.Body, strings.Join(misfits, "; "))
}

// sameEarned compares the points an order answered as earned and
// (withReversed) reversed, by award id, with the model's.
func (r *runner) sameEarned(o *mOrder, got map[string]any, withReversed bool) error {
	fields := []struct {
		name string
		want []int
	}{{"pointsEarned", o.earned}, {"pointsReversed", o.reversed}}
	if !withReversed {
		fields = fields[:1]
	}
	for _, f := range fields {
		want := map[string]int{}
		for p, n := range f.want {
			if n != 0 {
				want[r.awardID(o.user, p)] = n
			}
		}
		have := map[string]int{}
		m, _ := got[f.name].(map[string]any)
		for k, v := range m {
			if n := intOf(v); n != 0 {
				have[k] = n
			}
		}
		if fmt.Sprint(have) != fmt.Sprint(want) {
			return fmt.Errorf("order %s: %s %v, the model has %v", o.id, f.name, have, want)
		}
	}
	return nil
}

// sameAward compares an award as answered with the model.
func sameAward(got map[string]any, a mAward, perkID string) error {
	if got == nil {
		return fmt.Errorf("no award in the answer")
	}
	if got["perkId"] != perkID {
		return fmt.Errorf("award of perk %v, want %s", got["perkId"], perkID)
	}
	p, _ := got["points"].(map[string]any)
	for _, f := range []struct {
		name string
		want int
	}{
		{"available", a.avail}, {"totalGranted", a.granted}, {"totalRedeemed", a.redeemed}, {"totalRefunded", a.refunded},
		{"totalReversed", a.reversed}, {"totalAdjusted", a.adjusted}, {"totalExpired", a.expired}, {"redemptions", a.redemptions},
	} {
		if g := intOf(p[f.name]); g != f.want {
			return fmt.Errorf("award %v: points.%s = %v, the model has %d (model award %+v)", got["_id"], f.name, p[f.name], f.want, a)
		}
	}
	return nil
}

// check compares user u's awards, their ledgers and balance with the
// model. before is the model's entry count per perk before the step: an
// award whose entries changed has its whole ledger read and compared (nil
// before: every award's). An entry written where the model expects none
// shows at the award's next change or at the end of the run.
func (r *runner) check(u int, before []int) error {
	// The step's own answer was checked against the OpenAPI document;
	// these reads (most of a run's requests) are not, to keep runs fast.
	r.h.SkipContract = true
	defer func() { r.h.SkipContract = false }()
	uid := r.uids[u]
	mu := r.m.users[u]
	if mu.deleted {
		return r.checkDeleted(u, before)
	}
	resp := r.send("GET", "/users/"+uid+"/pointawards", nil, "")
	if resp.Status != 200 {
		return fmt.Errorf("GET pointawards: %d %.300s", resp.Status, resp.Body)
	}
	listed := map[string]map[string]any{}
	for _, x := range decode(resp.Body)["awards"].([]any) {
		a := x.(map[string]any)
		pid, _ := a["perkId"].(string)
		if _, dup := listed[pid]; dup {
			return fmt.Errorf("u%d holds two awards of perk %s", u, pid)
		}
		listed[pid] = a
	}
	for p, a := range mu.awards {
		got, ok := listed[r.pids[p]]
		if ok != a.held(perkDefs[p]) {
			return fmt.Errorf("u%d p%d: listed %v, the model says it is held: %v", u, p, ok, a.held(perkDefs[p]))
		}
		if !ok {
			continue
		}
		if err := sameAward(got, a.shown(perkDefs[p], r.m.day), r.pids[p]); err != nil {
			return fmt.Errorf("u%d p%d: %w; the ledger's newest entries: %s", u, p, err, describe(r.ledgerEntries(u, p)))
		}
		from, ok := r.fromOf(before, p, len(a.entries))
		if !ok {
			continue // unchanged: read whole every 50 steps and at the end
		}
		if err := r.checkLedger(u, p, from); err != nil {
			return fmt.Errorf("u%d p%d ledger: %w", u, p, err)
		}
	}
	resp = r.send("GET", "/users/"+uid, nil, "")
	if resp.Status != 200 {
		return fmt.Errorf("GET user: %d %.300s", resp.Status, resp.Body)
	}
	bal, err := penceOf(decode(resp.Body)["balance"])
	if err != nil {
		return fmt.Errorf("u%d balance: %w", u, err)
	}
	if bal != mu.balance || bal < 0 {
		return fmt.Errorf("u%d balance %s, the model has %s", u, pence(bal), pence(mu.balance))
	}
	from, ok := r.fromOf(before, len(mu.awards), len(mu.money))
	if !ok {
		return nil
	}
	if err := r.checkMoney(u, from); err != nil {
		return fmt.Errorf("u%d money ledger: %w", u, err)
	}
	return nil
}

// fromOf tells which entries of ledger i of a user to read after a step:
// those numbered above from; none (ok false) when the step wrote none.
// Every wholeEvery steps, and at the end (before nil), ledgers are read
// whole, so that an entry changed after it was written does not go
// unseen; else only the step's new entries (a run's cost stays about
// linear in its steps).
func (r *runner) fromOf(before []int, i, n int) (from int, ok bool) {
	switch {
	case before == nil || r.n%wholeEvery == 0:
		return 0, true
	case n == before[i]:
		return 0, false
	}
	return before[i], true
}

// newest reads a ledger (base: its path) newest first, page by page
// (pages of 3 on every fifth step when it reads at most 300 entries, else
// pages of 100), down to the entry numbered after: it
// returns the entries numbered above after, newest first, and the first
// page (the award ledger's lots are on it). want bounds what it reads.
func (r *runner) newest(base string, after, want int) (got []map[string]any, first map[string]any, err error) {
	limit := 100
	if r.n%5 == 0 && want <= 300 {
		limit = 3
	}
	start := ""
	for {
		q := fmt.Sprintf("?limit=%d", limit)
		if start != "" {
			q += "&startKey=" + url.QueryEscape(start)
		}
		resp := r.send("GET", base+q, nil, "")
		if resp.Status != 200 {
			return nil, nil, fmt.Errorf("GET %s: %d %.300s", base, resp.Status, resp.Body)
		}
		page := decode(resp.Body)
		if first == nil {
			first = page
		}
		for _, e := range page["items"].([]any) {
			m := e.(map[string]any)
			if intOf(m["seq"]) <= after {
				return got, first, nil
			}
			got = append(got, m)
		}
		nk, _ := page["page"].(map[string]any)["nextKey"].(string)
		if nk == "" {
			return got, first, nil
		}
		start = nk
		if len(got) > want+limit {
			return nil, nil, fmt.Errorf("more entries than the model's %d", want)
		}
	}
}

// checkMoney compares user u's money ledger with the model's entries: the
// entries numbered above from (0: the whole ledger, every page) are
// read, each numbered in turn without gaps, each balanceAfter the running
// sum, the last the app balance.
func (r *runner) checkMoney(u, from int) error {
	mu := r.m.users[u]
	got, _, err := r.newest("/users/"+r.uids[u]+"/balance/ledger", from, len(mu.money)-from)
	if err != nil {
		return err
	}
	if len(got) != len(mu.money)-from {
		return fmt.Errorf("%d entries above %d, the model has %d: %v", len(got), from, len(mu.money)-from, describeMoney(got))
	}
	sum := 0
	for _, m := range mu.money[:from] {
		sum += m.pence
	}
	for k := range got {
		i := from + k
		e := got[len(got)-1-k]
		want := mu.money[i]
		amt, err := penceOf(json.Number(fmt.Sprint(e["amount"])))
		if err != nil {
			return fmt.Errorf("entry %d amount: %w", i+1, err)
		}
		after, err := penceOf(json.Number(fmt.Sprint(e["balanceAfter"])))
		if err != nil {
			return fmt.Errorf("entry %d balanceAfter: %w", i+1, err)
		}
		sum += amt
		if intOf(e["seq"]) != i+1 || e["type"] != want.typ || amt != want.pence || after != sum || after < 0 || e["currency"] != "GBP" {
			return fmt.Errorf("entry %d is %v %v %v after %v; the model: seq %d %s %s after %s; read: %v",
				i+1, e["seq"], e["type"], e["amount"], e["balanceAfter"], i+1, want.typ, pence(want.pence), pence(sum), describeMoney(got))
		}
	}
	if sum != mu.balance {
		return fmt.Errorf("entries sum to %s, the balance is %s", pence(sum), pence(mu.balance))
	}
	return nil
}

func describeMoney(entries []map[string]any) string {
	var b strings.Builder
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		fmt.Fprintf(&b, "[%v %v %v=%v] ", e["seq"], e["type"], e["amount"], e["balanceAfter"])
	}
	return b.String()
}

// checkLedger compares award (u, p)'s ledger with the model's entries:
// the entries numbered above from (0: the whole ledger, every page) are
// read, each numbered in turn without gaps, each balanceAfter the running
// sum, the last the award's available; and the lots holding points.
func (r *runner) checkLedger(u, p, from int) error {
	a := r.m.users[u].awards[p]
	got, first, err := r.newest("/users/"+r.uids[u]+"/pointawards/"+r.awardID(u, p)+"/ledger", from, len(a.entries)-from)
	if err != nil {
		return err
	}
	if len(got) != len(a.entries)-from {
		return fmt.Errorf("%d entries above %d, the model has %d: %v", len(got), from, len(a.entries)-from, describe(got))
	}
	sum := 0
	for _, e := range a.entries[:from] {
		sum += e.pts
	}
	for k := range got {
		i := from + k
		e := got[len(got)-1-k]
		want := a.entries[i]
		pts := intOf(e["points"])
		sum += pts
		if intOf(e["seq"]) != i+1 || e["type"] != want.typ || pts != want.pts || intOf(e["balanceAfter"]) != sum {
			return fmt.Errorf("entry %d is %v %v %v after %v; the model: seq %d %s %d after %d; read: %v",
				i+1, e["seq"], e["type"], e["points"], e["balanceAfter"], i+1, want.typ, want.pts, sum, describe(got))
		}
	}
	if sum != a.avail {
		return fmt.Errorf("entries sum to %d, available is %d", sum, a.avail)
	}
	// The lots that hold points now, in the order burns take them.
	lots, _ := first["lots"].([]any)
	v := a.view(r.m.day)
	want := append([]mLot(nil), v.lots...)
	sort.SliceStable(want, func(i, j int) bool { return want[i].spendsBefore(want[j]) })
	var wantS, gotS []string
	for _, l := range want {
		wantS = append(wantS, fmt.Sprintf("%s.%d:%d", r.awardID(u, p), l.id, l.remaining))
	}
	for _, x := range lots {
		l, _ := x.(map[string]any)
		gotS = append(gotS, fmt.Sprintf("%v:%d", l["lotId"], intOf(l["remaining"])))
	}
	if fmt.Sprint(gotS) != fmt.Sprint(wantS) {
		return fmt.Errorf("lots %v, the model has %v", gotS, wantS)
	}
	return nil
}

func describe(entries []map[string]any) string {
	var b strings.Builder
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		fmt.Fprintf(&b, "[%v %v %v=%v %v] ", e["seq"], e["type"], e["points"], e["balanceAfter"], e["lots"])
	}
	return b.String()
}

// pair sends two redemptions of one award at once and checks that the
// answers and the state are those of one of the two orders they can
// commit in (the model moves by that order).
func (r *runner) pair(s step) error {
	path := "/users/" + r.uids[s.User] + "/pointawards/" + r.awardID(s.User, s.Perk) + "/redeem"
	vals := [2]int{s.N, s.N2}
	var resp [2]*ts.Resp
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { resp[i] = r.send("POST", path, marshal(map[string]any{"valueToRedeem": vals[i]}), "") })
	}
	wg.Wait()
	codeOf := func(x *ts.Resp) string {
		if x.Status < 400 {
			return ""
		}
		c, _ := decode(x.Body)["code"].(string)
		return c
	}
	got := [2]string{codeOf(resp[0]), codeOf(resp[1])}
	d := perkDefs[s.Perk]
	a := r.m.users[s.User].awards[s.Perk]
	t := r.now()
	var fits []mAward
	var orders [][2]int
	for _, order := range [][2]int{{0, 1}, {1, 0}} {
		b := a.clone()
		var codes [2]string
		for _, i := range order {
			codes[i] = b.redeem(d, vals[i], 1, t)
		}
		if codes == got {
			fits = append(fits, b)
			orders = append(orders, order)
		}
	}
	switch {
	case len(fits) == 0:
		return fmt.Errorf("answers %d %s and %d %s fit neither order of the two redemptions (model award %+v)", resp[0].Status, got[0], resp[1].Status, got[1], a)
	case len(fits) == 2 && got == [2]string{"", ""} && vals[0] != vals[1]:
		// Both committed: the ledger tells the order (its last BURN).
		entries := r.ledgerEntries(s.User, s.Perk)
		last := -1
		if len(entries) > 0 {
			last = -intOf(entries[0]["points"])
		}
		if last == vals[orders[0][1]] {
			fits = fits[:1]
		} else {
			fits = fits[1:]
		}
	}
	r.m.users[s.User].awards[s.Perk] = fits[0]
	return nil
}

// ledgerEntries reads award (u, p)'s newest ledger entries (one page).
func (r *runner) ledgerEntries(u, p int) []map[string]any {
	resp := r.send("GET", "/users/"+r.uids[u]+"/pointawards/"+r.awardID(u, p)+"/ledger?limit=8", nil, "")
	var out []map[string]any
	items, _ := decode(resp.Body)["items"].([]any)
	for _, e := range items {
		out = append(out, e.(map[string]any))
	}
	return out
}

// gone tells whether step s is one of a deleted user's requests, which
// the run leaves out (the model of a deleted user covers what stays:
// their awards, ledgers, the expiry of their lots and the refunds of
// their payments).
func (r *runner) gone(s step) bool {
	deleted := func(u int) bool { return r.m.users[u].deleted }
	switch s.Kind {
	case kAdvance, kExpire, kTxnRefund:
		return false
	case kComplete, kRace:
		o, ok := r.m.orders[s.Ref]
		return ok && deleted(o.user)
	case kRetry, kReuse:
		prev, ok := r.sent[s.Ref]
		return ok && deleted(prev.user)
	case kTxnRepeat:
		orig, ok := r.steps[s.Ref]
		return ok && deleted(orig.User)
	}
	return deleted(s.User)
}

// checkDeleted checks a deleted user: their ledgers, read by an admin,
// are the model's.
func (r *runner) checkDeleted(u int, before []int) error {
	mu := r.m.users[u]
	for p, a := range mu.awards {
		from, ok := r.fromOf(before, p, len(a.entries))
		if !a.exists || !ok {
			continue
		}
		if err := r.checkLedger(u, p, from); err != nil {
			return fmt.Errorf("deleted u%d p%d ledger: %w", u, p, err)
		}
	}
	from, ok := r.fromOf(before, len(mu.awards), len(mu.money))
	if !ok {
		return nil
	}
	if err := r.checkMoney(u, from); err != nil {
		return fmt.Errorf("deleted u%d money ledger: %w", u, err)
	}
	return nil
}
