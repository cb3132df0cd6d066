package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeResolver answers from its map and counts its lookups; a missing name
// is a lookup error.
type fakeResolver struct {
	answers map[string][]string
	lookups atomic.Int32
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.lookups.Add(1)
	ss, ok := f.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out, nil
}

// names is what the fake resolver answers in these tests.
var names = map[string][]string{
	"public.example":   {"93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"},
	"private.example":  {"10.0.0.5"},
	"mixed.example":    {"93.184.216.34", "192.168.0.10"},
	"metadata.example": {"169.254.169.254"},
	"mapped.example":   {"::ffff:10.0.0.1"},
	"nat64.example":    {"64:ff9b::a00:1"},
	"ula.example":      {"fd00:ec2::254"},
	"loopback.example": {"127.0.0.1"},
	"localhost":        {"127.0.0.1", "::1"},
	"empty.example":    {},
}

func TestAddresses(t *testing.T) {
	tests := []struct {
		name      string
		host      string
		local     bool
		want      []string
		forbidden bool
	}{
		{"Public", "public.example", false, names["public.example"], false},
		{"PublicLiteral", "93.184.216.34", false, []string{"93.184.216.34"}, false},
		{"Private", "private.example", false, nil, true},
		{"PublicAndPrivate", "mixed.example", false, nil, true},
		{"Metadata", "metadata.example", false, nil, true},
		{"MappedPrivate", "mapped.example", false, nil, true},
		{"NAT64Private", "nat64.example", false, nil, true},
		{"ULA", "ula.example", false, nil, true},
		{"Loopback", "loopback.example", false, nil, true},
		{"Localhost", "localhost", false, nil, true},
		{"LoopbackLiteral", "127.0.0.1", false, nil, true},
		{"LoopbackLiteral6", "::1", false, nil, true},
		{"MetadataLiteral", "169.254.169.254", false, nil, true},
		{"Decimal", "2130706433", false, nil, true},
		{"Internal", "metadata.google.internal", false, nil, true},
		{"LocalLoopback", "loopback.example", true, []string{"127.0.0.1"}, false},
		{"LocalLocalhost", "localhost", true, names["localhost"], false},
		{"LocalLoopbackLiteral", "127.0.0.1", true, []string{"127.0.0.1"}, false},
		{"LocalPrivate", "private.example", true, nil, true},
		{"LocalMetadata", "metadata.example", true, nil, true},
		{"LocalMixed", "mixed.example", true, nil, true},
		{"LocalDecimal", "2130706433", true, nil, true},
		{"Unknown", "nowhere.example", false, nil, false},
		{"NoAnswer", "empty.example", false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &guard{local: tt.local, resolver: &fakeResolver{answers: names}}
			got, err := g.addresses(context.Background(), "ip", tt.host)
			if errors.Is(err, ErrForbiddenAddress) != tt.forbidden {
				t.Fatalf("addresses(%s) = %v, %v; forbidden %v", tt.host, got, err, tt.forbidden)
			}
			if tt.want == nil {
				if err == nil {
					t.Fatalf("addresses(%s) = %v, want an error", tt.host, got)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(addrs(tt.want)) {
				t.Fatalf("addresses(%s) = %v, %v; want %v", tt.host, got, err, tt.want)
			}
		})
	}
}

func addrs(ss []string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func TestControl(t *testing.T) {
	tests := []struct {
		name    string
		address string
		local   bool
		allowed bool
	}{
		{"Public", "93.184.216.34:443", false, true},
		{"Public6", "[2606:4700:4700::1111]:443", false, true},
		{"Loopback", "127.0.0.1:443", false, false},
		{"Loopback6", "[::1]:443", false, false},
		{"Metadata", "169.254.169.254:80", false, false},
		{"MappedPrivate", "[::ffff:10.0.0.1]:443", false, false},
		{"Unreadable", "not-an-address:443", false, false},
		{"LocalLoopback", "127.0.0.1:3000", true, true},
		{"LocalPrivate", "10.0.0.1:3000", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &guard{local: tt.local}
			err := g.control("tcp", tt.address, nil)
			if tt.allowed && err != nil || !tt.allowed && !errors.Is(err, ErrForbiddenAddress) {
				t.Errorf("control(%s) = %v, allowed %v", tt.address, err, tt.allowed)
			}
		})
	}
}

// hook is a dial function that records the addresses the guard dials and
// connects each to the test server at target instead.
type hook struct {
	target string
	mu     sync.Mutex
	dialed []string
}

func (h *hook) dial(ctx context.Context, network, address string) (net.Conn, error) {
	h.mu.Lock()
	h.dialed = append(h.dialed, address)
	h.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, h.target)
}

func (h *hook) calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.dialed...)
}

// TestClientAWSMode sends through an AWS-mode client whose resolver is
// fake and whose dial hook connects to a local TLS server (a public address
// cannot be reached from a test): what is dialed, what is refused before
// any dial, and that a redirect is the answer.
func TestClientAWSMode(t *testing.T) {
	var hits atomic.Int32
	var userAgent atomic.Value
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer target.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		userAgent.Store(r.UserAgent())
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, target.URL+"/stolen", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	// httptest's certificate names example.com, so the public name is
	// example.com (or public.example's answers are served under it).
	answers := map[string][]string{"example.com": names["public.example"]}
	for k, v := range names {
		answers[k] = v
	}
	tlsConfig := srv.Client().Transport.(*http.Transport).TLSClientConfig

	tests := []struct {
		name      string
		url       string
		status    int
		forbidden bool
		dialed    []string
	}{
		{"Public", "https://example.com:" + port + "/in", http.StatusOK, false, []string{"93.184.216.34:" + port}},
		{"RedirectNotFollowed", "https://example.com:" + port + "/redirect", http.StatusFound, false, []string{"93.184.216.34:" + port}},
		{"HTTP", "http://example.com:" + port + "/in", 0, true, nil},
		{"Private", "https://private.example:" + port + "/in", 0, true, nil},
		{"PublicAndPrivate", "https://mixed.example:" + port + "/in", 0, true, nil},
		{"Metadata", "https://metadata.example/latest/meta-data/", 0, true, nil},
		{"MappedPrivate", "https://mapped.example:" + port + "/in", 0, true, nil},
		{"NAT64Private", "https://nat64.example:" + port + "/in", 0, true, nil},
		{"LoopbackLiteral", srv.URL + "/in", 0, true, nil},
		{"LoopbackLiteral6", "https://[::1]:" + port + "/in", 0, true, nil},
		{"MetadataLiteral", "https://169.254.169.254/latest/meta-data/", 0, true, nil},
		{"Localhost", "https://localhost:" + port + "/in", 0, true, nil},
		{"Decimal", "https://2130706433:" + port + "/in", 0, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &hook{target: srv.Listener.Addr().String()}
			res := &fakeResolver{answers: answers}
			c := newClient(Options{Resolver: res, UserAgent: "loyalty-webhooks/1"}, h.dial, tlsConfig)
			resp, err := c.Post(tt.url, "application/json", nil)
			if tt.forbidden {
				if !errors.Is(err, ErrForbiddenAddress) {
					t.Fatalf("POST %s = %v, want ErrForbiddenAddress", tt.url, err)
				}
				if d := h.calls(); len(d) != 0 {
					t.Errorf("dialed %v, want no dial", d)
				}
				return
			}
			if err != nil {
				t.Fatalf("POST %s: %v", tt.url, err)
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1024))
			_ = resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if got := h.calls(); fmt.Sprint(got) != fmt.Sprint(tt.dialed) {
				t.Errorf("dialed %v, want %v (the checked address, once)", got, tt.dialed)
			}
			if n := res.lookups.Load(); n != 1 {
				t.Errorf("%d lookups, want 1 (no second lookup)", n)
			}
			if ua, _ := userAgent.Load().(string); ua != "loyalty-webhooks/1" {
				t.Errorf("User-Agent %q", ua)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect's target was called %d times", n)
	}
}

// TestClientLocalMode sends through a local-mode client with the real
// dialer: loopback test servers are reached, a redirect to another is not
// followed, and a private address is still refused.
func TestClientLocalMode(t *testing.T) {
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, target.URL+"/stolen", http.StatusTemporaryRedirect)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := NewClient(Options{Local: true, Resolver: &fakeResolver{answers: names}})

	tests := []struct {
		name      string
		url       string
		status    int
		forbidden bool
	}{
		{"Loopback", srv.URL + "/in", http.StatusAccepted, false},
		{"Localhost", "http://localhost:" + u.Port() + "/in", http.StatusAccepted, false},
		{"RedirectNotFollowed", srv.URL + "/redirect", http.StatusTemporaryRedirect, false},
		{"Private", "http://private.example:" + u.Port() + "/in", 0, true},
		{"MetadataLiteral", "http://169.254.169.254/latest/meta-data/", 0, true},
		{"Decimal", "http://2130706433:" + u.Port() + "/in", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Post(tt.url, "application/json", nil)
			if tt.forbidden {
				if !errors.Is(err, ErrForbiddenAddress) {
					t.Fatalf("POST %s = %v, want ErrForbiddenAddress", tt.url, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("POST %s: %v", tt.url, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the redirect's target was called %d times", n)
	}
}

func TestNewClientDefaults(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://proxy.example:3128")
	t.Setenv("HTTP_PROXY", "http://proxy.example:3128")
	c := NewClient(Options{})
	if c.Timeout != DefaultTimeout {
		t.Errorf("Timeout %s, want %s", c.Timeout, DefaultTimeout)
	}
	if c := NewClient(Options{Timeout: time.Second}); c.Timeout != time.Second {
		t.Errorf("Timeout %s, want 1s", c.Timeout)
	}
	tr := c.Transport.(*front).next.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the transport has a proxy function")
	}
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.MinVersion < tls.VersionTLS12 {
		t.Error("the transport accepts TLS before 1.2")
	}
	if err := c.CheckRedirect(nil, nil); !errors.Is(err, http.ErrUseLastResponse) {
		t.Errorf("CheckRedirect = %v, want http.ErrUseLastResponse", err)
	}
}
