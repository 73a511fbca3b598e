package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/hooks"
)

// TestHooksMapRealCalls maps every hook call the real CLI made in a
// headless tool turn (testdata/gemini-tool-turn.hooks.jsonl: the stdin of
// each call of the 11 hook events, one a line) with the Spec.
func TestHooksMapRealCalls(t *testing.T) {
	b, err := os.ReadFile("testdata/gemini-tool-turn.hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	spec := Harness{}.Hooks()
	var got []string
	frames := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var in hooks.Input
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatal(err)
		}
		m, err := hooks.Map(spec, "gemini", in.HookEventName, []byte(line))
		if err != nil {
			t.Fatalf("%s: %v", in.HookEventName, err)
		}
		if m.HarnessSessionID != "b7e0d427-9fc6-4cc3-b7ce-7169753006e7" || !strings.HasSuffix(m.TranscriptPath, "-b7e0d427.jsonl") {
			t.Errorf("%s: session %q transcript %q", in.HookEventName, m.HarnessSessionID, m.TranscriptPath)
		}
		for _, mo := range m.Moments {
			got = append(got, in.HookEventName+"→"+string(mo.Event))
			if mo.Frame != nil {
				frames[mo.Frame.FrameID] = true
				if mo.EventID != mo.Frame.FrameID+"/"+string(mo.Event) {
					t.Errorf("%s: event id %q", in.HookEventName, mo.EventID)
				}
			}
		}
	}
	want := "SessionStart→session.started BeforeAgent→frame.opening AfterAgent→frame.ending AfterAgent→frame.ended SessionEnd→session.ending"
	if strings.Join(got, " ") != want {
		t.Errorf("moments %v, want %s", got, want)
	}
	if len(frames) != 1 {
		t.Errorf("frames %v, want one named alike by BeforeAgent and AfterAgent", frames)
	}
	if r := hooks.Response(spec, "BeforeAgent", "CTX"); !strings.Contains(string(r), `"additionalContext":"CTX"`) {
		t.Errorf("BeforeAgent response %s", r)
	}
}

func TestHostSettingsPath(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	get := func(k string) string { return env[k] }
	for _, tt := range []struct {
		target adapters.HostTarget
		want   string
	}{
		{adapters.HostTarget{Getenv: get, User: true}, "/h/.gemini/settings.json"},
		{adapters.HostTarget{Getenv: get, Project: "/p"}, "/p/.gemini/settings.json"},
		{adapters.HostTarget{Getenv: get, Cwd: "/c"}, "/c/.gemini/settings.json"},
	} {
		if got, err := (Harness{}).HostSettingsPath(tt.target); err != nil || got != tt.want {
			t.Errorf("%+v → %s %v, want %s", tt.target, got, err, tt.want)
		}
	}
	env["GEMINI_CLI_HOME"] = "/g"
	if got, _ := (Harness{}).HostSettingsPath(adapters.HostTarget{Getenv: get, User: true}); got != filepath.Join("/g", ".gemini", "settings.json") {
		t.Errorf("GEMINI_CLI_HOME: %s", got)
	}
	if _, err := (Harness{}).HostSettingsPath(adapters.HostTarget{Getenv: get, User: true, Project: "/p"}); err == nil {
		t.Error("--user with --project accepted")
	}
}
