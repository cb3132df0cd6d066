package sdk

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The Standard Webhooks specification's published test vector.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorStamp  = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

// otherSecret is a second secret, as during a rotation.
const otherSecret = "whsec_" + "c2Vjb25kLXNlY3JldC1vZi10aGUtcm90YXRpb24hIQ=="

// sign is the sender's side: the webhook-signature of body for each secret.
func sign(t *testing.T, id string, ts int64, body string, secrets ...string) string {
	t.Helper()
	var sigs []string
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			t.Fatal(err)
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "." + body))
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	return h
}

func TestVerifyWebhookVector(t *testing.T) {
	if got := sign(t, vectorID, vectorStamp, vectorBody, vectorSecret); got != vectorSig {
		t.Fatalf("the test's signer gives %q, want %q", got, vectorSig)
	}
	for _, secret := range []string{vectorSecret, strings.TrimPrefix(vectorSecret, "whsec_")} {
		_, err := verifyWebhook(secret, headers(vectorID, vectorStamp, vectorSig), []byte(vectorBody), 0, time.Unix(vectorStamp, 0))
		if err != nil {
			t.Errorf("secret %s: %v", secret, err)
		}
	}
}

func TestVerifyWebhook(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ts := now.Unix()
	body := `{"id":"evt_1","type":"AWARD_GRANTED","timestamp":"2023-11-14T22:13:20.000Z","tenantId":"t1","userId":"u1","sequence":7,"data":{"points":5}}`
	both := sign(t, "msg_1", ts, body, vectorSecret, otherSecret)
	tests := []struct {
		name      string
		secret    string
		header    http.Header
		body      string
		tolerance time.Duration
		want      error
	}{
		{"Valid", vectorSecret, headers("msg_1", ts, sign(t, "msg_1", ts, body, vectorSecret)), body, 0, nil},
		{"RotationOldSecret", vectorSecret, headers("msg_1", ts, both), body, 0, nil},
		{"RotationNewSecret", otherSecret, headers("msg_1", ts, both), body, 0, nil},
		{"OtherSecret", otherSecret, headers("msg_1", ts, sign(t, "msg_1", ts, body, vectorSecret)), body, 0, ErrWebhookSignature},
		{"TamperedBody", vectorSecret, headers("msg_1", ts, both), strings.Replace(body, `"points":5`, `"points":500`, 1), 0, ErrWebhookSignature},
		{"TamperedID", vectorSecret, headers("msg_2", ts, both), body, 0, ErrWebhookSignature},
		{"OtherVersion", vectorSecret, headers("msg_1", ts, strings.Replace(both, "v1,", "v2,", 2)), body, 0, ErrWebhookSignature},
		{"MissingSignature", vectorSecret, headers("msg_1", ts, ""), body, 0, ErrWebhookSignature},
		{"OldTimestamp", vectorSecret, headers("msg_1", ts-301, sign(t, "msg_1", ts-301, body, vectorSecret)), body, 0, ErrWebhookTimestamp},
		{"FutureTimestamp", vectorSecret, headers("msg_1", ts+301, sign(t, "msg_1", ts+301, body, vectorSecret)), body, 0, ErrWebhookTimestamp},
		{"OldTimestampWithinOwnTolerance", vectorSecret, headers("msg_1", ts-3600, sign(t, "msg_1", ts-3600, body, vectorSecret)), body, 2 * time.Hour, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := verifyWebhook(tt.secret, tt.header, []byte(tt.body), tt.tolerance, now)
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("verifyWebhook = %v, want %v", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("verifyWebhook = %v", err)
			}
			if ev.ID != "evt_1" || ev.Type != "AWARD_GRANTED" || ev.UserID != "u1" || ev.Sequence != 7 ||
				!ev.Timestamp.Equal(now) || string(ev.Data) != `{"points":5}` {
				t.Errorf("event %+v", ev)
			}
		})
	}
}

func TestVerifyWebhookNow(t *testing.T) {
	now := time.Now().Unix()
	body := `{"id":"evt_1","type":"webhook.test","timestamp":"2024-01-01T00:00:00Z","tenantId":"t1","sequence":0,"data":{}}`
	if _, err := VerifyWebhook(vectorSecret, headers("msg_1", now, sign(t, "msg_1", now, body, vectorSecret)), []byte(body), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyWebhook("whsec_not base64", headers("msg_1", now, "v1,x"), []byte(body), 0); err == nil {
		t.Error("a malformed secret verified")
	}
}
