package sam_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/loyalty-platform/platform/shared/sam"
)

// TestTemplateLint runs cfn-lint (installed on the machine image) over
// template.yaml. Outside CI a machine without cfn-lint skips it.
func TestTemplateLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("cfn-lint is not installed: %v", err)
		}
		t.Skip("cfn-lint is not installed")
	}
	out, err := exec.Command(bin, sam.Path()).CombinedOutput()
	if err != nil {
		t.Fatalf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

func TestParseTemplate(t *testing.T) {
	tpl, err := sam.Load(sam.Path())
	if err != nil {
		t.Fatalf("load template: %v", err)
	}
	users, ok := tpl.Function("users")
	if !ok {
		t.Fatal("no users function")
	}
	if len(users.Routes) == 0 {
		t.Fatal("users function has no routes")
	}
	tables := map[string]sam.Table{}
	for _, tb := range tpl.Tables {
		tables[tb.LogicalID] = tb
	}
	tests := []struct {
		table   string
		ttl     string
		indexes int
	}{
		{"TenantsTable", "", 0},
		{"UsersTable", "expiresAt", 3},
		{"SessionsTable", "expiresAt", 1},
	}
	for _, tc := range tests {
		t.Run(tc.table, func(t *testing.T) {
			tb, ok := tables[tc.table]
			if !ok {
				t.Fatalf("table %s missing", tc.table)
			}
			if got, want := tb.HashKey+"/"+tb.RangeKey, "pk/sk"; got != want {
				t.Errorf("key = %s, want %s", got, want)
			}
			if tb.TTL != tc.ttl {
				t.Errorf("ttl = %q, want %q", tb.TTL, tc.ttl)
			}
			if len(tb.Indexes) != tc.indexes {
				t.Errorf("indexes = %d, want %d", len(tb.Indexes), tc.indexes)
			}
		})
	}
}

func TestParseShortFormTags(t *testing.T) {
	tpl, err := sam.Parse([]byte(`
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Events:
        Up:
          Type: S3
          Properties:
            Bucket: !Ref Files
            Events: s3:ObjectCreated:*
            Filter:
              S3Key:
                Rules:
                  - Name: prefix
                    Value: jobs/
        Daily:
          Type: Schedule
          Properties:
            Schedule: rate(1 day)
`))
	if err != nil {
		t.Fatal(err)
	}
	f := tpl.Functions[0]
	if got, want := f.Name, "fn"; got != want {
		t.Errorf("name = %q, want %q", got, want)
	}
	if len(f.S3Events) != 1 || f.S3Events[0].Bucket != "Files" || f.S3Events[0].Prefix != "jobs/" {
		t.Errorf("s3 events = %+v", f.S3Events)
	}
	if len(f.Schedules) != 1 || f.Schedules[0] != "rate(1 day)" {
		t.Errorf("schedules = %v", f.Schedules)
	}
}
