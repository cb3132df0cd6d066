package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// The operations of the API mix, in the order one worker runs them on one
// of its users in the mix: check-in before checkout, and the payment last,
// since a completed order checks the user out.
const (
	opGetUser  = "GET /users/{id}"
	opCheckin  = "check-in"
	opCheckout = "checkout"
	opGrant    = "grant"
	opRedeem   = "redeem"
	opAwards   = "GET /awards"
	opTxn      = "POST /transactions"
)

var mixOps = []string{opGetUser, opCheckin, opCheckout, opGrant, opRedeem, opAwards, opTxn}

// phases are the runs of the benchmark: each operation alone (check-in and
// checkout alternate, since one needs the other), then the mix.
var phases = []struct {
	name string
	seq  []string
}{
	{opGetUser, []string{opGetUser}},
	{"check-in + checkout", []string{opCheckin, opCheckout}},
	{opGrant, []string{opGrant}},
	{opRedeem, []string{opRedeem}},
	{opAwards, []string{opAwards}},
	{opTxn, []string{opTxn}},
	{"mix", mixOps},
	{"order (3 redemptions)", orderOps},
	{"refund mix", refundOps},
}

// routeOf names a request of the server's log by the operation it is, or
// "" for requests outside the mix.
func routeOf(method, path string) string {
	switch {
	case method == "GET" && strings.HasPrefix(path, "/users/") && strings.Count(path, "/") == 2 && path != "/users/login":
		return opGetUser
	case method == "POST" && strings.HasSuffix(path, "/checkins"):
		return opCheckin
	case method == "DELETE" && strings.HasSuffix(path, "/checkins"):
		return opCheckout
	case method == "POST" && strings.HasPrefix(path, "/pointperks/") && strings.HasSuffix(path, "/awards"):
		return opGrant
	case method == "POST" && strings.HasSuffix(path, "/redeem"):
		return opRedeem
	case method == "GET" && path == "/awards":
		return opAwards
	case method == "POST" && path == "/transactions":
		return opTxn
	case method == "POST" && strings.HasPrefix(path, "/users/") && strings.HasSuffix(path, "/orders"):
		return opOrderCreate
	case method == "POST" && strings.HasPrefix(path, "/users/") && strings.HasSuffix(path, "/transactions"):
		return opOrderPay
	case method == "PUT" && strings.HasPrefix(path, "/orders/"):
		return opOrderComplete
	case method == "PUT" && strings.HasPrefix(path, "/transactions/"):
		return opRefund
	}
	return ""
}

// benchUser is a user of the fixture with its session token.
type benchUser struct {
	ID    string
	Token string
}

// fixture is what the mix works on: users with sessions and profile
// photos, a location offering check-ins and a perk every user holds
// points of.
type fixture struct {
	users    []benchUser
	location string
	perk     string
	seq      atomic.Int64 // numbers the payments' short codes
	// redeemPerks are the perks the order phase's orders redeem (the
	// first is perk), set by setupOrders.
	redeemPerks []string
	// state keeps the orders and payments the order and refund phases
	// pass on, by user.
	state state
}

// call is one HTTP request of the driver.
type call struct {
	method, path string
	body         any // JSON-encoded unless []byte
	headers      []string
	want         int
}

// do sends c and returns the body; any status but c.want is an error.
func (e *env) do(ctx context.Context, c call) ([]byte, error) {
	var rd io.Reader
	ctype := ""
	switch b := c.body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd, ctype = bytes.NewReader(raw), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, c.method, e.base+c.path, rd)
	if err != nil {
		return nil, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(c.headers); i += 2 {
		req.Header.Set(c.headers[i], c.headers[i+1])
	}
	resp, err := e.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", c.method, c.path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the body: %w", c.method, c.path, err)
	}
	if c.want != 0 && resp.StatusCode != c.want {
		return body, fmt.Errorf("%s %s: %w %d (want %d): %.300s", c.method, c.path, errStatus, resp.StatusCode, c.want, body)
	}
	return body, nil
}

// doJSON sends c and decodes the answer into v.
func (e *env) doJSON(ctx context.Context, c call, v any) error {
	body, err := e.do(ctx, c)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s %s: decode %.200s: %w", c.method, c.path, body, err)
	}
	return nil
}

func (e *env) admin() []string { return []string{"x-service-auth-token", e.serviceToken} }

func token(t string) []string { return []string{"Authorization", "Token " + t} }

const benchPassword = "correct-horse-9"

// setup creates the fixture through the API: n users (each with a
// password, a session from a Basic login and a profile photo), a location
// offering check-ins and a stamp card every user is granted plenty of
// points of, so that redemptions never run out.
func (e *env) setup(ctx context.Context, n int) (*fixture, error) {
	fx := &fixture{users: make([]benchUser, n)}
	var loc, perk struct {
		ID string `json:"_id"`
	}
	if err := e.doJSON(ctx, call{method: "POST", path: "/locations", headers: e.admin(), want: 201,
		body: map[string]any{"title": "Bench Cafe", "geo": []float64{-0.1337, 51.5136}, "services": map[string]bool{"checkins": true}}}, &loc); err != nil {
		return nil, err
	}
	if err := e.doJSON(ctx, call{method: "POST", path: "/perks", headers: e.admin(), want: 201,
		body: map[string]any{"title": "Bench card", "template": "STAMP_CARD", "points": map[string]any{"initial": 0, "max": 1_000_000_000},
			"visualisation": map[string]any{"titleText": "Bench card"}}}, &perk); err != nil {
		return nil, err
	}
	fx.location, fx.perk = loc.ID, perk.ID
	photo := jpegImage()
	err := parallel(ctx, n, 4, func(ctx context.Context, i int) error {
		email := fmt.Sprintf("bench.%d.%s@example.com", i, randomHex(3))
		var u struct {
			ID string `json:"id"`
		}
		if err := e.doJSON(ctx, call{method: "POST", path: "/users?autoActivate=true", headers: e.admin(), want: 201,
			body: map[string]any{"firstName": "Bench", "lastName": fmt.Sprintf("User%d", i), "password": benchPassword,
				"credentials": []map[string]any{{"provider": "EMAIL", "id": email}}}}, &u); err != nil {
			return err
		}
		var s struct {
			ID string `json:"_id"`
		}
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+benchPassword))
		if err := e.doJSON(ctx, call{method: "GET", path: "/users/login", want: 200,
			headers: []string{"x-application-id", e.tenant, "AuthProvider", "EMAIL", "Authorization", basic}}, &s); err != nil {
			return err
		}
		if _, err := e.do(ctx, call{method: "PUT", path: "/users/" + u.ID + "/avatar", body: photo, want: 200,
			headers: append(token(s.ID), "Content-Type", "image/jpeg")}); err != nil {
			return err
		}
		if _, err := e.do(ctx, call{method: "POST", path: "/pointperks/" + fx.perk + "/awards", headers: e.admin(), want: 200,
			body: map[string]any{"userId": u.ID, "points": 100_000_000}}); err != nil {
			return err
		}
		fx.users[i] = benchUser{ID: u.ID, Token: s.ID}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set up the users: %w", err)
	}
	return fx, nil
}

// apiCall returns the request of operation op on user u.
func (e *env) apiCall(fx *fixture, op string, u benchUser) call {
	switch op {
	case opGetUser:
		return call{method: "GET", path: "/users/" + u.ID, headers: token(u.Token), want: 200}
	case opCheckin:
		return call{method: "POST", path: "/users/" + u.ID + "/checkins", headers: token(u.Token), want: 201,
			body: map[string]any{"locationId": fx.location, "type": "MANUAL", "trigger": "CODE"}}
	case opCheckout:
		return call{method: "DELETE", path: "/users/" + u.ID + "/checkins", headers: token(u.Token), want: 204}
	case opGrant:
		return call{method: "POST", path: "/pointperks/" + fx.perk + "/awards", headers: e.admin(), want: 200,
			body: map[string]any{"userId": u.ID, "points": 1}}
	case opRedeem:
		return call{method: "POST", path: "/users/" + u.ID + "/pointawards/" + u.ID + "-" + fx.perk + "/redeem", headers: token(u.Token), want: 200,
			body: map[string]any{"valueToRedeem": 1}}
	case opAwards:
		return call{method: "GET", path: "/awards?userId=" + u.ID, headers: append(e.admin(), "x-api-version", "8"), want: 200}
	case opTxn:
		return call{method: "POST", path: "/transactions", headers: e.admin(), want: 201,
			body: map[string]any{"userId": u.ID, "shortCode": fmt.Sprintf("B-%s-%d", randomHex(3), fx.seq.Add(1)),
				"totalPrice": 3.5, "paymentType": "CARD_AT_POS"}}
	}
	panic("unknown operation " + op)
}

// parallel runs f(0..n-1) with at most width at once and returns the first
// error.
func parallel(ctx context.Context, n, width int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for w := 0; w < min(width, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// jpegImage returns a small real JPEG (profile photos must be one).
func jpegImage() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for x := 0; x < 8; x++ {
		img.Set(x, x, color.RGBA{G: 200, A: 255})
	}
	var b bytes.Buffer
	_ = jpeg.Encode(&b, img, nil)
	return b.Bytes()
}
