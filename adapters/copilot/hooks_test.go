package copilot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	// Before Copilot has appended the agentStop hook.start, the turn is
	// known but not yet complete in the file.
	cut := sample[:bytes.Index(sample, []byte(`"hookType":"agentStop"`))]
	cut = cut[:bytes.LastIndexByte(cut, '\n')+1]
	short := filepath.Join(t.TempDir(), eventsFile)
	if err := os.WriteFile(short, cut, 0o600); err != nil {
		t.Fatal(err)
	}
	if id, stopped, err := latestInteraction(short); err != nil || stopped || FrameID(sid, id) != want {
		t.Errorf("file cut before agentStop: %q, stopped %v, %v; want the turn, not stopped", id, stopped, err)
	}
	if _, stopped, _ := latestInteraction(path); !stopped {
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
