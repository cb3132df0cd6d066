package egress

import (
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/apierr"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name  string
		url   string
		local bool
		want  string // a part of the refusal's message, or "" when the URL is accepted
	}{
		{"HTTPS", "https://hooks.example.com/loyalty?x=1", false, ""},
		{"HTTPSUpperCase", "HTTPS://Hooks.Example.COM/loyalty", false, ""},
		{"AnyPort", "https://hooks.example.com:8443/in", false, ""},
		{"PublicIPv4", "https://8.8.8.8/in", false, ""},
		{"PublicIPv6", "https://[2606:4700:4700::1111]/in", false, ""},
		{"TrailingDotName", "https://hooks.example.com./in", false, ""},
		{"Punycode", "https://xn--bcher-kva.example/in", false, ""},
		{"Underscore", "https://my_hooks.example.com/in", false, ""},

		{"HTTP", "http://hooks.example.com/in", false, "https URL"},
		{"FTP", "ftp://hooks.example.com/in", false, "https URL"},
		{"NoScheme", "//hooks.example.com/in", false, "https URL"},
		{"Relative", "/in", false, "https URL"},
		{"Opaque", "https:hooks.example.com", false, "name a host"},
		{"NoHost", "https:///in", false, "name a host"},
		{"PortOnly", "https://:443/in", false, "name a host"},
		{"UserInfo", "https://user:pw@hooks.example.com/in", false, "user name"},
		{"UserOnly", "https://user@hooks.example.com/in", false, "user name"},
		{"PortTooLarge", "https://hooks.example.com:99999/in", false, "port outside"},
		{"PortZero", "https://hooks.example.com:0/in", false, "port outside"},
		{"EmptyPort", "https://hooks.example.com:/in", false, "empty port"},
		{"Space", "https://hooks example.com/in", false, "not a valid URL"},
		{"NonASCII", "https://bücher.example/in", false, "DNS name"},
		{"BadLabel", "https://-hooks.example.com/in", false, "DNS name"},
		{"EmptyLabel", "https://hooks..example.com/in", false, "DNS name"},
		{"TooLong", "https://hooks.example.com/" + strings.Repeat("a", MaxURLLength), false, "at most"},
		{"Garbage", "::not a url", false, "not a valid URL"},

		{"Loopback", "https://127.0.0.1/in", false, "does not send to"},
		{"LoopbackOther", "https://127.0.0.2:8443/in", false, "does not send to"},
		{"Decimal", "https://2130706433/in", false, "four decimal numbers"},
		{"Octal", "https://0177.0.0.1/in", false, "four decimal numbers"},
		{"Hex", "https://0x7f.1/in", false, "four decimal numbers"},
		{"HexUpper", "https://0X7F000001/in", false, "four decimal numbers"},
		{"Short", "https://127.1/in", false, "four decimal numbers"},
		{"LeadingZeros", "https://010.0.0.1/in", false, "four decimal numbers"},
		{"TrailingDotIP", "https://127.0.0.1./in", false, "four decimal numbers"},
		{"DecimalPublic", "https://134744072/in", false, "four decimal numbers"},
		{"LoopbackIPv6", "https://[::1]/in", false, "does not send to"},
		{"MappedLoopback", "https://[::ffff:127.0.0.1]/in", false, "does not send to"},
		{"MappedLoopbackHex", "https://[::ffff:7f00:1]/in", false, "does not send to"},
		{"MappedPrivate", "https://[::ffff:10.0.0.1]/in", false, "does not send to"},
		{"NAT64Private", "https://[64:ff9b::10.0.0.1]/in", false, "does not send to"},
		{"ULA", "https://[fc00::1]/in", false, "does not send to"},
		{"AWSMetadata6", "https://[fd00:ec2::254]/latest/meta-data/", false, "does not send to"},
		{"Zone", "https://[fe80::1%25eth0]/in", false, "zone"},
		{"Metadata", "https://169.254.169.254/latest/meta-data/", false, "does not send to"},
		{"Private", "https://10.1.2.3/in", false, "does not send to"},
		{"CGNAT", "https://100.64.1.1/in", false, "does not send to"},
		{"Unspecified", "https://0.0.0.0/in", false, "does not send to"},
		{"Broadcast", "https://255.255.255.255/in", false, "does not send to"},
		{"Localhost", "https://localhost/in", false, "(localhost)"},
		{"LocalhostUpper", "https://LOCALHOST./in", false, "(localhost)"},
		{"SubLocalhost", "https://api.localhost/in", false, "(localhost)"},
		{"Internal", "https://metadata.google.internal/computeMetadata/v1/", false, "(internal)"},
		{"EC2Internal", "https://ip-10-0-0-1.ec2.internal/in", false, "(internal)"},
		{"MDNS", "https://printer.local/in", false, "(local)"},
		{"HomeArpa", "https://router.home.arpa/in", false, "(home.arpa)"},
		{"SingleLabel", "https://intranet/in", false, "fully qualified"},

		{"LocalHTTP", "http://hooks.example.com/in", true, ""},
		{"LocalLoopback", "http://127.0.0.1:4000/in", true, ""},
		{"LocalLocalhost", "http://localhost:4000/in", true, ""},
		{"LocalIPv6Loopback", "http://[::1]:4000/in", true, ""},
		{"LocalSingleLabel", "http://receiver:4000/in", true, ""},
		{"LocalFTP", "ftp://localhost/in", true, "http or https"},
		{"LocalDecimal", "http://2130706433/in", true, "four decimal numbers"},
		{"LocalShort", "http://127.1:4000/in", true, "four decimal numbers"},
		{"LocalPrivate", "http://10.0.0.1/in", true, "does not send to"},
		{"LocalMetadata", "http://169.254.169.254/", true, "does not send to"},
		{"LocalUserInfo", "http://a:b@localhost/in", true, "user name"},
		{"LocalPort", "http://localhost:70000/in", true, "port outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckURL(tt.url, tt.local)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q, %v) = %v, want nil", tt.url, tt.local, err)
				}
				return
			}
			e, ok := apierr.As(err)
			if !ok || e.Code != apierr.ValidationFailed || e.Field != "url" || !strings.HasPrefix(e.Message, "url: ") {
				t.Fatalf("CheckURL(%q, %v) = %v, want a VALIDATION_FAILED error of field url", tt.url, tt.local, err)
			}
			if !strings.Contains(e.Message, tt.want) {
				t.Errorf("CheckURL(%q, %v) = %q, want a message saying %q", tt.url, tt.local, e.Message, tt.want)
			}
		})
	}
}
