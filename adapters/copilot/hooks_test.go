package copilot

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

// TestHookFrameID: a Stop call's frame is the session file's latest
// top-level prompt (the real sample's one user.message), the same id the
// parser gives the turn; a path that is not the session's own file gives
// none.
func TestHookFrameID(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "copilot-tool-turn.events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const sid = "d787d370-78e2-4fe0-b72c-5c14edff65b9"
	path := filepath.Join(t.TempDir(), sid, eventsFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, sample, 0o600); err != nil {
		t.Fatal(err)
	}
	want := FrameID(sid, "f25036c7-ac71-4d8d-a24b-9965d4014916")
	if got := hookFrameID(hooks.Input{SessionID: sid, TranscriptPath: path}); got != want {
		t.Errorf("frame %q, want %q", got, want)
	}
	// The call's own time, as a hooks file in Claude's shape gets it (an
	// ISO string) and Copilot's own shape (epoch milliseconds), finds its
	// agentStop hook.start (input.timestamp 1796187682457).
	const stopMs = 1796187682457
	iso := `"` + time.UnixMilli(stopMs).UTC().Format("2006-01-02T15:04:05.000Z") + `"`
	for _, ts := range []string{iso, "1796187682457"} {
		if got := hookFrameID(hooks.Input{SessionID: sid, TranscriptPath: path, Timestamp: json.RawMessage(ts)}); got != want {
			t.Errorf("timestamp %s: frame %q, want %q", ts, got, want)
		}
	}
	// A later turn's Stop whose prompt is not in the file yet: the
	// earlier turn's agentStop is not taken for it...
	if id, stopped, err := latestInteraction(path, stopMs+5000, true); err != nil || stopped {
		t.Errorf("a later call before its records: %q, stopped %v, %v; want it to wait", id, stopped, err)
	}
	// ...and once its records are there, its own prompt is its frame.
	later := append(bytes.Clone(sample),
		`{"type":"user.message","data":{"content":"next","interactionId":"second-turn"},"id":"u2","timestamp":"2026-12-02T05:01:26.000Z","parentId":null}`+"\n"+
			`{"type":"hook.start","data":{"hookInvocationId":"h2","hookType":"agentStop","input":{"sessionId":"`+sid+`","timestamp":1796187687457}},"id":"h2s","timestamp":"2026-12-02T05:01:27.457Z","parentId":"u2"}`+"\n"...)
	if err := os.WriteFile(path, later, 0o600); err != nil {
		t.Fatal(err)
	}
	if id, stopped, err := latestInteraction(path, stopMs+5000, true); err != nil || !stopped || id != "second-turn" {
		t.Errorf("the later call's records: %q, stopped %v, %v; want second-turn", id, stopped, err)
	}
	if id, stopped, err := latestInteraction(path, stopMs, true); err != nil || !stopped || FrameID(sid, id) != want {
		t.Errorf("the first call again: %q, stopped %v, %v; want the first turn", id, stopped, err)
	}
	if err := os.WriteFile(path, sample, 0o600); err != nil {
		t.Fatal(err)
	}
	// Before Copilot has appended the agentStop hook.start, the turn is
	// known but not yet complete in the file.
	cut := sample[:bytes.Index(sample, []byte(`"hookType":"agentStop"`))]
	cut = cut[:bytes.LastIndexByte(cut, '\n')+1]
	short := filepath.Join(t.TempDir(), eventsFile)
	if err := os.WriteFile(short, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	if id, stopped, err := latestInteraction(short, 0, false); err != nil || stopped || FrameID(sid, id) != want {
		t.Errorf("file cut before agentStop: %q, stopped %v, %v; want the turn, not stopped", id, stopped, err)
	}
	if _, stopped, _ := latestInteraction(path, 0, false); !stopped {
		t.Error("the whole file: agentStop not seen")
	}
	if got := hookFrameID(hooks.Input{SessionID: "other", TranscriptPath: path}); got != "" {
		t.Errorf("another session's file: frame %q, want none", got)
	}
	// The hooks file answers flat and names lifeloop's hooks.
	spec := Harness{}.Hooks()
	if got := string(hooks.Response(spec, "SessionStart", "x")); got != `{"additionalContext":"x"}`+"\n" {
		t.Errorf("SessionStart answer %q, want the flat form", got)
	}
	if f := string(hooks.SettingsFile(spec, []string{"lifeloop"}, nil)); !strings.Contains(f, `"Stop"`) || strings.Contains(f, `"UserPromptSubmit"`) {
		t.Errorf("hooks file:\n%s", f)
	}
}

// TestBridgeArgs: a one-shot, the TUI and a resumed TUI get the
// per-launch plugin folder (its hooks file names lifeloop's hook command
// for Stop); a command line that starts no session gets nothing.
func TestBridgeArgs(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"copilot", "-p", "hi", "--allow-all-tools"}, true},
		{[]string{"copilot", "--allow-all-tools"}, true},
		{[]string{"copilot", "--resume=11111111-2222-4333-8444-555555555555"}, true},
		{[]string{"copilot", "--version"}, false},
		{[]string{"copilot", "mcp", "list"}, false},
	} {
		dir := t.TempDir()
		args, err := Harness{}.BridgeArgs(adapters.BridgeTarget{Argv: tc.argv, SessionDir: dir, HookCommand: []string{"/bin/lifeloop-hook"}})
		if err != nil {
			t.Fatalf("%q: %v", tc.argv, err)
		}
		if got := len(args) > 0; got != tc.want {
			t.Errorf("%q: bridge args %q, want them: %v", tc.argv, args, tc.want)
			continue
		}
		if !tc.want {
			continue
		}
		plugin := filepath.Join(dir, pluginFolder)
		if len(args) != 2 || args[0] != pluginDirFlag || args[1] != plugin {
			t.Errorf("%q: bridge args %q, want %s %s", tc.argv, args, pluginDirFlag, plugin)
		}
		b, err := os.ReadFile(filepath.Join(plugin, "hooks", "hooks.json"))
		if err != nil || !strings.Contains(string(b), "--hook Stop") {
			t.Errorf("%q: hooks file: %v\n%s", tc.argv, err, b)
		}
	}
}

// TestHostSettingsPath: lifeloop's own file in Copilot's hooks folder,
// under COPILOT_HOME when set; --project is a usage error.
func TestHostSettingsPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		vars    map[string]string
		project string
		want    string
		usage   bool
	}{
		{vars: map[string]string{"HOME": "/h"}, want: "/h/.copilot/hooks/lifeloop.json"},
		{vars: map[string]string{"HOME": "/h", "COPILOT_HOME": "/c"}, want: "/c/hooks/lifeloop.json"},
		{vars: map[string]string{"HOME": "/h"}, project: "/p", usage: true},
		{vars: map[string]string{}},
	} {
		got, err := Harness{}.HostSettingsPath(adapters.HostTarget{Getenv: env(tc.vars), Project: tc.project})
		var usage *adapters.HostTargetError
		switch {
		case tc.usage && !errors.As(err, &usage):
			t.Errorf("%v %q: %q, %v; want a usage error", tc.vars, tc.project, got, err)
		case tc.want == "" && !tc.usage && err == nil:
			t.Errorf("%v: %q, want an error", tc.vars, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%v: %q, %v; want %s", tc.vars, got, err, tc.want)
		}
	}
	if !(Harness{}).HostOwnsFile() {
		t.Error("the hooks file is lifeloop's own")
	}
}
