package hooks

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

const (
	claudeSID = "50b5cee6-b206-49d4-b2a9-c196226154be"
	claudePID = "ddcccb1a-82e1-42a6-91c7-6143eab778b4"
	codexSID  = "01a2002a-de7b-7690-8f73-540566854e63"
	codexTID  = "01a2002a-deb1-7820-9565-01bc25290159"
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
		{
			name: "codex UserPromptSubmit", adapter: "codex", hook: "UserPromptSubmit", sid: codexSID, accepts: contract.ManifestPreFrameLeading,
			input: `{"session_id":"` + codexSID + `","turn_id":"` + codexTID + `","hook_event_name":"UserPromptSubmit","model":"mock-model","prompt":"RUN_TOOL please"}`,
			want:  []wantMoment{{event: contract.EventFrameOpening, frame: codexTID, eventID: codexTID + "/frame.opening", summary: map[string]any{"hook": "UserPromptSubmit", "prompt_bytes": 15}}},
		},
		{
			name: "codex PreModelRequest", adapter: "codex", hook: "PreModelRequest", sid: codexSID,
			input: `{"session_id":"` + codexSID + `","turn_id":"` + codexTID + `","hook_event_name":"PreModelRequest"}`,
			want:  []wantMoment{{event: contract.EventFrameOpened, frame: codexTID, eventID: codexTID + "/frame.opened", summary: map[string]any{"hook": "PreModelRequest"}}},
		},
		{
			name: "codex PostCompact", adapter: "codex", hook: "PostCompact", sid: codexSID,
			input: `{"session_id":"` + codexSID + `","hook_event_name":"PostCompact","trigger":"auto"}`,
			want:  []wantMoment{{event: contract.EventContextCompacted, summary: map[string]any{"hook": "PostCompact", "trigger": "auto"}}},
		},
		{
			name: "codex notify", adapter: "codex", hook: "notify", sid: codexSID, notify: true,
			input: `{"type":"agent-turn-complete","thread-id":"` + codexSID + `","turn-id":"` + codexTID + `","cwd":"/p","client":"codex_exec","input-messages":["RUN_TOOL please"],"last-assistant-message":"hi from mock (after tool)"}`,
			want:  []wantMoment{{event: contract.EventFrameEnded, frame: codexTID, eventID: codexTID + "/frame.ended", summary: map[string]any{"hook": "notify", "input_messages": 1, "last_message_bytes": 25, "client": "codex_exec"}}},
		},
		{
			name: "codex notify of the title-generation thread keeps its own thread id", adapter: "codex", hook: "notify", sid: "title-thread", notify: true,
			input: `{"type":"agent-turn-complete","thread-id":"title-thread","turn-id":"t9","cwd":"/p","input-messages":[],"last-assistant-message":"Title"}`,
			want:  []wantMoment{{event: contract.EventFrameEnded, frame: "t9", eventID: "t9/frame.ended", summary: map[string]any{"hook": "notify", "input_messages": 0, "last_message_bytes": 5}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Map(tt.adapter, tt.hook, []byte(tt.input))
			if err != nil {
				t.Fatalf("Map: %v", err)
			}
			if m.HarnessSessionID != tt.sid || m.Accepts != tt.accepts || m.IsNotify != tt.notify {
				t.Fatalf("sid=%q accepts=%q notify=%v, want %q %q %v", m.HarnessSessionID, m.Accepts, m.IsNotify, tt.sid, tt.accepts, tt.notify)
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
		{"garbage", "claude", "Stop", "not json at all", ErrInvalidInput},
		{"empty", "claude", "Stop", "", ErrInvalidInput},
		{"array", "codex", "Stop", "[1,2]", ErrInvalidInput},
		{"truncated", "claude", "SessionStart", `{"session_id":"x"`, ErrInvalidInput},
		{"wrong type", "claude", "SessionEnd", `{"session_id":5}`, ErrInvalidInput},
		{"event mismatch", "claude", "Stop", `{"hook_event_name":"SessionEnd"}`, ErrInvalidInput},
		{"notify without turn", "codex", "notify", `{"type":"agent-turn-complete","thread-id":"x"}`, ErrInvalidInput},
		{"unknown hook", "claude", "Bogus", `{}`, ErrUnknownHook},
		{"claude has no notify", "claude", "notify", `{}`, ErrUnknownHook},
		{"claude has no PreModelRequest", "claude", "PreModelRequest", `{}`, ErrUnknownHook},
		{"unknown adapter", "gemini", "Stop", `{}`, ErrUnknownHook},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Map(tt.adapter, tt.hook, []byte(tt.input))
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
		{"codex prompt with context", "codex", "UserPromptSubmit", "a<b", `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"a<b"}}` + "\n"},
		{"no context", "claude", "SessionStart", "", ""},
		{"stop cannot inject", "claude", "Stop", "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Response(tt.adapter, tt.hook, tt.ctx)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClaudeLaunchSettings(t *testing.T) {
	data := ClaudeLaunchSettings([]string{"/opt/my tools/lifeloop"})
	var s struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if len(s.Hooks) != len(Hooks("claude")) {
		t.Fatalf("%d events, want %d", len(s.Hooks), len(Hooks("claude")))
	}
	for _, h := range Hooks("claude") {
		g := s.Hooks[h]
		if len(g) != 1 || g[0].Matcher != "*" || len(g[0].Hooks) != 1 || g[0].Hooks[0].Type != "command" {
			t.Fatalf("%s: %+v", h, g)
		}
		want := "'/opt/my tools/lifeloop' host-hook --adapter claude --hook " + h
		if g[0].Hooks[0].Command != want {
			t.Errorf("%s: command %q, want %q", h, g[0].Hooks[0].Command, want)
		}
	}
	if got := ClaudeLaunchArgs("/s.json"); !reflect.DeepEqual(got, []string{"--settings", "/s.json"}) {
		t.Errorf("ClaudeLaunchArgs: %v", got)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/bin/lifeloop": "/usr/bin/lifeloop",
		"a b":               "'a b'",
		"it's":              `'it'\''s'`,
		"":                  "''",
		"$HOME":             "'$HOME'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCodexNotifyArgs(t *testing.T) {
	tests := []struct {
		name string
		user []string
		want string
	}{
		{"no user notify", nil, `notify=["/bin/lifeloop","host-hook","--adapter","codex","--hook","notify"]`},
		{"chains the user's notify", []string{"notify-send", "a \"b\""}, `notify=["/bin/lifeloop","host-hook","--adapter","codex","--hook","notify","--chain","[\"notify-send\",\"a \\\"b\\\"\"]"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CodexNotifyArgs([]string{"/bin/lifeloop"}, tt.user)
			if len(got) != 2 || got[0] != "-c" || got[1] != tt.want {
				t.Fatalf("got %q, want [-c %s]", got, tt.want)
			}
			// The TOML array parses back to the argv.
			back, err := ParseCodexNotify([]byte(got[1]))
			if err != nil || len(back) < 6 || back[0] != "/bin/lifeloop" {
				t.Fatalf("parse back: %v %q", err, back)
			}
			if tt.user != nil {
				var chain []string
				if err := json.Unmarshal([]byte(back[len(back)-1]), &chain); err != nil || !reflect.DeepEqual(chain, tt.user) {
					t.Fatalf("chain %q (%v), want %q", back[len(back)-1], err, tt.user)
				}
			}
		})
	}
}

func TestParseCodexNotify(t *testing.T) {
	tests := []struct {
		name, toml string
		want       []string
		err        bool
	}{
		{"absent", "model = \"m\"\n", nil, false},
		{"basic", "model = \"m\"\nnotify = [\"notify-send\", \"--urgency=low\"]\n", []string{"notify-send", "--urgency=low"}, false},
		{"literal and multiline with comments", "notify = [\n  'py', # the program\n  \"a\\tb\\u00e9\",\n]\n[tui]\n", []string{"py", "a\tbé"}, false},
		{"only in a table", "[tui]\nnotify = [\"x\"]\n", nil, false},
		{"not an array", "notify = \"x\"\n", nil, true},
		{"unterminated", "notify = [\"x\"\n", nil, true},
		{"number inside", "notify = [1]\n", nil, true},
		{"notify_other key", "notifyx = [\"a\"]\n", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseCodexNotify([]byte(tt.toml))
			if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, %v; want %q, err=%v", got, err, tt.want, tt.err)
			}
		})
	}
}

func FuzzMap(f *testing.F) {
	f.Add("claude", "Stop", []byte(`{"session_id":"s","prompt_id":"p"}`))
	f.Add("codex", "notify", []byte(`{"type":"agent-turn-complete","turn-id":"t"}`))
	f.Fuzz(func(t *testing.T, adapter, hook string, in []byte) {
		m, err := Map(adapter, hook, in)
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

func FuzzParseCodexNotify(f *testing.F) {
	f.Add([]byte("notify = [\"a\", 'b']\n"))
	f.Fuzz(func(t *testing.T, in []byte) { _, _ = ParseCodexNotify(in) })
}
