package egress

import (
	"net/netip"
	"testing"
)

func TestForbidden(t *testing.T) {
	tests := []struct {
		name string
		ip   string
		want bool
	}{
		{"ThisNetwork", "0.1.2.3", true},
		{"Unspecified4", "0.0.0.0", true},
		{"Private10", "10.0.0.1", true},
		{"Private172", "172.31.255.254", true},
		{"Private192", "192.168.1.1", true},
		{"CGNAT", "100.64.0.1", true},
		{"CGNATTop", "100.127.255.255", true},
		{"Loopback", "127.0.0.1", true},
		{"LoopbackOther", "127.255.0.9", true},
		{"LinkLocal", "169.254.1.1", true},
		{"Metadata", "169.254.169.254", true},
		{"ECSMetadata", "169.254.170.2", true},
		{"IETFProtocol", "192.0.0.192", true},
		{"TestNet1", "192.0.2.10", true},
		{"TestNet2", "198.51.100.10", true},
		{"TestNet3", "203.0.113.10", true},
		{"Benchmarking", "198.19.0.1", true},
		{"Multicast4", "224.0.0.251", true},
		{"Reserved", "240.0.0.1", true},
		{"Broadcast", "255.255.255.255", true},
		{"Unspecified6", "::", true},
		{"Loopback6", "::1", true},
		{"MappedLoopback", "::ffff:127.0.0.1", true},
		{"MappedPrivate", "::ffff:10.0.0.1", true},
		{"MappedMetadata", "::ffff:169.254.169.254", true},
		{"CompatibleLoopback", "::127.0.0.1", true},
		{"CompatiblePublic", "::8.8.8.8", true},
		{"Translated", "::ffff:0:10.0.0.1", true},
		{"NAT64Private", "64:ff9b::10.0.0.1", true},
		{"NAT64Metadata", "64:ff9b::a9fe:a9fe", true},
		{"NAT64LocalUse", "64:ff9b:1::8.8.8.8", true},
		{"SixToFourPrivate", "2002:c0a8:0101::1", true},
		{"ULA", "fc00::1", true},
		{"ULAfd", "fd12:3456::1", true},
		{"AWSMetadata6", "fd00:ec2::254", true},
		{"LinkLocal6", "fe80::1", true},
		{"LinkLocal6Zoned", "fe80::1%eth0", true},
		{"SiteLocal", "fec0::1", true},
		{"Multicast6", "ff02::1", true},
		{"Discard", "100::1", true},
		{"Teredo", "2001:0:4136:e378::1", true},
		{"Documentation6", "2001:db8::1", true},
		{"Documentation6New", "3fff::1", true},
		{"Public4", "8.8.8.8", false},
		{"Public4Edge172", "172.32.0.1", false},
		{"Public4Edge100", "100.128.0.1", false},
		{"MappedPublic", "::ffff:8.8.8.8", false},
		{"NAT64Public", "64:ff9b::8.8.8.8", false},
		{"SixToFourPublic", "2002:0808:0808::1", false},
		{"Public6", "2606:4700:4700::1111", false},
		{"Public6AWS", "2600:1f18::1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Forbidden(netip.MustParseAddr(tt.ip)); got != tt.want {
				t.Errorf("Forbidden(%s) = %v, want %v", tt.ip, got, tt.want)
			}
		})
	}
	if !Forbidden(netip.Addr{}) {
		t.Error("Forbidden(zero Addr) = false")
	}
}
