package sam_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// alarmsLine is the README's count of the alarms ("What it costs at
// rest"): the total, then the functions, tables, queues, API alarms and
// business-metric alarms it is made of.
var alarmsLine = regexp.MustCompile("CloudWatch alarms: ([0-9]+) \\(two per function, ([0-9]+)\\s+functions;\\s+([0-9]+)\\s+tables,\\s+([0-9]+)\\s+queues,\\s+([0-9]+)\\s+on\\s+the\\s+API,\\s+([0-9]+)\\s+on\\s+business\\s+metrics\\s+\\(`MessagesRefused`,\\s+`WebhooksExhausted`\\)\\)")

// TestReadmeAlarmCount: the number of alarms the README prices is the
// template's, and so are the numbers it is made of.
func TestReadmeAlarmCount(t *testing.T) {
	tpl := loadTemplate(t)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(sam.Path()), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := alarmsLine.FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("README.md has no line matching %s", alarmsLine)
	}
	n := make([]int, len(m))
	for i := 1; i < len(m); i++ {
		n[i], _ = strconv.Atoi(m[i])
	}
	total, functions, tables, queues, api, business := n[1], n[2], n[3], n[4], n[5], n[6]
	alarms := idsOfType(tpl, "AWS::CloudWatch::Alarm")
	sqs := 0
	for _, id := range alarms {
		if tpl.Resources[id].Properties["Namespace"] == "AWS/SQS" {
			sqs++
		}
	}
	for _, c := range []struct {
		name       string
		readme, is int
	}{
		{"alarms", total, len(alarms)},
		{"functions", functions, len(tpl.Functions)},
		{"tables", tables, len(tpl.Tables)},
		{"queue alarms", queues, sqs},
		{"the parts' sum", 2*functions + tables + queues + api + business, len(alarms)},
	} {
		if c.readme != c.is {
			t.Errorf("README.md counts %d %s, the template has %d", c.readme, c.name, c.is)
		}
	}
}
