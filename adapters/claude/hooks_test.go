package claude_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

const (
	claudeSID = "50b5cee6-b206-49d4-b2a9-c196226154be"
	claudePID = "ddcccb1a-82e1-42a6-91c7-6143eab778b4"
)

type wantMoment struct {
	event   contract.Event
	frame   string
	parent  string
	eventID string
	summary map[string]any
}

func TestMap(t *testing.T) {
	tests := []struct {
		name, adapter, hook, input string
		sid                        string
		accepts                    contract.ManifestPlacementClass
		notify                     bool
		want                       []wantMoment
	}{
		{
			name: "claude SessionStart startup", adapter: "claude", hook: "SessionStart", sid: claudeSID, accepts: contract.ManifestPreSession,
			input: `{"session_id":"` + claudeSID + `","transcript_path":"/h/.claude/projects/-p/x.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"startup","future_field":{"a":1}}`,
			want:  []wantMoment{{event: contract.EventSessionStarted, summary: map[string]any{"hook": "SessionStart", "source": "startup"}}},
		},
		{
			// 2.1.331 and later: a forked conversation starts a session of
			// its own (a new id), no compaction.
			name: "claude SessionStart fork", adapter: "claude", hook: "SessionStart", sid: "9f1c2a3b-0000-4000-8000-000000000001", accepts: contract.ManifestPreSession,
			input: `{"session_id":"9f1c2a3b-0000-4000-8000-000000000001","cwd":"/p","hook_event_name":"SessionStart","source":"fork","session_title":"t"}`,
			want:  []wantMoment{{event: contract.EventSessionStarted, summary: map[string]any{"hook": "SessionStart", "source": "fork"}}},
		},
		{
			name: "claude SessionStart compact", adapter: "claude", hook: "SessionStart", sid: claudeSID, accepts: contract.ManifestPreSession,
			input: `{"session_id":"` + claudeSID + `","cwd":"/p","hook_event_name":"SessionStart","source":"compact"}`,
			want: []wantMoment{
				{event: contract.EventSessionStarted, summary: map[string]any{"hook": "SessionStart", "source": "compact"}},
				{event: contract.EventContextCompacted, summary: map[string]any{"hook": "SessionStart", "source": "compact"}},
			},
		},
		{
			name: "claude UserPromptSubmit", adapter: "claude", hook: "UserPromptSubmit", sid: claudeSID, accepts: contract.ManifestPreFrameLeading,
			input: `{"session_id":"` + claudeSID + `","cwd":"/p","prompt_id":"` + claudePID + `","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"RUN_TOOL please"}`,
			want:  []wantMoment{{event: contract.EventFrameOpening, frame: claudePID, eventID: claudePID + "/frame.opening", summary: map[string]any{"hook": "UserPromptSubmit", "prompt_bytes": 15}}},
		},
		{
			name: "claude UserPromptSubmit without prompt_id", adapter: "claude", hook: "UserPromptSubmit", sid: "s1",
			accepts: contract.ManifestPreFrameLeading,
			input:   `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"hi"}`,
			want:    []wantMoment{{event: contract.EventFrameOpening, frame: "s1#8f434346648f", summary: map[string]any{"hook": "UserPromptSubmit", "prompt_bytes": 2, "frame_id_derived": true}}},
		},
		{
			name: "claude PreToolUse is no moment", adapter: "claude", hook: "PreToolUse", sid: claudeSID,
			input: `{"session_id":"` + claudeSID + `","prompt_id":"` + claudePID + `","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo"}}`,
		},
		{
			name: "claude Stop", adapter: "claude", hook: "Stop", sid: claudeSID,
			input: `{"session_id":"` + claudeSID + `","prompt_id":"` + claudePID + `","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"hi from mock (after tool)","background_tasks":[]}`,
			want: []wantMoment{
				{event: contract.EventFrameEnding, frame: claudePID, eventID: claudePID + "/frame.ending", summary: map[string]any{"hook": "Stop", "last_message_bytes": 25, "stop_hook_active": false}},
				{event: contract.EventFrameEnded, frame: claudePID, eventID: claudePID + "/frame.ended", summary: map[string]any{"hook": "Stop", "last_message_bytes": 25, "stop_hook_active": false}},
			},
		},
		{
			name: "claude SessionEnd", adapter: "claude", hook: "SessionEnd", sid: claudeSID,
			input: `{"session_id":"` + claudeSID + `","prompt_id":"` + claudePID + `","hook_event_name":"SessionEnd","reason":"other"}`,
			want:  []wantMoment{{event: contract.EventSessionEnding, summary: map[string]any{"hook": "SessionEnd", "reason": "other"}}},
		},
		{
			name: "claude PreCompact", adapter: "claude", hook: "PreCompact", sid: claudeSID,
			input: `{"session_id":"` + claudeSID + `","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}`,
			want:  []wantMoment{{event: contract.EventContextPressureObserved, summary: map[string]any{"hook": "PreCompact", "trigger": "auto"}}},
		},
		{
			name: "claude SubagentStop with agent", adapter: "claude", hook: "SubagentStop", sid: claudeSID,
			input: `{"session_id":"` + claudeSID + `","prompt_id":"` + claudePID + `","hook_event_name":"SubagentStop","agent_id":"a1","agent_type":"general"}`,
			want:  []wantMoment{{event: contract.EventFrameEnded, frame: claudePID + "/a1", parent: claudePID, eventID: claudePID + "/a1/frame.ended", summary: map[string]any{"hook": "SubagentStop", "agent_type": "general"}}},
		},
		{
			name: "claude SubagentStop of compaction (no agent) is no moment", adapter: "claude", hook: "SubagentStop", sid: claudeSID,
			input: `{"session_id":"` + claudeSID + `","hook_event_name":"SubagentStop","stop_hook_active":false}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := hooks.Map(claude.Harness{}.Hooks(), tt.adapter, tt.hook, []byte(tt.input))
			if err != nil {
				t.Fatalf("Map: %v", err)
			}
			if m.HarnessSessionID != tt.sid || m.Accepts != tt.accepts || m.OtherThreads != tt.notify {
				t.Fatalf("sid=%q accepts=%q notify=%v, want %q %q %v", m.HarnessSessionID, m.Accepts, m.OtherThreads, tt.sid, tt.accepts, tt.notify)
			}
			if len(m.Moments) != len(tt.want) {
				t.Fatalf("%d moments %+v, want %d", len(m.Moments), m.Moments, len(tt.want))
			}
			for i, w := range tt.want {
				g := m.Moments[i]
				if g.Event != w.event || g.EventID != w.eventID {
					t.Errorf("moment %d: %s %q, want %s %q", i, g.Event, g.EventID, w.event, w.eventID)
				}
				if (g.Frame == nil) != (w.frame == "") || g.Frame != nil && g.Frame.FrameID != w.frame {
					t.Errorf("moment %d: frame %+v, want %q", i, g.Frame, w.frame)
				}
				if g.Frame != nil {
					if err := g.Frame.Validate(); err != nil {
						t.Errorf("moment %d: invalid frame: %v", i, err)
					}
					if (g.Frame.ParentFrameID == nil) != (w.parent == "") || w.parent != "" && *g.Frame.ParentFrameID != w.parent {
						t.Errorf("moment %d: parent %v, want %q", i, g.Frame.ParentFrameID, w.parent)
					}
				}
				if !reflect.DeepEqual(g.Summary, w.summary) {
					t.Errorf("moment %d: summary %v, want %v", i, g.Summary, w.summary)
				}
				// No body ever reaches a summary.
				raw, _ := json.Marshal(g.Summary)
				for _, body := range []string{"RUN_TOOL", "hi from mock", "Title"} {
					if strings.Contains(string(raw), body) {
						t.Errorf("summary carries a body: %s", raw)
					}
				}
			}
		})
	}
}

func TestMapErrors(t *testing.T) {
	tests := []struct {
		name, adapter, hook, input string
		want                       error
	}{
		{"garbage", "claude", "Stop", "not json at all", hooks.ErrInvalidInput},
		{"empty", "claude", "Stop", "", hooks.ErrInvalidInput},
		{"truncated", "claude", "SessionStart", `{"session_id":"x"`, hooks.ErrInvalidInput},
		{"wrong type", "claude", "SessionEnd", `{"session_id":5}`, hooks.ErrInvalidInput},
		{"event mismatch", "claude", "Stop", `{"hook_event_name":"SessionEnd"}`, hooks.ErrInvalidInput},
		{"unknown hook", "claude", "Bogus", `{}`, hooks.ErrUnknownHook},
		{"claude has no notify", "claude", "notify", `{}`, hooks.ErrUnknownHook},
		{"claude has no PreModelRequest", "claude", "PreModelRequest", `{}`, hooks.ErrUnknownHook},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hooks.Map(claude.Harness{}.Hooks(), tt.adapter, tt.hook, []byte(tt.input))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
}

func TestResponse(t *testing.T) {
	tests := []struct {
		name, adapter, hook, ctx, want string
	}{
		{"claude session start with context", "claude", "SessionStart", `{"payloads":[]}`, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"{\"payloads\":[]}"}}` + "\n"},
		{"no context", "claude", "SessionStart", "", ""},
		{"stop cannot inject", "claude", "Stop", "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(hooks.Response(claude.Harness{}.Hooks(), tt.hook, tt.ctx)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClaudeLaunchSettings(t *testing.T) {
	spec, _ := claude.Harness{}.LaunchHooks(adapters.BridgeTarget{Argv: []string{"claude"}})
	for _, n := range []string{"PermissionRequest", "Notification", "StopFailure"} {
		if !slices.Contains(spec.Names(), n) {
			t.Errorf("an interactive launch does not install %s (attention)", n)
		}
	}
	data := hooks.SettingsFile(spec, []string{"/opt/my tools/lifeloop"}, nil)
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if len(s.Hooks) != len(spec.Names()) {
		t.Fatalf("%d events, want %d", len(s.Hooks), len(spec.Names()))
	}
	for _, h := range spec.Names() {
		g := s.Hooks[h]
		if len(g) != 1 || g[0].Matcher != "*" || len(g[0].Hooks) != 1 || g[0].Hooks[0].Type != "command" {
			t.Fatalf("%s: %+v", h, g)
		}
		want := "'/opt/my tools/lifeloop' host-hook --adapter claude --hook " + h
		if g[0].Hooks[0].Command != want {
			t.Errorf("%s: command %q, want %q", h, g[0].Hooks[0].Command, want)
		}
	}
	// The bridge loads that file with --settings (was ClaudeLaunchArgs).
	dir := t.TempDir()
	path := filepath.Join(dir, "claude-hooks.json")
	got, err := claude.Harness{}.BridgeArgs(adapters.BridgeTarget{Argv: []string{"claude"}, SessionDir: dir, HookCommand: []string{"/opt/my tools/lifeloop"}})
	if err != nil || !reflect.DeepEqual(got, []string{"--settings", path}) {
		t.Errorf("BridgeArgs: %v, %v", got, err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != string(data) {
		t.Errorf("bridge settings file %q (%v), want\n%s", b, err, data)
	}
}

// TestBridgeArgs: the bridge steps aside when the command line already
// passes --settings, and reports a file it cannot write.
func TestBridgeArgs(t *testing.T) {
	h := claude.Harness{}
	for _, argv := range [][]string{{"claude", "--settings", "mine.json"}, {"claude", "--settings=mine.json", "-p", "hi"}} {
		dir := t.TempDir()
		got, err := h.BridgeArgs(adapters.BridgeTarget{Argv: argv, SessionDir: dir, HookCommand: []string{"/bin/lifeloop"}})
		if got != nil || err != nil {
			t.Errorf("BridgeArgs(%q) = %q, %v; want nothing", argv, got, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("BridgeArgs(%q) wrote %d files", argv, len(ents))
		}
	}
	_, err := h.BridgeArgs(adapters.BridgeTarget{Argv: []string{"claude"}, SessionDir: filepath.Join(t.TempDir(), "missing"), HookCommand: []string{"/bin/lifeloop"}})
	if err == nil || !strings.HasPrefix(err.Error(), "hook bridge settings: ") {
		t.Errorf("unwritable session folder: err %v", err)
	}
	if ev := h.BridgedFrameEvents(); !slices.Equal(ev, []contract.Event{contract.EventFrameOpening, contract.EventFrameEnding, contract.EventFrameEnded}) {
		t.Errorf("BridgedFrameEvents %v", ev)
	}
}

// TestLaunchHooks: a print-mode run that lifeloop pins and follows, and
// where nothing waits for a hook to place it, gets only the hooks whose
// moments its transcript does not report; every other launch gets all,
// and the settings file holds what LaunchHooks says.
func TestLaunchHooks(t *testing.T) {
	h := claude.Harness{}
	all := append(h.Hooks().Names(), "PermissionRequest", "Notification", "StopFailure")
	lean := []string{"PreCompact", "SubagentStop", "SessionEnd"}
	cases := []struct {
		name              string
		argv              []string
		telemetry, places bool
		want              []string
	}{
		{"print", []string{"claude", "-p", "hi"}, true, false, lean},
		{"--print behind env", []string{"env", "A=1", "claude", "--print", "hi"}, true, false, lean},
		{"a client or payload may place", []string{"claude", "-p", "hi"}, true, true, all},
		{"no telemetry", []string{"claude", "-p", "hi"}, false, false, all},
		{"interactive", []string{"claude"}, true, false, all},
		{"continued", []string{"claude", "-p", "-c", "hi"}, true, false, all},
		{"resumed", []string{"claude", "-p", "--resume", claudeSID, "hi"}, true, false, all},
		{"its own session id", []string{"claude", "-p", "--session-id", claudeSID, "hi"}, true, false, all},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := adapters.BridgeTarget{Argv: c.argv, SessionDir: t.TempDir(), HookCommand: []string{"/bin/lifeloop"}, Telemetry: c.telemetry, Places: c.places}
			spec, frames := h.LaunchHooks(b)
			if got := spec.Names(); !slices.Equal(got, c.want) {
				t.Errorf("hooks %v, want %v", got, c.want)
			}
			for _, n := range []string{"PermissionRequest", "Notification", "StopFailure"} {
				if attends := spec.Attends(n); attends != (len(c.want) == len(all)) || attends == slices.Contains(spec.Ignored, n) {
					t.Errorf("%s: attends %v, ignored %v", n, attends, slices.Contains(spec.Ignored, n))
				}
			}
			wantFrames := h.BridgedFrameEvents()
			if len(c.want) != len(all) {
				wantFrames = nil
			}
			if !slices.Equal(frames, wantFrames) {
				t.Errorf("frame events %v, want %v", frames, wantFrames)
			}
			if _, err := h.BridgeArgs(b); err != nil {
				t.Fatal(err)
			}
			var s struct{ Hooks map[string]json.RawMessage }
			data, _ := os.ReadFile(filepath.Join(b.SessionDir, "claude-hooks.json"))
			if err := json.Unmarshal(data, &s); err != nil || len(s.Hooks) != len(c.want) {
				t.Errorf("settings file holds %d hooks (%v), want %v:\n%s", len(s.Hooks), err, c.want, data)
			}
		})
	}
}

// TestHooksSpecIsFresh: a caller changing the Spec it got does not
// change the next one.
func TestHooksSpecIsFresh(t *testing.T) {
	s := claude.Harness{}.Hooks()
	s.Hooks[0].Name, s.Ignored[0], s.Matcher = "X", "Y", "Z"
	if n := (claude.Harness{}).Hooks(); n.Hooks[0].Name != "SessionStart" || n.Ignored[0] != "PreToolUse" || n.Matcher != "*" {
		t.Errorf("shared spec corrupted: %+v", n)
	}
}

func TestHostSettingsPath(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name    string
		target  adapters.HostTarget
		want    string
		wantErr string
		usage   bool
	}{
		{"project", adapters.HostTarget{Getenv: env(), Project: "/p", Cwd: "/c"}, "/p/.claude/settings.json", "", false},
		{"current folder", adapters.HostTarget{Getenv: env(), Cwd: "/c"}, "/c/.claude/settings.json", "", false},
		{"user", adapters.HostTarget{Getenv: env("HOME", "/h"), User: true}, "/h/.claude/settings.json", "", false},
		{"user config dir", adapters.HostTarget{Getenv: env("HOME", "/h", "CLAUDE_CONFIG_DIR", "/cfg"), User: true}, "/cfg/settings.json", "", false},
		{"user config dir without HOME", adapters.HostTarget{Getenv: env("CLAUDE_CONFIG_DIR", "/cfg"), User: true}, "/cfg/settings.json", "", false},
		{"user without HOME", adapters.HostTarget{Getenv: env(), User: true}, "", "HOME is not set; cannot find the user's Claude settings", false},
		{"both", adapters.HostTarget{Getenv: env("HOME", "/h"), User: true, Project: "/p"}, "", "give --project DIR or --user, not both", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := claude.Harness{}.HostSettingsPath(tc.target)
			if tc.wantErr != "" {
				var usage *adapters.HostTargetError
				if err == nil || err.Error() != tc.wantErr || errors.As(err, &usage) != tc.usage {
					t.Fatalf("err %v, want %q (usage error: %v)", err, tc.wantErr, tc.usage)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if n := (claude.Harness{}).HostNotes(); n != nil {
		t.Errorf("HostNotes %q", n)
	}
}

func FuzzMap(f *testing.F) {
	f.Add("Stop", []byte(`{"session_id":"s","prompt_id":"p"}`))
	spec := claude.Harness{}.Hooks()
	f.Fuzz(func(t *testing.T, hook string, in []byte) {
		m, err := hooks.Map(spec, "claude", hook, in)
		if err != nil {
			return
		}
		for _, mm := range m.Moments {
			if !mm.Event.Valid() {
				t.Fatalf("invalid event %q", mm.Event)
			}
			if mm.Event.IsFrame() && mm.Frame == nil {
				t.Fatalf("frame event without frame")
			}
		}
	})
}
