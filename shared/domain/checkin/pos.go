package checkin

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/clock"
	"github.com/loyalty-platform/platform/shared/platform/web"
)

// POS notification events (the API's notifyCheckin and notifyCheckout).
const (
	EventCheckin  = "checkin"
	EventCheckout = "checkout"
)

// Headers of a POS notification.
const (
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256, keyed with the
	// tenant's POS secret, of "<timestamp>.<body>".
	HeaderSignature = "x-platform-signature"
	// HeaderTimestamp is the sending time in Unix seconds; it is part of
	// the signed material, so a receiver can refuse stale replays.
	HeaderTimestamp = "x-platform-timestamp"
	// HeaderEvent repeats the payload's event.
	HeaderEvent = "x-platform-event"
	// HeaderDelivery is a unique id of the notification, for de-duplication.
	HeaderDelivery = "x-platform-delivery"
)

// DefaultPOSTimeout bounds each POS notification.
const DefaultPOSTimeout = 2 * time.Second

// Notification is the JSON body POSTed to a tenant's POS endpoint.
type Notification struct {
	// Event is "checkin" (notifyCheckin) or "checkout" (notifyCheckout).
	Event string `json:"event"`
	// Data is the check-in concerned.
	Data Checkin `json:"data"`
	// Options carry what the event adds to the check-in.
	Options NotifyOptions `json:"options"`
}

// NotifyOptions is the `options` of a notification.
type NotifyOptions struct {
	// ExpiresAt is when a new check-in ends unless the user checks out
	// (checkin only).
	ExpiresAt string `json:"expiresAt,omitempty"`
	// ReplacedCheckinID is the user's previous check-in, ended by this one
	// (checkin only, when the user was checked in elsewhere).
	ReplacedCheckinID string `json:"replacedCheckinId,omitempty"`
	// Reason is why a check-in ended (checkout only): REQUESTED or
	// CHECKED_IN_ELSEWHERE.
	Reason string `json:"reason,omitempty"`
}

// Checkout reasons.
const (
	ReasonRequested          = "REQUESTED"
	ReasonCheckedInElsewhere = "CHECKED_IN_ELSEWHERE"
)

// POSNotifier POSTs signed notifications to a tenant's POS endpoint. It is
// fire-and-forget: failures are logged, never returned. In Lambda the
// process may be frozen as soon as the response is returned, so Send does
// the POSTs before returning (in parallel, each bounded by Timeout) rather
// than leaving them to a goroutine that might never finish.
type POSNotifier struct {
	// Client sends the requests; nil means a client that follows no
	// redirects.
	Client *http.Client
	// Timeout bounds each POST; zero means DefaultPOSTimeout.
	Timeout time.Duration
	Clock   clock.Clock
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// endpointOrigin returns the scheme and host of a POS endpoint, the only
// parts that are logged (its path and query may hold a token).
func endpointOrigin(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return "(invalid URL)"
	}
	return u.Scheme + "://" + u.Host
}

// Sign returns the signature header value of body sent at timestamp ts
// (Unix seconds): "sha256=" + hex(HMAC-SHA256(secret, ts + "." + body)).
func Sign(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether sig is the signature of body at ts under secret
// (what a POS does on receipt; used by the tests).
func Verify(secret, ts string, body []byte, sig string) bool {
	return hmac.Equal([]byte(Sign(secret, ts, body)), []byte(sig))
}

// Send POSTs each notification to endpoint and waits for all of them, at
// most Timeout. With no endpoint it does nothing. It never fails: errors and
// non-2xx answers are logged.
func (p *POSNotifier) Send(ctx context.Context, endpoint, secret string, ns ...Notification) {
	if p == nil || endpoint == "" || len(ns) == 0 {
		return
	}
	// The POS is told even when the caller has gone away.
	ctx = context.WithoutCancel(ctx)
	log := web.Logger(ctx)
	if secret == "" {
		log.Warn("pos notification unsigned: the tenant has no posSecret")
	}
	var wg sync.WaitGroup
	for _, n := range ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if err := p.post(ctx, endpoint, secret, n); err != nil {
				log.Warn("pos notification failed", "event", n.Event, "checkinId", n.Data.ID, "endpoint", endpointOrigin(endpoint), "error", err.Error(), "ms", time.Since(start).Milliseconds())
				return
			}
			log.Info("pos notification sent", "event", n.Event, "checkinId", n.Data.ID, "ms", time.Since(start).Milliseconds())
		}()
	}
	wg.Wait()
}

func (p *POSNotifier) post(ctx context.Context, endpoint, secret string, n Notification) error {
	body, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = DefaultPOSTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		// The parse error quotes the URL, which may hold a token.
		return errors.New("build request: the endpoint is not a valid URL")
	}
	now := time.Now()
	if p.Clock != nil {
		now = p.Clock.Now()
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "loyalty-platform-pos-notifier/1")
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderEvent, n.Event)
	req.Header.Set(HeaderDelivery, newID())
	if secret != "" {
		req.Header.Set(HeaderSignature, Sign(secret, ts, body))
	}
	client := p.Client
	if client == nil {
		client = noRedirects
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("no answer within %s", timeout)
		}
		// A *url.Error quotes the whole endpoint (its path and query may
		// hold a token): keep only the operation and the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Errorf("%s %s: %w", ue.Op, endpointOrigin(endpoint), ue.Err)
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered %d", resp.StatusCode)
	}
	return nil
}
