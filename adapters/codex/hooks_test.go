package codex

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
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

const (
	codexSID = "01a2002a-de7b-7690-8f73-540566854e63"
	codexTID = "01a2002a-deb1-7820-9565-01bc25290159"
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
			m, err := hooks.Map(Harness{}.Hooks(), tt.adapter, tt.hook, []byte(tt.input))
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
		{"array", "codex", "Stop", "[1,2]", hooks.ErrInvalidInput},
		{"notify without turn", "codex", "notify", `{"type":"agent-turn-complete","thread-id":"x"}`, hooks.ErrInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hooks.Map(Harness{}.Hooks(), tt.adapter, tt.hook, []byte(tt.input))
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
		{"codex prompt with context", "codex", "UserPromptSubmit", "a<b", `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"a<b"}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(hooks.Response(Harness{}.Hooks(), tt.hook, tt.ctx)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
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
			got := NotifyArgs([]string{"/bin/lifeloop"}, tt.user)
			if len(got) != 2 || got[0] != "-c" || got[1] != tt.want {
				t.Fatalf("got %q, want [-c %s]", got, tt.want)
			}
			// The TOML array parses back to the argv.
			back, err := parseNotify([]byte(got[1]))
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

func FuzzMap(f *testing.F) {
	f.Add("notify", []byte(`{"type":"agent-turn-complete","turn-id":"t"}`))
	spec := Harness{}.Hooks()
	f.Fuzz(func(t *testing.T, hook string, in []byte) {
		m, err := hooks.Map(spec, "codex", hook, in)
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

// TestBridgeArgs: `lifeloop run` sets notify for the launch, chaining the
// user's own notify program from $CODEX_HOME (else ~/.codex)/config.toml,
// and leaves a command line that sets notify itself alone, and a one-shot
// whose user has no notify program.
func TestBridgeArgs(t *testing.T) {
	home := t.TempDir()
	codexHome := filepath.Join(home, "ch")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte("notify = [\"say\", \"done\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := []string{"/bin/lifeloop"}
	tests := []struct {
		name string
		argv []string
		env  []string
		want []string
	}{
		{"no config", []string{"codex"}, []string{"HOME=" + home}, NotifyArgs(exe, nil)},
		{"user notify chained", []string{"codex"}, []string{"HOME=" + home, "CODEX_HOME=" + codexHome}, NotifyArgs(exe, []string{"say", "done"})},
		{"no home", []string{"codex"}, nil, NotifyArgs(exe, nil)},
		{"argv sets notify", []string{"codex", "-c", "notify=[\"x\"]"}, []string{"HOME=" + home}, nil},
		{"argv sets notify inline", []string{"codex", "-cnotify=[]"}, []string{"HOME=" + home}, nil},
		{"one-shot", []string{"codex", "-m", "exec", "exec", "hi"}, []string{"HOME=" + home}, nil},
		{"one-shot by alias", []string{"node", "/x/codex.js", "e", "hi"}, []string{"HOME=" + home}, nil},
		{"one-shot with user notify", []string{"codex", "exec", "hi"}, []string{"HOME=" + home, "CODEX_HOME=" + codexHome}, NotifyArgs(exe, []string{"say", "done"})},
		{"TUI prompt", []string{"codex", "exec hi"}, []string{"HOME=" + home}, NotifyArgs(exe, nil)},
		{"resume", []string{"codex", "resume", "--last"}, []string{"HOME=" + home}, NotifyArgs(exe, nil)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Harness{}.BridgeArgs(adapters.BridgeTarget{Argv: tc.argv, SessionDir: t.TempDir(), Env: tc.env, HookCommand: exe})
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("BridgeArgs = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if got := (Harness{}).BridgedFrameEvents(); !slices.Equal(got, []contract.Event{contract.EventFrameEnded}) {
		t.Errorf("BridgedFrameEvents = %v", got)
	}
}

// TestHostSettingsPath: `host apply` writes $CODEX_HOME/hooks.json (else
// ~/.codex/hooks.json); --project is a usage error, no home a failure.
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
		name      string
		target    adapters.HostTarget
		want      string
		wantErr   string
		wantUsage bool
	}{
		{"home", adapters.HostTarget{Getenv: env("HOME", "/h")}, "/h/.codex/hooks.json", "", false},
		{"CODEX_HOME wins", adapters.HostTarget{Getenv: env("HOME", "/h", "CODEX_HOME", "/x")}, "/x/hooks.json", "", false},
		{"--user is the same file", adapters.HostTarget{Getenv: env("HOME", "/h"), User: true}, "/h/.codex/hooks.json", "", false},
		{"--project", adapters.HostTarget{Getenv: env("HOME", "/h"), Project: "/p"}, "", "codex reads hooks from $CODEX_HOME/hooks.json only; drop --project", true},
		{"no home", adapters.HostTarget{Getenv: env()}, "", "HOME is not set; cannot find CODEX_HOME", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Harness{}.HostSettingsPath(tc.target)
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("HostSettingsPath = %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			var usage *adapters.HostTargetError
			if err == nil || err.Error() != tc.wantErr || errors.As(err, &usage) != tc.wantUsage {
				t.Fatalf("err %v (usage %v), want %q (usage %v)", err, errors.As(err, &usage), tc.wantErr, tc.wantUsage)
			}
		})
	}
	if n := (Harness{}).HostNotes(); len(n) != 1 || !strings.Contains(n[0], "trusted") {
		t.Errorf("HostNotes = %q", n)
	}
}
