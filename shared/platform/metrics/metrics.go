// Package metrics records business metrics as CloudWatch Embedded Metric
// Format (EMF) lines in the function's log: CloudWatch turns each line into
// metric data points without any extra call, and the local stack prints them
// like any other log line.
package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/loyalty-platform/platform/shared/platform/web"
)

// Namespace is the CloudWatch namespace of every metric the platform records.
const Namespace = "LoyaltyPlatform"

// Metric names. Each is recorded with the tenant as its only dimension.
const (
	UsersCreated     = "UsersCreated"
	Logins           = "Logins"
	LoginsFailed     = "LoginsFailed"
	CheckinsCreated  = "CheckinsCreated"
	ImportRowsOK     = "ImportRowsOk"
	ImportRowsFailed = "ImportRowsFailed"
	AwardsGranted    = "AwardsGranted"
	AwardsRedeemed   = "AwardsRedeemed"
	OrdersCompleted  = "OrdersCompleted"
	MessagesRefused  = "MessagesRefused"
)

// now is the clock of the metric timestamps.
var now = time.Now

// Count records n occurrences of the metric name for the tenant on the
// request's logger (so the line carries the request id). n of 0 or less
// records nothing.
func Count(ctx context.Context, tenantID, name string, n int) {
	if n <= 0 {
		return
	}
	emit(web.Logger(ctx), tenantID, name, n)
}

// emit writes one EMF line: the _aws metadata names the metric, its unit and
// its dimension, and the top-level fields carry the dimension and the value.
func emit(log *slog.Logger, tenantID, name string, n int) {
	meta := map[string]any{
		"Timestamp": now().UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace":  Namespace,
			"Dimensions": [][]string{{"Tenant"}},
			"Metrics":    []map[string]string{{"Name": name, "Unit": "Count"}},
		}},
	}
	log.LogAttrs(context.Background(), slog.LevelInfo, "metric",
		slog.Any("_aws", meta), slog.String("Tenant", tenantID), slog.Int(name, n))
}
