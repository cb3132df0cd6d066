package job_test

import (
	"testing"

	"github.com/loyalty-platform/platform/shared/platform/job"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	const op = "0123456789abcdef01234567"
	cases := []struct {
		key        string
		tenant, id string
	}{
		{"jobs/t-1/" + op + "/input.csv", "t-1", op},
		{"jobs/local/" + op + "/start.json", "local", op},
		{"jobs/local/" + op + "/continue-00003-2.json", "local", op},
		{"jobs/local/" + op + "/results.csv", "", ""},
		{"jobs/local/" + op + "/results/part-00001-r1.csv", "", ""},
		{"jobs/local/" + op + "/other.json", "", ""},
		{"jobs/Local/" + op + "/input.csv", "", ""},
		{"jobs/local/not-an-operation/input.csv", "", ""},
		{"jobs/local/input.csv", "", ""},
		{"uploads/local/" + op + "/input.csv", "", ""},
		{"jobs/a b/" + op + "/input.csv", "", ""},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			tenant, id, ok := job.ParseKey(c.key)
			if ok != (c.tenant != "") || tenant != c.tenant || id != c.id {
				t.Fatalf("ParseKey = %q, %q, %v", tenant, id, ok)
			}
		})
	}
	if k := job.InputKey("t-1", op); k != "jobs/t-1/"+op+"/input.csv" {
		t.Fatalf("InputKey = %q", k)
	}
}
