package copilot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

func TestPinSession(t *testing.T) {
	h := Harness{}
	argv := []string{"lifeloop", "copilot", "-p", "hi"}
	got, id := h.PinSession(argv, 2)
	if !adapters.IsUUID(id) || !slices.Equal(got, []string{"lifeloop", "copilot", "--session-id", id, "-p", "hi"}) {
		t.Errorf("PinSession = %q, %q", got, id)
	}
	for _, a := range [][]string{
		{"lifeloop", "copilot", "--resume=abc1234"},
		{"lifeloop", "copilot", "--continue"},
		{"lifeloop", "copilot", "--session-id", "11111111-2222-4333-8444-555555555555"},
		{"lifeloop", "copilot", "--version"},
		{"lifeloop", "copilot", "plugin", "list"},
	} {
		if got, id := h.PinSession(a, 2); id != "" || !slices.Equal(got, a) {
			t.Errorf("PinSession(%q) = %q, %q; want unchanged", a, got, id)
		}
	}
}

func TestResumedSession(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	for _, tt := range []struct {
		args []string
		id   string
		ok   bool
	}{
		{[]string{"--resume=" + id}, id, true},
		{[]string{"--resume", id, "-p", "x"}, id, true},
		{[]string{"--continue"}, "", true},
		{[]string{"--resume=abc1234"}, "", false},
		{[]string{"--resume"}, "", false},
		{[]string{"-p", "x"}, "", false},
	} {
		got, ok := Harness{}.ResumedSession(append([]string{"copilot"}, tt.args...), 1)
		if got != tt.id || ok != tt.ok {
			t.Errorf("ResumedSession(%q) = %q, %v; want %q, %v", tt.args, got, ok, tt.id, tt.ok)
		}
	}
}

func TestRelaunchArgv(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	for _, tt := range []struct {
		args   []string
		resume bool
		want   []string
	}{
		{[]string{"--allow-all-tools", "-i", "first"}, true, []string{"--resume=" + id, "--allow-all-tools"}},
		{[]string{"--allow-all-tools", "-i", "first"}, false, []string{"--allow-all-tools", "-i", "first"}},
		{[]string{"-p", "do it", "--session-id", "x"}, true, []string{"--resume=" + id, "-p", "do it"}},
		{[]string{"--resume=old", "--model", "m"}, false, []string{"--model", "m"}},
	} {
		got, ok := Harness{}.RelaunchArgv(append([]string{"copilot"}, tt.args...), 1, id, tt.resume)
		if !ok || !slices.Equal(got, append([]string{"copilot"}, tt.want...)) {
			t.Errorf("RelaunchArgv(%q, resume %v) = %q, %v; want %q", tt.args, tt.resume, got, ok, tt.want)
		}
	}
	if _, ok := (Harness{}).RelaunchArgv([]string{"copilot", "--version"}, 1, id, false); ok {
		t.Error("RelaunchArgv of --version")
	}
}

// TestPlacementReachesAnInstructionsFolder: the envelope leaves argv for
// a *.instructions.md file of a folder of its own, named after the user's
// folders in COPILOT_CUSTOM_INSTRUCTIONS_DIRS.
func TestPlacementReachesAnInstructionsFolder(t *testing.T) {
	h := Harness{}
	const body = `{"payloads":[{"body":"MARKER"}]}`
	argv, class, ok := h.PlaceAtLaunch([]string{"copilot", "--allow-all-tools"}, 1, body)
	if !ok || class != contract.ManifestPreSession || argv[0] != "env" {
		t.Fatalf("PlaceAtLaunch = %q, %s, %v", argv, class, ok)
	}
	session := t.TempDir()
	var written, setTo string
	files := adapters.PlacementFiles{
		Env:   []string{"LIFELOOP_SESSION_DIR=" + session, instructionsVar + "=/user/dir"},
		Write: func(string) (string, error) { t.Fatal("Write called"); return "", nil },
		WriteIn: func(dir, suffix, text string) (string, error) {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return "", err
			}
			written = filepath.Join(dir, adapters.PlacementFilePrefix+"x"+suffix)
			return written, os.WriteFile(written, []byte(text), 0o600)
		},
		Setenv: func(name, value string) {
			if name != instructionsVar {
				t.Errorf("Setenv(%s)", name)
			}
			setTo = value
		},
	}
	out, err := h.ExternalizePlacement(argv, 2, files)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out, []string{"copilot", "--allow-all-tools"}) {
		t.Errorf("argv %q", out)
	}
	if b, err := os.ReadFile(written); err != nil || string(b) != body || !strings.HasSuffix(written, ".instructions.md") || !strings.HasPrefix(written, session) {
		t.Errorf("file %s: %q %v", written, b, err)
	}
	if setTo != "/user/dir,"+filepath.Dir(written) {
		t.Errorf("%s=%q", instructionsVar, setTo)
	}
}
