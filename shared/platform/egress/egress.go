// Package egress guards the platform's outgoing requests to URLs its
// tenants give (webhooks) against server-side request forgery: CheckURL
// refuses a URL when it is saved, and NewClient's client refuses, at each
// delivery, to connect to an address the platform does not send to
// (Forbidden: loopback, private, link-local with the instance metadata
// service, and the like), resolving the host itself and dialing the very
// address it checked, so no second lookup can answer otherwise (DNS
// rebinding). It follows no redirect and uses no proxy.
//
// In local mode (make run) http is allowed and loopback addresses are
// allowed too; every other forbidden address is still refused.
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// DefaultTimeout bounds a whole request of NewClient's client (connection,
// TLS, request and response headers, and the body as the caller reads it)
// when Options.Timeout is not positive.
const DefaultTimeout = 15 * time.Second

// dialTimeout bounds one connection attempt to one address.
const dialTimeout = 5 * time.Second

// ErrForbiddenAddress is wrapped by the errors of NewClient's client when
// it refused to connect: the host resolved to (or was) a forbidden address,
// or the URL is one CheckURL refuses.
var ErrForbiddenAddress = errors.New("egress: forbidden address")

// ForbiddenError says which host and address, and why, a request was
// refused; it wraps ErrForbiddenAddress.
type ForbiddenError struct {
	Host   string     // the URL's host, when known
	Addr   netip.Addr // the refused address, when one was
	Reason string
}

// Error returns the refusal with its host and address.
func (e *ForbiddenError) Error() string {
	var b strings.Builder
	b.WriteString("egress: refused")
	if e.Host != "" {
		b.WriteString(" " + e.Host)
	}
	if e.Addr.IsValid() && e.Addr.String() != e.Host {
		b.WriteString(" (" + e.Addr.String() + ")")
	}
	b.WriteString(": " + e.Reason)
	return b.String()
}

// Unwrap returns ErrForbiddenAddress.
func (e *ForbiddenError) Unwrap() error { return ErrForbiddenAddress }

// Resolver looks a host name up; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure NewClient; the zero value is AWS mode with the
// defaults.
type Options struct {
	// Local allows http URLs and loopback addresses (make run).
	Local bool
	// Timeout bounds a whole request (DefaultTimeout when not positive).
	Timeout time.Duration
	// Resolver looks host names up (net.DefaultResolver when nil).
	Resolver Resolver
	// UserAgent is sent as User-Agent when a request sets none.
	UserAgent string
}

// NewClient returns a client for requests to tenants' URLs. Its dialer
// resolves the host itself and refuses the request (an error wrapping
// ErrForbiddenAddress) when any address it resolves to is Forbidden (but
// loopback in local mode), then dials those checked addresses in turn; a
// control function of the dialer checks each address again just before
// connecting. It never follows a redirect (a 3xx is the answer), ignores
// the proxy variables of the environment and, in AWS mode, sends only
// https. The caller should read at most a little of a response body.
func NewClient(opts Options) *http.Client {
	return newClient(opts, nil, nil)
}

// dialFunc connects to an address that was checked.
type dialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// newClient is NewClient with a dial function in place of a net.Dialer's
// and a TLS configuration, for tests.
func newClient(opts Options, dial dialFunc, tlsConfig *tls.Config) *http.Client {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	g := &guard{local: opts.Local, resolver: opts.Resolver}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	g.dial = dial
	if g.dial == nil {
		d := &net.Dialer{Timeout: dialTimeout, Control: g.control}
		g.dial = d.DialContext
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		TLSClientConfig:        tlsConfig,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: &front{next: tr, local: opts.Local, userAgent: opts.UserAgent},
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// front refuses, in AWS mode, a request that is not https, and sets the
// User-Agent.
type front struct {
	next      http.RoundTripper
	local     bool
	userAgent string
}

// RoundTrip sends r through the guarded transport.
func (f *front) RoundTrip(r *http.Request) (*http.Response, error) {
	if !f.local && r.URL.Scheme != "https" {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &ForbiddenError{Host: r.URL.Host, Reason: "only https URLs are sent to"}
	}
	if f.userAgent != "" && r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", f.userAgent)
	}
	return f.next.RoundTrip(r)
}

// guard decides which addresses a request may connect to, and connects.
type guard struct {
	local    bool
	resolver Resolver
	dial     dialFunc
}

// allowed reports whether the guard lets a connection reach ip.
func (g *guard) allowed(ip netip.Addr) bool {
	return !Forbidden(ip) || g.local && loopback(ip)
}

// addresses returns the addresses host may be reached at: host itself when
// it is an IP address, else every address the resolver answers for it. It
// refuses (a *ForbiddenError) a host CheckURL refuses or when any of the
// addresses is not allowed, even if others are.
func (g *guard) addresses(ctx context.Context, network, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	reason := "the host resolves to an address the platform does not send to"
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
		reason = "an address the platform does not send to"
	} else {
		if msg := hostProblem(host, g.local); msg != "" {
			return nil, &ForbiddenError{Host: host, Reason: msg}
		}
		addrs, err = g.resolver.LookupNetIP(ctx, network, host)
		if err != nil {
			return nil, fmt.Errorf("egress: resolve %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("egress: resolve %s: no address", host)
		}
	}
	for _, a := range addrs {
		if !g.allowed(a) {
			return nil, &ForbiddenError{Host: host, Addr: a, Reason: reason}
		}
	}
	return addrs, nil
}

// DialContext connects to address (host:port) through the checked
// addresses of its host, in the resolver's order, until one connects.
func (g *guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s: %w", address, err)
	}
	lookup := "ip"
	switch network {
	case "tcp4":
		lookup = "ip4"
	case "tcp6":
		lookup = "ip6"
	}
	addrs, err := g.addresses(ctx, lookup, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		c, err := g.dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if errors.Is(err, ErrForbiddenAddress) || ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("egress: dial %s: %w", address, errors.Join(errs...))
}

// control checks, just before a socket connects, that the address it
// connects to is allowed: the last word, whatever resolved it.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &ForbiddenError{Reason: fmt.Sprintf("cannot read the dialed address %q", address)}
	}
	if !g.allowed(ap.Addr()) {
		return &ForbiddenError{Addr: ap.Addr(), Reason: "the dialed address is one the platform does not send to"}
	}
	return nil
}
