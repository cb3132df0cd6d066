package stdwebhook

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks specification's published test vector (the
// reference libraries' TestWebhookSign).
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorStamp  = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignVector(t *testing.T) {
	for _, secret := range []string{vectorSecret, strings.TrimPrefix(vectorSecret, SecretPrefix)} {
		t.Run(secret, func(t *testing.T) {
			got, err := Sign([]string{secret}, vectorID, time.Unix(vectorStamp, 0), []byte(vectorBody))
			if err != nil {
				t.Fatal(err)
			}
			if got != vectorSig {
				t.Errorf("Sign = %q, want %q", got, vectorSig)
			}
		})
	}
}

func TestVerifyVector(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderID, vectorID)
	h.Set(HeaderTimestamp, "1614265330")
	h.Set(HeaderSignature, vectorSig)
	if err := Verify(vectorSecret, h, []byte(vectorBody), time.Unix(vectorStamp+10, 0), 0); err != nil {
		t.Fatal(err)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	other, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"evt_1","type":"award.granted"}`)
	signed := func(secrets []string, at time.Time) http.Header {
		h, err := Headers(secrets, "evt_1", at, body)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	tests := []struct {
		name      string
		secret    string
		header    http.Header
		body      string
		tolerance time.Duration
		want      error
	}{
		{"Valid", vectorSecret, signed([]string{vectorSecret}, now), string(body), 0, nil},
		{"RotationOldSecret", vectorSecret, signed([]string{vectorSecret, other}, now), string(body), 0, nil},
		{"RotationNewSecret", other, signed([]string{vectorSecret, other}, now), string(body), 0, nil},
		{"OtherSecret", other, signed([]string{vectorSecret}, now), string(body), 0, ErrInvalidSignature},
		{"TamperedBody", vectorSecret, signed([]string{vectorSecret}, now), `{"id":"evt_1","type":"award.redeemed"}`, 0, ErrInvalidSignature},
		{"TamperedID", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderID, "evt_2"), string(body), 0, ErrInvalidSignature},
		{"TamperedTimestamp", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderTimestamp, "1700000001"), string(body), 0, ErrInvalidSignature},
		{"OtherVersionIgnored", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderSignature,
			"v1a,"+strings.TrimPrefix(signed([]string{vectorSecret}, now).Get(HeaderSignature), "v1,")), string(body), 0, ErrInvalidSignature},
		{"GarbageBeforeTheValidOne", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderSignature,
			"v1,!!! nocomma v1,AAAA "+signed([]string{vectorSecret}, now).Get(HeaderSignature)), string(body), 0, nil},
		{"MissingID", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderID, ""), string(body), 0, ErrInvalidSignature},
		{"MissingSignature", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderSignature, ""), string(body), 0, ErrInvalidSignature},
		{"MissingTimestamp", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderTimestamp, ""), string(body), 0, ErrInvalidSignature},
		{"TimestampNotANumber", vectorSecret, with(signed([]string{vectorSecret}, now), HeaderTimestamp, "2023-11-14T22:13:20Z"), string(body), 0, ErrTimestamp},
		{"AtTheToleranceInThePast", vectorSecret, signed([]string{vectorSecret}, now.Add(-DefaultTolerance)), string(body), 0, nil},
		{"PastTheTolerance", vectorSecret, signed([]string{vectorSecret}, now.Add(-DefaultTolerance-time.Second)), string(body), 0, ErrTimestamp},
		{"AtTheToleranceInTheFuture", vectorSecret, signed([]string{vectorSecret}, now.Add(DefaultTolerance)), string(body), 0, nil},
		{"FutureBeyondTheTolerance", vectorSecret, signed([]string{vectorSecret}, now.Add(DefaultTolerance+time.Second)), string(body), 0, ErrTimestamp},
		{"OwnTolerance", vectorSecret, signed([]string{vectorSecret}, now.Add(-time.Hour)), string(body), 2 * time.Hour, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.secret, tt.header, []byte(tt.body), now, tt.tolerance)
			if tt.want == nil && err != nil {
				t.Fatalf("Verify = %v, want nil", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

// with returns a copy of h with header name set to value (removed when
// value is empty).
func with(h http.Header, name, value string) http.Header {
	h = h.Clone()
	if value == "" {
		h.Del(name)
	} else {
		h.Set(name, value)
	}
	return h
}

func TestHeaders(t *testing.T) {
	h, err := Headers([]string{vectorSecret, vectorSecret}, vectorID, time.Unix(vectorStamp, 0), []byte(vectorBody))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		HeaderID:        vectorID,
		HeaderTimestamp: "1614265330",
		HeaderSignature: vectorSig + " " + vectorSig,
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("headers %v, want only %d", h, len(want))
	}
}

func TestNewSecret(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || !strings.HasPrefix(a, SecretPrefix) {
		t.Errorf("NewSecret = %q, %q: want two different whsec_ secrets", a, b)
	}
	key, err := ParseSecret(a)
	if err != nil || len(key) != 32 {
		t.Errorf("ParseSecret(%q) = %d bytes, %v; want 32", a, len(key), err)
	}
}

func TestParseSecretRefuses(t *testing.T) {
	tests := []struct{ name, secret string }{
		{"Empty", ""},
		{"PrefixOnly", SecretPrefix},
		{"NotBase64", "whsec_not base64!"},
		{"URLAlphabet", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLa-_"},
		{"TooShort", "whsec_" + strings.Repeat("A", 28)},                         // 21 bytes
		{"TooLong", "whsec_" + strings.Repeat("A", 88) + "AAAA"},                 // 69 bytes
		{"UnpaddedLength", "whsec_" + strings.TrimSuffix(vectorSecret[6:], "w")}, // not a multiple of 4
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseSecret(tt.secret); err == nil {
				t.Errorf("ParseSecret(%q) = nil error", tt.secret)
			}
		})
	}
}

func TestSignRefuses(t *testing.T) {
	tests := []struct {
		name    string
		secrets []string
		id      string
	}{
		{"NoSecret", nil, vectorID},
		{"BadSecret", []string{vectorSecret, "whsec_short"}, vectorID},
		{"EmptyID", []string{vectorSecret}, ""},
		{"IDWithSpace", []string{vectorSecret}, "msg 1"},
		{"IDWithNewline", []string{vectorSecret}, "msg\r\nx-injected: 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Sign(tt.secrets, tt.id, time.Unix(vectorStamp, 0), nil); err == nil {
				t.Error("Sign = nil error")
			}
		})
	}
}
