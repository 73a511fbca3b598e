package opencode

import (
	"errors"
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
// in a private file named in the instructions of the harness's
// OPENCODE_CONFIG_CONTENT, set in its environment next to the user's own
// configuration; the command line shows neither, and still resolves to
// OpenCode.
func TestPlacementThroughConfigFile(t *testing.T) {
	a := adapter(t)
	env := `{"payloads":[{"body":"SECRET"}]}`
	user := configVar + `={"model":"p/m","instructions":["/u.md"]}`
	for _, argv := range [][]string{{"opencode"}, {"opencode", "-s", "ses_x"}, {"/bin/opencode", "run", "hi"}, {"env", "A=1", "opencode"}} {
		placed, target, ok := a.PlaceAtLaunch(argv, env)
		if !ok || target != contract.ManifestPreSession {
			t.Fatalf("PlaceAtLaunch(%q) = %q, %v, %v", argv, placed, target, ok)
		}
		twice, _, _ := a.PlaceAtLaunch(placed, env)
		dir := t.TempDir()
		var files, set []string
		out, err := a.ExternalizePlacement(twice, adapters.PlacementFiles{
			Env: []string{"HOME=/h", user},
			Write: func(text string) (string, error) {
				p := filepath.Join(dir, "payload")
				files = append(files, p)
				return p, os.WriteFile(p, []byte(text), 0o600)
			},
			Setenv: func(name, value string) { set = append(set, name+"="+value) },
		})
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(out, " ")
		if strings.Contains(joined, "SECRET") || strings.Contains(joined, configVar) || strings.Contains(joined, payloadVar) {
			t.Errorf("externalized %q", out)
		}
		want := configVar + `={"instructions":["/u.md","` + files[0] + `"],"model":"p/m"}`
		if len(set) != 1 || set[0] != want {
			t.Errorf("environment set %q, want %q", set, want)
		}
		if argv[0] == "env" && !slices.Equal(out, argv) {
			t.Errorf("the user's own env assignments: %q, want %q", out, argv)
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
		// Without Setenv the value takes the assignment's place.
		out, err = a.ExternalizePlacement(twice, adapters.PlacementFiles{Write: func(string) (string, error) { return "/f", nil }})
		if err != nil || !slices.Contains(out, configVar+`={"instructions":["/f"]}`) {
			t.Errorf("without Setenv: %q, %v", out, err)
		}
	}
	for _, argv := range [][]string{{"opencode", "serve"}, {"opencode", "--version"}} {
		if _, _, ok := a.PlaceAtLaunch(argv, env); ok {
			t.Errorf("placed into %q", argv)
		}
	}
	// The command line's own assignment (it overrides the environment)
	// gets the file.
	placed, _, _ := a.PlaceAtLaunch([]string{"env", configVar + `={"model":"p/m"}`, "opencode"}, env)
	out, err := a.ExternalizePlacement(placed, adapters.PlacementFiles{
		Env:    []string{configVar + `={"model":"other"}`},
		Write:  func(string) (string, error) { return "/f", nil },
		Setenv: func(string, string) { t.Error("set the environment") },
	})
	if want := []string{"env", configVar + `={"instructions":["/f"],"model":"p/m"}`, "opencode"}; err != nil || !slices.Equal(out, want) {
		t.Errorf("own assignment: %q, %v; want %q", out, err, want)
	}
	// A user's value lifeloop cannot add to is left alone: no file, an
	// error saying why.
	placed, _, _ = a.PlaceAtLaunch([]string{"opencode"}, env)
	_, err = a.ExternalizePlacement(placed, adapters.PlacementFiles{
		Env:    []string{configVar + "=not json"},
		Write:  func(string) (string, error) { t.Error("wrote a file"); return "", nil },
		Setenv: func(string, string) { t.Error("set the environment") },
	})
	if !errors.Is(err, errUserConfig) {
		t.Errorf("invalid user config: %v", err)
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
