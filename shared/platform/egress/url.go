package egress

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

// MaxURLLength is the longest URL CheckURL accepts.
const MaxURLLength = 2048

// CheckURL checks a webhook URL when it is created or updated, without
// resolving it: an error is a VALIDATION_FAILED *apierr.Error naming the
// field url. On AWS (local false) the URL must be https with a host and
// no user name or password (any port); an IP address must not be
// Forbidden, and host names that are local by definition (localhost and
// *.localhost, *.local, *.localdomain, *.home.arpa, *.internal, a name
// without a dot) are refused. Locally (make run) http is accepted too,
// and so are loopback addresses and those names. Either way an IPv4
// address in any form but four decimal numbers (2130706433, 0177.0.0.1,
// 0x7f.1, 127.1), which some resolvers and clients read as an address,
// is refused, and so is a host name a DNS name cannot be. The address a
// name resolves to is checked by NewClient's client on each delivery.
func CheckURL(raw string, local bool) error {
	if len(raw) > MaxURLLength {
		return apierr.Invalid("url", "must be at most %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return apierr.Invalid("url", "is not a valid URL")
	}
	switch {
	case u.Scheme == "https", local && u.Scheme == "http":
	case local:
		return apierr.Invalid("url", "must be an absolute http or https URL")
	default:
		return apierr.Invalid("url", "must be an absolute https URL")
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return apierr.Invalid("url", "must name a host (https://host/path)")
	}
	if u.User != nil {
		return apierr.Invalid("url", "must not carry a user name or password")
	}
	if strings.HasSuffix(u.Host, ":") {
		return apierr.Invalid("url", "has an empty port")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return apierr.Invalid("url", "has a port outside 1 to 65535")
		}
	}
	if msg := hostProblem(u.Hostname(), local); msg != "" {
		return apierr.Invalid("url", "%s", msg)
	}
	return nil
}

// hostProblem says why the platform does not send to host (a URL's host
// name or IP address, without brackets or port), or "" when it may.
func hostProblem(host string, local bool) string {
	if ip, err := netip.ParseAddr(host); err == nil {
		switch {
		case ip.Zone() != "":
			return "must not name an IPv6 zone"
		case Forbidden(ip) && !(local && loopback(ip)):
			return "names an address the platform does not send to (loopback, private, link-local, shared or reserved)"
		}
		return ""
	}
	name := strings.ToLower(host)
	if len(name) > 254 || name == "" {
		return "has a host name longer than a DNS name can be"
	}
	if endsInNumber(name) {
		return "writes an IP address in a form other than four decimal numbers (such as 2130706433, 0177.0.0.1, 0x7f.1 or 127.1)"
	}
	trimmed := strings.TrimSuffix(name, ".")
	for _, label := range strings.Split(trimmed, ".") {
		if !validLabel(label) {
			return "has a host name a DNS name cannot be (letters, digits and hyphens between dots; an internationalised name in its xn-- form)"
		}
	}
	if local {
		return ""
	}
	for _, suffix := range []string{"localhost", "local", "localdomain", "home.arpa", "internal"} {
		if trimmed == suffix || strings.HasSuffix(trimmed, "."+suffix) {
			return "names a local or internal host (" + suffix + ")"
		}
	}
	if !strings.Contains(trimmed, ".") {
		return "must name a fully qualified host (a name with a dot)"
	}
	return ""
}

// endsInNumber reports whether a URL parser of the WHATWG URL standard (a
// browser, curl, many libraries) would read host as an IPv4 address: its
// last label (after a final dot, if any) is a decimal number or 0x and hex
// digits. Only a canonical dotted quad, which netip.ParseAddr accepts
// before this runs, is an IPv4 address the platform reads as such.
func endsInNumber(host string) bool {
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// validLabel reports whether s is a DNS label: 1 to 63 ASCII letters,
// digits, hyphens (not first or last) and underscores.
func validLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
