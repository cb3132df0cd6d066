package apigw

import "testing"

// TestHostOnly checks the domain name given to the adapter for each shape
// of Host header, IPv6 literals included.
func TestHostOnly(t *testing.T) {
	tests := []struct{ name, host, want string }{
		{"Empty", "", "localhost"},
		{"NameAndPort", "localhost:3000", "localhost"},
		{"Name", "api.example.com", "api.example.com"},
		{"IPv4AndPort", "127.0.0.1:3000", "127.0.0.1"},
		{"IPv6AndPort", "[::1]:3000", "[::1]"},
		{"IPv6", "[::1]", "[::1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := hostOnly(tc.host); got != tc.want {
				t.Errorf("hostOnly(%q) = %q, want %q", tc.host, got, tc.want)
			}
		})
	}
}
