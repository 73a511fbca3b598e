package qwen

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/hooks"
)

// toolTurnSession is the session id and prompt record of
// testdata/qwen-tool-turn.jsonl (a real 0.24.4 one-shot with a tool
// call).
const (
	toolTurnSession = "22222222-2222-4333-8444-555555555555"
	toolTurnPrompt  = "01f8e2be-08fe-4a90-bb24-e321a7fa3503"
)

// sessionFile writes the first n lines of the tool turn's session file
// as <session id>.jsonl in a new folder and returns its path.
func sessionFile(t *testing.T, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "qwen-tool-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	path := filepath.Join(t.TempDir(), toolTurnSession+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:n], "")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// paddedSession writes the tool turn's session file with 400 copies of
// its telemetry record after the prompt (more than latestTurn reads
// first) and returns its path.
func paddedSession(t *testing.T) string {
	t.Helper()
	path := sessionFile(t, 8)
	b, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(b), "\n")
	padded := lines[0] + strings.Repeat(lines[2], 400) + strings.Join(lines[1:], "")
	if len(padded) < 2*tailWindow {
		t.Fatalf("padded file of %d bytes", len(padded))
	}
	if err := os.WriteFile(path, []byte(padded), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStopFrameID: a Stop call's frame is the session file's own frame
// of its latest turn (what the file's parser names it), also when the
// file has not ended the turn yet (after the wait); other calls and
// files that are not the call's session have none.
func TestStopFrameID(t *testing.T) {
	defer func(w time.Duration) { stopWait = w }(stopWait)
	stopWait = 200 * time.Millisecond
	want := FrameID(toolTurnSession, toolTurnPrompt)
	whole := sessionFile(t, 8)
	cases := []struct {
		name string
		in   hooks.Input
		want string
	}{
		{"stop", hooks.Input{HookEventName: "Stop", SessionID: toolTurnSession, TranscriptPath: whole}, want},
		{"turn not ended", hooks.Input{HookEventName: "Stop", SessionID: toolTurnSession, TranscriptPath: sessionFile(t, 6)}, want},
		{"no prompt yet", hooks.Input{HookEventName: "Stop", SessionID: toolTurnSession, TranscriptPath: filepath.Join(t.TempDir(), toolTurnSession+".jsonl")}, ""},
		{"prompt far from the end", hooks.Input{HookEventName: "Stop", SessionID: toolTurnSession, TranscriptPath: paddedSession(t)}, want},
		{"other session's file", hooks.Input{HookEventName: "Stop", SessionID: "other", TranscriptPath: whole}, ""},
		{"not stop", hooks.Input{HookEventName: "SessionStart", SessionID: toolTurnSession, TranscriptPath: whole}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := stopFrameID(c.in); got != c.want {
				t.Errorf("stopFrameID = %q, want %q", got, c.want)
			}
		})
	}
}

// TestStopMapsToTheFilesFrame: the Stop hook's input as Qwen Code gives
// it maps to frame.ending and frame.ended in the session file's frame.
func TestStopMapsToTheFilesFrame(t *testing.T) {
	in, _ := json.Marshal(map[string]any{
		"session_id": toolTurnSession, "transcript_path": sessionFile(t, 8), "cwd": "/tmp", "hook_event_name": "Stop",
		"prompt_id": toolTurnSession + "########0", "stop_hook_active": false, "last_assistant_message": "done",
	})
	m, err := hooks.Map(Harness{}.Hooks(), "qwen", "Stop", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Moments) != 2 || m.Moments[0].Event != "frame.ending" || m.Moments[1].Event != "frame.ended" {
		t.Fatalf("moments %+v, want frame.ending and frame.ended", m.Moments)
	}
	if got := m.Moments[1].Frame.FrameID; got != FrameID(toolTurnSession, toolTurnPrompt) {
		t.Errorf("frame %q, want the session file's", got)
	}
}

// bridgeTarget is a launch of `qwen ARGS…` with env.
func bridgeTarget(t *testing.T, env []string, args ...string) adapters.BridgeTarget {
	return adapters.BridgeTarget{
		Argv: append([]string{"qwen"}, args...), SessionDir: t.TempDir(), Env: env,
		HookCommand: []string{"/opt/lifeloop"},
	}
}

// readBridge returns the settings file the variable vars names.
func readBridge(t *testing.T, vars []string) map[string]any {
	t.Helper()
	if len(vars) != 1 || !strings.HasPrefix(vars[0], systemDefaultsVar+"=") {
		t.Fatalf("vars %q, want %s=FILE", vars, systemDefaultsVar)
	}
	path := strings.TrimPrefix(vars[0], systemDefaultsVar+"=")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("bridge file %s: %v %v, want 0600", path, fi, err)
	}
	b, _ := os.ReadFile(path)
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("bridge file: %v\n%s", err, b)
	}
	return s
}

// commands lists the commands of a settings file's hooks for event.
func commands(s map[string]any, event string) []string {
	var out []string
	all, _ := s["hooks"].(map[string]any)
	groups, _ := all[event].([]any)
	for _, g := range groups {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			c, _ := h.(map[string]any)["command"].(string)
			out = append(out, c)
		}
	}
	return out
}

// TestBridgeEnv: the bridge is a system-defaults file in the session
// folder holding the person's own (named by the variable, or beside the
// system settings file) with lifeloop's hooks after theirs; none
// for a launch without hooks or session; a person's file that is not
// settings leaves the launch without the bridge, not without it.
func TestBridgeEnv(t *testing.T) {
	own := filepath.Join(t.TempDir(), "system-defaults.json")
	ownContent := `{"$version": 4, "model": {"name": "x"}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`
	if err := os.WriteFile(own, []byte(ownContent), 0o600); err != nil {
		t.Fatal(err)
	}
	vars, err := Harness{}.BridgeEnv(bridgeTarget(t, []string{systemDefaultsVar + "=" + own}, "-i", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	s := readBridge(t, vars)
	if got := commands(s, "Stop"); len(got) != 2 || got[0] != "mine" || !strings.Contains(got[1], "host-hook --adapter qwen --hook Stop") {
		t.Errorf("Stop hooks %q, want the person's then lifeloop's", got)
	}
	for _, ev := range []string{"PreCompact", "SessionEnd", "Notification"} {
		if got := commands(s, ev); len(got) != 1 || !strings.Contains(got[0], "--hook "+ev) {
			t.Errorf("%s hooks %q, want lifeloop's", ev, got)
		}
	}
	if s["model"].(map[string]any)["name"] != "x" {
		t.Errorf("the person's other settings lost: %v", s)
	}
	if b, _ := os.ReadFile(own); string(b) != ownContent {
		t.Errorf("the person's file changed: %s", b)
	}

	// Beside the system settings file the variable names; none there.
	sys := t.TempDir()
	vars, err = Harness{}.BridgeEnv(bridgeTarget(t, []string{systemSettingsVar + "=" + filepath.Join(sys, "settings.json")}, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	if s := readBridge(t, vars); s["$version"] != 4.0 || len(commands(s, "Stop")) != 1 {
		t.Errorf("bridge without a file of the person's: %v", s)
	}

	for _, args := range [][]string{{"--bare", "hi"}, {"--safe-mode"}, {"mcp", "list"}, {"--version"}} {
		if vars, err := (Harness{}).BridgeEnv(bridgeTarget(t, nil, args...)); vars != nil || err != nil {
			t.Errorf("qwen %q: %q %v, want no bridge", args, vars, err)
		}
	}

	bad := filepath.Join(t.TempDir(), "system-defaults.json")
	if err := os.WriteFile(bad, []byte(`{"hooks": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Harness{}.BridgeEnv(bridgeTarget(t, []string{systemDefaultsVar + "=" + bad}))
	if u := (*adapters.BridgeUnavailable)(nil); !errors.As(err, &u) {
		t.Errorf("a person's file that is not settings: %v, want BridgeUnavailable", err)
	}
}

// BenchmarkLatestTurn: a Stop call's read of a session file of 1 000
// tool turns (the recorded turn again and again, ~4.6 MB), which the
// wrapper does once per turn.
func BenchmarkLatestTurn(b *testing.B) {
	one, err := os.ReadFile(filepath.Join("testdata", "qwen-tool-turn.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), toolTurnSession+".jsonl")
	if err := os.WriteFile(path, bytes.Repeat(one, 1000), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if frame, ended, err := latestTurn(path); err != nil || !ended || frame == "" {
			b.Fatal(frame, ended, err)
		}
	}
}
