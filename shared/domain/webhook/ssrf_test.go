package webhook_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/loyalty-platform/platform/shared/domain/webhook"
	"github.com/loyalty-platform/platform/shared/platform/egress"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// resolver answers fixed addresses for names, as a DNS that an attacker
// controls would.
type resolver map[string][]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range r[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// awsMode makes the harness's webhook functions behave as in AWS (https
// only, no private address), with names resolved by r.
func awsMode(h *ts.Harness, r resolver) {
	c := egress.NewClient(egress.Options{Resolver: r, Timeout: 2 * time.Second, UserAgent: webhook.UserAgent})
	for _, s := range []*webhook.Service{h.Deps.Fn.Webhooks.Webhooks, h.Deps.Fn.WebhookSender.Webhooks, h.Deps.Fn.WebhookFanout.Webhooks} {
		s.Local, s.Client = false, c
	}
}

// TestSSRF: in AWS mode every way of naming a loopback, private,
// link-local or metadata address is refused when the endpoint is saved,
// and a name that resolves to one is refused when it is delivered to.
func TestSSRF(t *testing.T) {
	t.Parallel()
	h := ts.New(t)
	awsMode(h, resolver{"evil.example.com": {"10.0.0.5"}, "mixed.example.com": {"93.184.216.34", "127.0.0.1"}, "meta.example.com": {"169.254.169.254"}})
	h.OnQueue("webhooksender")
	refused := []string{
		"http://hooks.example.com/in",        // not https
		"https://127.0.0.1/in",               // loopback
		"https://2130706433/in",              // decimal 127.0.0.1
		"https://0177.0.0.1/in",              // octal
		"https://0x7f.0.0.1/in",              // hexadecimal
		"https://127.1/in",                   // short form
		"https://[::1]/in",                   // IPv6 loopback
		"https://[::ffff:127.0.0.1]/in",      // IPv4-mapped loopback
		"https://[::ffff:a00:1]/in",          // IPv4-mapped 10.0.0.1
		"https://10.1.2.3/in",                // RFC 1918
		"https://172.16.0.1/in",              // RFC 1918
		"https://192.168.1.1/in",             // RFC 1918
		"https://169.254.169.254/latest",     // the metadata service
		"https://[fd00::1]/in",               // IPv6 ULA
		"https://[fe80::1]/in",               // IPv6 link-local
		"https://0.0.0.0/in",                 // unspecified
		"https://localhost/in",               // loopback by name
		"https://metadata.google.internal/",  // internal names
		"https://user:pw@hooks.example.com/", // credentials in the url
	}
	for _, u := range refused {
		t.Run(u, func(t *testing.T) {
			h.Do("POST", "/webhooks/endpoints", map[string]any{"url": u}, h.Admin()).Expect(t, 422, "VALIDATION_FAILED")
		})
	}
	for _, host := range []string{"evil.example.com", "mixed.example.com", "meta.example.com"} {
		t.Run("ResolvesTo "+host, func(t *testing.T) {
			id, _ := register(t, h, "https://"+host+"/in")
			h.Do("POST", "/webhooks/endpoints/"+id+"/test", nil, h.Admin()).Expect(t, 202, "")
			h.WaitQueues()
			d := h.Do("GET", "/webhooks/endpoints/"+id+"/deliveries", nil, h.Admin()).Expect(t, 200, "").Map(t)["items"].([]any)
			if len(d) != 1 {
				t.Fatalf("deliveries = %v, want one", d)
			}
			got := d[0].(map[string]any)
			if got["status"] != "PENDING" || got["responseStatus"] != float64(0) || !strings.HasPrefix(got["responseBody"].(string), "refused") {
				t.Errorf("delivery to %s = %v, want PENDING, refused", host, got)
			}
		})
	}
}
