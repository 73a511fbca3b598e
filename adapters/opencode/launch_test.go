package opencode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

func adapter(t *testing.T) *adapters.Adapter {
	t.Helper()
	return adapters.AdapterOf(Harness{})
}

func TestRelaunchArgv(t *testing.T) {
	a := adapter(t)
	tests := []struct {
		argv   []string
		resume bool
		want   []string
		ok     bool
	}{
		{[]string{"opencode"}, true, []string{"opencode", "-s", "ses_x"}, true},
		{[]string{"opencode"}, false, []string{"opencode"}, true},
		{[]string{"opencode", "-c", "--model", "mock/m", "--prompt", "hi", "proj"}, true, []string{"opencode", "-s", "ses_x", "--model", "mock/m", "proj"}, true},
		{[]string{"opencode", "-s", "ses_old", "--fork", "--prompt=hi"}, false, []string{"opencode", "--prompt=hi"}, true},
		{[]string{"npx", "opencode-ai", "--session=ses_old"}, true, []string{"npx", "opencode-ai", "-s", "ses_x"}, true},
		{[]string{"opencode", "run", "hello"}, true, []string{"opencode", "run", "hello"}, false},
		{[]string{"opencode", "--help"}, false, []string{"opencode", "--help"}, false},
	}
	for _, tc := range tests {
		got, ok := a.RelaunchArgv(tc.argv, "ses_x", tc.resume)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("RelaunchArgv(%q, resume %v) = %q, %v; want %q, %v", tc.argv, tc.resume, got, ok, tc.want, tc.ok)
		}
	}
	if _, ok := a.RelaunchArgv([]string{"opencode"}, "", true); ok {
		t.Error("resume without a session id")
	}
}

// TestPlacementThroughConfigFile: the envelope placed at launch ends up
// in a private file named by OPENCODE_CONFIG_CONTENT in front of the
// program; the process table shows the path only, and the command line
// still resolves to OpenCode.
func TestPlacementThroughConfigFile(t *testing.T) {
	a := adapter(t)
	env := `{"payloads":[{"body":"SECRET"}]}`
	for _, argv := range [][]string{{"opencode"}, {"opencode", "-s", "ses_x"}, {"/bin/opencode", "run", "hi"}, {"env", "A=1", "opencode"}} {
		placed, target, ok := a.PlaceAtLaunch(argv, env)
		if !ok || target != contract.ManifestPreSession {
			t.Fatalf("PlaceAtLaunch(%q) = %q, %v, %v", argv, placed, target, ok)
		}
		twice, _, _ := a.PlaceAtLaunch(placed, env)
		dir := t.TempDir()
		var files []string
		out, err := a.ExternalizePlacement(twice, adapters.PlacementFiles{Write: func(text string) (string, error) {
			p := filepath.Join(dir, "payload")
			files = append(files, p)
			return p, os.WriteFile(p, []byte(text), 0o600)
		}})
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(out, " ")
		if strings.Contains(joined, "SECRET") || !strings.Contains(joined, configVar+`={"instructions":["`+files[0]+`"]}`) {
			t.Errorf("externalized %q", out)
		}
		if b, _ := os.ReadFile(files[0]); string(b) != env+"\n\n"+env {
			t.Errorf("file holds %q", b)
		}
		if st := adapters.ArgStart(out); st == 0 || !strings.HasSuffix(out[st-1], "opencode") {
			t.Errorf("the placed command line %q does not resolve to OpenCode (start %d)", out, st)
		}
		if red := adapters.RedactPlacement(placed); strings.Contains(strings.Join(red, " "), "SECRET") {
			t.Errorf("redacted %q", red)
		}
	}
	for _, argv := range [][]string{{"opencode", "serve"}, {"opencode", "--version"}} {
		if _, _, ok := a.PlaceAtLaunch(argv, env); ok {
			t.Errorf("placed into %q", argv)
		}
	}
}

func TestResumedSession(t *testing.T) {
	for _, c := range []struct {
		args   []string
		id     string
		resume bool
	}{
		{[]string{"run", "-s", "ses_1", "hi"}, "ses_1", true},
		{[]string{"run", "--session=ses_2", "hi"}, "ses_2", true},
		{[]string{"-s", "ses_3"}, "ses_3", true},
		{[]string{"run", "-c", "hi"}, "", true},
		{[]string{"--continue"}, "", true},
		{[]string{"run", "-s", "ses_1", "--fork", "hi"}, "", false},
		{[]string{"run", "hi"}, "", false},
		{[]string{"-m", "-c", "hi"}, "", false},
		{[]string{"run", "--", "-c"}, "", false},
		{[]string{"session", "list"}, "", false},
	} {
		argv := append([]string{"opencode"}, c.args...)
		id, ok := Harness{}.ResumedSession(argv, 1)
		if id != c.id || ok != c.resume {
			t.Errorf("%v: %q %v, want %q %v", c.args, id, ok, c.id, c.resume)
		}
	}
}
