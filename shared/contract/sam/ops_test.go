package sam_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
	"github.com/loyalty-platform/platform/shared/platform/metrics"
)

// The operations checks below read the template as it is, so that a
// function, table or queue added later without its log group, alarms or
// protection fails here rather than in production.

func loadTemplate(t *testing.T) *sam.Template {
	t.Helper()
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("load template: %v", err)
	}
	return tpl
}

// idsOfType returns the logical ids of the resources of one type, sorted.
func idsOfType(tpl *sam.Template, typ string) []string {
	var ids []string
	for id, r := range tpl.Resources {
		if r.Type == typ {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func ref(id string) map[string]any   { return map[string]any{"Ref": id} }
func sub(s string) map[string]any    { return map[string]any{"Fn::Sub": s} }
func getAtt(s string) map[string]any { return map[string]any{"Fn::GetAtt": s} }
func path(v any, keys ...string) any { // path(m, "A", "B") is m["A"]["B"]
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// alarmsOn returns the alarms on one metric (namespace and name) whose
// dimension dim is value.
func alarmsOn(tpl *sam.Template, namespace, metric, dim string, value any) []string {
	var out []string
	for _, id := range idsOfType(tpl, "AWS::CloudWatch::Alarm") {
		p := tpl.Resources[id].Properties
		if p["Namespace"] != namespace || p["MetricName"] != metric {
			continue
		}
		dims, _ := p["Dimensions"].([]any)
		for _, d := range dims {
			if dm, _ := d.(map[string]any); dm["Name"] == dim && reflect.DeepEqual(dm["Value"], value) {
				out = append(out, id)
			}
		}
	}
	return out
}

// alarmExpressions returns the metric math and Metrics Insights
// expressions of every alarm that has them, by alarm.
func alarmExpressions(tpl *sam.Template) map[string]string {
	out := map[string]string{}
	for _, id := range idsOfType(tpl, "AWS::CloudWatch::Alarm") {
		metrics, _ := tpl.Resources[id].Properties["Metrics"].([]any)
		for _, m := range metrics {
			e := path(m, "Expression")
			if s, ok := path(e, "Fn::Sub").(string); ok {
				e = s
			}
			if s, ok := e.(string); ok {
				out[id] += s + "\n"
			}
		}
	}
	return out
}

// TestFunctionLogGroups: every function has an explicit name
// (<stack>-<name>), logs to its own log group /aws/lambda/<that name>,
// created by the template with the LogRetentionInDays retention.
func TestFunctionLogGroups(t *testing.T) {
	tpl := loadTemplate(t)
	if len(tpl.Functions) == 0 {
		t.Fatal("no functions")
	}
	for _, f := range tpl.Functions {
		t.Run(f.LogicalID, func(t *testing.T) {
			p := tpl.Resources[f.LogicalID].Properties
			if got, want := p["FunctionName"], sub("${AWS::StackName}-"+f.Name); !reflect.DeepEqual(got, want) {
				t.Errorf("FunctionName = %v, want %v", got, want)
			}
			group := f.LogicalID + "LogGroup"
			if got, want := path(p, "LoggingConfig", "LogGroup"), ref(group); !reflect.DeepEqual(got, want) {
				t.Errorf("LoggingConfig.LogGroup = %v, want %v", got, want)
			}
			lg, ok := tpl.Resources[group]
			if !ok || lg.Type != "AWS::Logs::LogGroup" {
				t.Fatalf("no AWS::Logs::LogGroup %s", group)
			}
			if got, want := lg.Properties["LogGroupName"], sub("/aws/lambda/${AWS::StackName}-"+f.Name); !reflect.DeepEqual(got, want) {
				t.Errorf("LogGroupName = %v, want %v", got, want)
			}
			if got, want := lg.Properties["RetentionInDays"], ref("LogRetentionInDays"); !reflect.DeepEqual(got, want) {
				t.Errorf("RetentionInDays = %v, want %v", got, want)
			}
		})
	}
	if p, ok := tpl.Parameters["LogRetentionInDays"]; !ok || p.Default != "30" {
		t.Errorf("parameter LogRetentionInDays = %+v, want a default of 30", p)
	}
}

// TestFunctionAlarms: every function has an alarm on its Errors and one on
// its Throttles.
func TestFunctionAlarms(t *testing.T) {
	tpl := loadTemplate(t)
	for _, f := range tpl.Functions {
		for _, metric := range []string{"Errors", "Throttles"} {
			t.Run(f.LogicalID+"/"+metric, func(t *testing.T) {
				if got := alarmsOn(tpl, "AWS/Lambda", metric, "FunctionName", ref(f.LogicalID)); len(got) != 1 {
					t.Errorf("alarms on AWS/Lambda %s of %s = %v, want one", metric, f.LogicalID, got)
				}
			})
		}
	}
}

// TestAlarmActions: every alarm notifies AlarmTopicArn, and only when it is
// set (the HasAlarmTopic condition).
func TestAlarmActions(t *testing.T) {
	tpl := loadTemplate(t)
	want := map[string]any{"Fn::If": []any{"HasAlarmTopic", []any{ref("AlarmTopicArn")}, ref("AWS::NoValue")}}
	cond := map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{ref("AlarmTopicArn"), ""}}}}
	if got := tpl.Conditions["HasAlarmTopic"]; !reflect.DeepEqual(got, cond) {
		t.Errorf("condition HasAlarmTopic = %v, want %v", got, cond)
	}
	if p := tpl.Parameters["AlarmTopicArn"]; p.Type != "String" || p.Default != "" {
		t.Errorf("parameter AlarmTopicArn = %+v, want an optional String", p)
	}
	alarms := idsOfType(tpl, "AWS::CloudWatch::Alarm")
	if len(alarms) == 0 {
		t.Fatal("no alarms")
	}
	for _, id := range alarms {
		t.Run(id, func(t *testing.T) {
			p := tpl.Resources[id].Properties
			for _, k := range []string{"AlarmActions", "OKActions"} {
				if !reflect.DeepEqual(p[k], want) {
					t.Errorf("%s = %v, want %v", k, p[k], want)
				}
			}
			if p["TreatMissingData"] != "notBreaching" {
				t.Errorf("TreatMissingData = %v, want notBreaching (no traffic is no alarm)", p["TreatMissingData"])
			}
		})
	}
}

// TestTables: every table is retained, protected from deletion by the
// TableDeletionProtection parameter (on by default), has point-in-time
// recovery, and an alarm on its throttled requests.
func TestTables(t *testing.T) {
	tpl := loadTemplate(t)
	exprs := alarmExpressions(tpl)
	for _, id := range idsOfType(tpl, "AWS::DynamoDB::Table") {
		t.Run(id, func(t *testing.T) {
			r := tpl.Resources[id]
			if r.DeletionPolicy != "Retain" || r.UpdateReplacePolicy != "Retain" {
				t.Errorf("DeletionPolicy, UpdateReplacePolicy = %q, %q; want Retain, Retain", r.DeletionPolicy, r.UpdateReplacePolicy)
			}
			if got, want := r.Properties["DeletionProtectionEnabled"], ref("TableDeletionProtection"); !reflect.DeepEqual(got, want) {
				t.Errorf("DeletionProtectionEnabled = %v, want %v", got, want)
			}
			if got := path(r.Properties, "PointInTimeRecoverySpecification", "PointInTimeRecoveryEnabled"); got != "true" {
				t.Errorf("PointInTimeRecoveryEnabled = %v, want true", got)
			}
			var found []string
			for alarm, e := range exprs {
				if strings.Contains(e, "ThrottledRequests") && strings.Contains(e, "TableName = '${"+id+"}'") {
					found = append(found, alarm)
				}
			}
			if len(found) != 1 {
				t.Errorf("alarms on the throttled requests of %s = %v, want one", id, found)
			}
		})
	}
	if p := tpl.Parameters["TableDeletionProtection"]; p.Default != "true" {
		t.Errorf("parameter TableDeletionProtection = %+v, want a default of true", p)
	}
}

// TestQueues: every queue keeps its messages 14 days, is retained, has an
// alarm on its depth; a queue a function receives from (an event source
// mapping, or a function's SQS event) moves the messages it received too
// often to a dead-letter queue of the template: FailedQueueMaxReceiveCount
// times for a failure queue (an event source mapping), a count of its own
// for a queue of the platform's work (the webhook deliveries, whose
// retries count receives).
func TestQueues(t *testing.T) {
	tpl := loadTemplate(t)
	consumed := map[string]bool{}
	for _, id := range idsOfType(tpl, "AWS::Lambda::EventSourceMapping") {
		if s, ok := path(tpl.Resources[id].Properties, "EventSourceArn", "Fn::GetAtt").(string); ok {
			if q, attr, _ := strings.Cut(s, "."); attr == "Arn" {
				consumed[q] = true
			}
		}
	}
	ownCount := map[string]bool{} // consumed by a function's SQS event
	for _, id := range idsOfType(tpl, "AWS::Serverless::Function") {
		events, _ := tpl.Resources[id].Properties["Events"].(map[string]any)
		for _, e := range events {
			ev, _ := e.(map[string]any)
			if ev["Type"] != "SQS" {
				continue
			}
			if s, ok := path(ev, "Properties", "Queue", "Fn::GetAtt").(string); ok {
				if q, attr, _ := strings.Cut(s, "."); attr == "Arn" {
					consumed[q], ownCount[q] = true, true
				}
			}
		}
	}
	queues := idsOfType(tpl, "AWS::SQS::Queue")
	if len(consumed) == 0 || len(queues) == 0 {
		t.Fatalf("queues %v, consumed %v: want both", queues, consumed)
	}
	for _, id := range queues {
		t.Run(id, func(t *testing.T) {
			r := tpl.Resources[id]
			if r.DeletionPolicy != "Retain" || r.UpdateReplacePolicy != "Retain" {
				t.Errorf("DeletionPolicy, UpdateReplacePolicy = %q, %q; want Retain, Retain", r.DeletionPolicy, r.UpdateReplacePolicy)
			}
			if got := r.Properties["MessageRetentionPeriod"]; got != "1209600" {
				t.Errorf("MessageRetentionPeriod = %v, want 1209600 (14 days)", got)
			}
			if got := alarmsOn(tpl, "AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", getAtt(id+".QueueName")); len(got) != 1 {
				t.Errorf("depth alarms = %v, want one", got)
			}
			redrive, _ := r.Properties["RedrivePolicy"].(map[string]any)
			if !consumed[id] {
				return
			}
			dlq, _ := path(redrive, "deadLetterTargetArn", "Fn::GetAtt").(string)
			dlqID, _, _ := strings.Cut(dlq, ".")
			if tpl.Resources[dlqID].Type != "AWS::SQS::Queue" || dlqID == id || consumed[dlqID] {
				t.Errorf("RedrivePolicy.deadLetterTargetArn = %v, want the Arn of another queue of the template that nothing consumes", redrive["deadLetterTargetArn"])
			}
			if ownCount[id] {
				if n, err := strconv.Atoi(fmt.Sprint(redrive["maxReceiveCount"])); err != nil || n < 10 {
					t.Errorf("RedrivePolicy.maxReceiveCount = %v, want a count of at least 10", redrive["maxReceiveCount"])
				}
				return
			}
			if got, want := redrive["maxReceiveCount"], ref("FailedQueueMaxReceiveCount"); !reflect.DeepEqual(got, want) {
				t.Errorf("RedrivePolicy.maxReceiveCount = %v, want %v", got, want)
			}
		})
	}
}

// TestAPIOperations: the stage writes JSON access logs (the fields an
// operator looks for) to a log group of the template with the log
// retention, and has alarms on its 5xx rate and its p99 latency.
func TestAPIOperations(t *testing.T) {
	tpl := loadTemplate(t)
	for _, api := range tpl.APIs {
		t.Run(api.LogicalID, func(t *testing.T) {
			p := tpl.Resources[api.LogicalID].Properties
			dest, _ := path(p, "AccessLogSettings", "DestinationArn", "Fn::GetAtt").(string)
			group, _, _ := strings.Cut(dest, ".")
			if lg := tpl.Resources[group]; lg.Type != "AWS::Logs::LogGroup" || !reflect.DeepEqual(lg.Properties["RetentionInDays"], ref("LogRetentionInDays")) {
				t.Errorf("access log group %q = %+v, want a log group with RetentionInDays !Ref LogRetentionInDays", group, lg)
			}
			format, _ := path(p, "AccessLogSettings", "Format").(string)
			var fields map[string]string
			if err := json.Unmarshal([]byte(format), &fields); err != nil {
				t.Fatalf("access log format is not a JSON object: %v: %s", err, format)
			}
			values := map[string]bool{}
			for _, v := range fields {
				values[v] = true
			}
			for _, v := range []string{"$context.requestId", "$context.identity.sourceIp", "$context.routeKey", "$context.status", "$context.responseLatency", "$context.integrationErrorMessage"} {
				if !values[v] {
					t.Errorf("access log format lacks %s", v)
				}
			}
			if got := alarmsOn(tpl, "AWS/ApiGateway", "Latency", "ApiId", ref(api.LogicalID)); len(got) != 1 || tpl.Resources[got[0]].Properties["ExtendedStatistic"] != "p99" {
				t.Errorf("p99 latency alarms = %v, want one", got)
			}
			var rate []string
			for _, id := range idsOfType(tpl, "AWS::CloudWatch::Alarm") {
				metrics, _ := tpl.Resources[id].Properties["Metrics"].([]any)
				var has5xx, hasCount bool
				for _, m := range metrics {
					ms := path(m, "MetricStat", "Metric")
					if path(ms, "Namespace") != "AWS/ApiGateway" || !reflect.DeepEqual(path(path(ms, "Dimensions").([]any)[0], "Value"), ref(api.LogicalID)) {
						continue
					}
					has5xx = has5xx || path(ms, "MetricName") == "5xx"
					hasCount = hasCount || path(ms, "MetricName") == "Count"
				}
				if has5xx && hasCount {
					rate = append(rate, id)
				}
			}
			if len(rate) != 1 {
				t.Errorf("5xx rate alarms = %v, want one", rate)
			}
		})
	}
}

// TestMessagesRefusedAlarm: the business metric of refused messages, which
// shared/platform/metrics writes with the tenant as dimension, has an alarm over all
// tenants.
func TestMessagesRefusedAlarm(t *testing.T) {
	tpl := loadTemplate(t)
	want := "FROM SCHEMA(" + metrics.Namespace + ", Tenant)"
	var found []string
	for id, e := range alarmExpressions(tpl) {
		if strings.Contains(e, "SUM("+metrics.MessagesRefused+")") && strings.Contains(e, want) {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		t.Errorf("alarms on %s %s = %v, want one", want, metrics.MessagesRefused, found)
	}
}
