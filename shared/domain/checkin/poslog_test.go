package checkin_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/domain/checkin"
	ts "github.com/loyalty-platform/platform/shared/testkit"
)

// TestPOSFailureLogsNoToken checks that a failed POS notification logs the
// endpoint's scheme and host only: its path and query may hold a token.
func TestPOSFailureLogsNoToken(t *testing.T) {
	// Not parallel: it captures the default logger (slog.SetDefault),
	// which every new harness replaces.
	// A port nobody listens on: the connection is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	var logs ts.LogBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	for _, tc := range []struct {
		name     string
		endpoint string
		want     string
	}{
		{"Unreachable", "http://" + addr + "/hook/SECRETPATH?token=SECRETTOKEN", "http://" + addr},
		{"InvalidURL", "http://" + addr + "/%zz?token=SECRETTOKEN", "invalid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := len(logs.String())
			(&checkin.POSNotifier{}).Send(context.Background(), tc.endpoint, "s", checkin.Notification{Event: checkin.EventCheckin})
			got := logs.String()[start:]
			if !strings.Contains(got, "pos notification failed") || !strings.Contains(got, tc.want) {
				t.Errorf("log = %s, want a failure naming %s", got, tc.want)
			}
			if strings.Contains(got, "SECRET") {
				t.Errorf("log leaks the endpoint's path or query: %s", got)
			}
		})
	}
}
