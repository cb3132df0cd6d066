package sam_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loyalty-platform/platform/shared/contract/sam"
)

// samconfig reads the settings of one section of samconfig.toml (key =
// value lines; strings unquoted, their \" escapes undone).
func samconfig(t *testing.T, section string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(filepath.Dir(sam.Path()), "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			in = line == "["+section+"]"
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !in || !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v = strings.TrimSpace(v)
		if strings.HasPrefix(v, `"`) {
			v = strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`), `\"`, `"`)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out
}

// TestSamconfig: after the first guided deploy, `sam deploy` asks nothing:
// the default environment names the stack, the capabilities and the
// deployment bucket, confirms nothing, and sets every parameter that has a
// default to that default (a parameter missing there would be sent as
// "use the previous value", which CloudFormation refuses for a parameter
// the stack did not have yet). Parameters without a default (the paging
// key secret) stay out of the file.
func TestSamconfig(t *testing.T) {
	tpl := loadTemplate(t)
	global := samconfig(t, "default.global.parameters")
	deploy := samconfig(t, "default.deploy.parameters")
	for k, want := range map[string]string{"capabilities": "CAPABILITY_IAM", "resolve_s3": "true", "confirm_changeset": "false"} {
		if got := deploy[k]; got != want {
			t.Errorf("deploy %s = %q, want %q", k, got, want)
		}
	}
	if global["stack_name"] == "" {
		t.Error("global stack_name is not set")
	}
	overrides := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+)="([^"]*)"`).FindAllStringSubmatch(deploy["parameter_overrides"], -1) {
		overrides[m[1]] = m[2]
	}
	for name, p := range tpl.Parameters {
		t.Run(name, func(t *testing.T) {
			got, ok := overrides[name]
			switch {
			case !p.HasDefault && ok:
				t.Errorf("parameter_overrides sets %s, which has no default (a secret asked by sam deploy --guided)", name)
			case p.HasDefault && !ok:
				t.Errorf("parameter_overrides lacks %s (default %q)", name, p.Default)
			case ok && got != p.Default:
				t.Errorf("parameter_overrides %s = %q, want the template's default %q", name, got, p.Default)
			}
		})
	}
	for name := range overrides {
		if _, ok := tpl.Parameters[name]; !ok {
			t.Errorf("parameter_overrides sets %s, which the template does not declare", name)
		}
	}
}
