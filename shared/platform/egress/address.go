package egress

import "net/netip"

// forbidden4 are the IPv4 ranges the platform never sends to: this network,
// private (RFC 1918), shared CGNAT space, loopback, link-local (with the
// instance metadata service, 169.254.169.254), IETF protocol assignments,
// the documentation and benchmarking ranges, the old 6to4 relay anycast,
// multicast, and the reserved block up to the limited broadcast address.
var forbidden4 = prefixes(
	"0.0.0.0/8",
	"10.0.0.0/8",
	"100.64.0.0/10",
	"127.0.0.0/8",
	"169.254.0.0/16",
	"172.16.0.0/12",
	"192.0.0.0/24",
	"192.0.2.0/24",
	"192.88.99.0/24",
	"192.168.0.0/16",
	"198.18.0.0/15",
	"198.51.100.0/24",
	"203.0.113.0/24",
	"224.0.0.0/4",
	"240.0.0.0/4",
)

// global6 is IPv6 global unicast space: everything outside it (the
// unspecified and loopback addresses, IPv4-compatible and -translated
// addresses, the local-use NAT64 prefix, discard-only space, unique local
// fc00::/7 with AWS's fd00:ec2::254, link-local, site-local, multicast) is
// forbidden, but for the IPv4-mapped and NAT64 forms Forbidden unwraps.
var global6 = netip.MustParsePrefix("2000::/3")

// forbidden6 are the parts of global6 the platform never sends to: the
// IETF protocol assignments (Teredo, benchmarking, ORCHID...), and the
// documentation ranges.
var forbidden6 = prefixes(
	"2001::/23",
	"2001:db8::/32",
	"3fff::/20",
)

// Prefixes of IPv6 addresses that carry an IPv4 address: the well-known
// NAT64 prefix (the address in the last 32 bits) and 6to4 (in bits 16-47).
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// Forbidden reports whether the platform refuses to send to ip: an invalid
// or zoned address, loopback, private (RFC 1918), CGNAT (100.64.0.0/10),
// link-local (169.254.0.0/16, fe80::/10), unspecified, multicast, broadcast,
// 0.0.0.0/8, unique local IPv6 (fc00::/7), the documentation and
// benchmarking ranges, any IPv6 address outside global unicast 2000::/3,
// and an IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 address whose IPv4
// address is forbidden.
func Forbidden(ip netip.Addr) bool {
	switch {
	case !ip.IsValid() || ip.Zone() != "":
		return true
	case ip.Is4():
		return in(forbidden4, ip)
	case ip.Is4In6():
		return Forbidden(ip.Unmap())
	case nat64.Contains(ip):
		b := ip.As16()
		return Forbidden(netip.AddrFrom4([4]byte(b[12:16])))
	case sixTo4.Contains(ip):
		b := ip.As16()
		return Forbidden(netip.AddrFrom4([4]byte(b[2:6])))
	case !global6.Contains(ip):
		return true
	default:
		return in(forbidden6, ip)
	}
}

// loopback reports whether ip is a loopback address, IPv4-mapped or not.
func loopback(ip netip.Addr) bool {
	return ip.IsValid() && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

func in(ps []netip.Prefix, ip netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

func prefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
