package metrics

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"
)

func TestEmit(t *testing.T) {
	// Not parallel: it sets the package's clock (now).
	now = func() time.Time { return time.UnixMilli(1700000000000) }
	t.Cleanup(func() { now = time.Now })
	tests := []struct {
		name   string
		metric string
		n      int
		want   bool
	}{
		{name: "Recorded", metric: CheckinsCreated, n: 2, want: true},
		{name: "ZeroRecordsNothing", metric: CheckinsCreated, n: 0, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, nil))
			if tc.n > 0 {
				emit(log, "t-1", tc.metric, tc.n)
			}
			if got := buf.Len() > 0; got != tc.want {
				t.Fatalf("line written = %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			var line struct {
				AWS struct {
					Timestamp         int64
					CloudWatchMetrics []struct {
						Namespace  string
						Dimensions [][]string
						Metrics    []struct{ Name, Unit string }
					}
				} `json:"_aws"`
				Tenant string
				Value  int `json:"CheckinsCreated"`
			}
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("not JSON: %v: %s", err, buf.String())
			}
			cwm := line.AWS.CloudWatchMetrics
			if len(cwm) != 1 || cwm[0].Namespace != Namespace || len(cwm[0].Metrics) != 1 || cwm[0].Metrics[0].Name != tc.metric || cwm[0].Metrics[0].Unit != "Count" {
				t.Errorf("metadata = %+v", line.AWS)
			}
			if got, want := cwm[0].Dimensions, [][]string{{"Tenant"}}; len(got) != 1 || len(got[0]) != 1 || got[0][0] != want[0][0] {
				t.Errorf("dimensions = %v, want %v", got, want)
			}
			if got, want := line.AWS.Timestamp, int64(1700000000000); got != want {
				t.Errorf("timestamp = %d, want %d", got, want)
			}
			if line.Tenant != "t-1" || line.Value != tc.n {
				t.Errorf("tenant, value = %q, %d; want t-1, %d", line.Tenant, line.Value, tc.n)
			}
		})
	}
}
