package hooks

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// testSpec has one hook of every role, a tool hook that maps to nothing
// and a custom hook whose JSON is the last argument; frame ids come from
// turn_id. The harness folders under adapters/ test their own specs
// against real hook input.
var testSpec = &Spec{
	Adapter: "h",
	Hooks: []Hook{
		{Name: "Start", Role: RoleSessionStart}, {Name: "Prompt", Role: RolePromptSubmit}, {Name: "Model", Role: RoleModelRequest},
		{Name: "PreC", Role: RolePreCompact}, {Name: "PostC", Role: RolePostCompact}, {Name: "Stop", Role: RoleTurnStop},
		{Name: "Sub", Role: RoleSubagentStop}, {Name: "End", Role: RoleSessionEnd},
	},
	Ignored: []string{"Tool"},
	Custom: map[string]Custom{"note": {FromArgv: true, Map: func(m Mapped, in []byte) (Mapped, error) {
		m.OtherThreads = true
		return m, nil
	}}},
	Matcher: "*",
}

func TestMapRoles(t *testing.T) {
	prompt := "hello"
	tests := []struct {
		hook, input string
		want        []contract.Event
		accepts     contract.ManifestPlacementClass
		frame       string
	}{
		{"Start", `{"session_id":"s","source":"startup"}`, []contract.Event{contract.EventSessionStarted}, contract.ManifestPreSession, ""},
		{"Start", `{"session_id":"s","source":"compact"}`, []contract.Event{contract.EventSessionStarted, contract.EventContextCompacted}, contract.ManifestPreSession, ""},
		{"Prompt", `{"session_id":"s","turn_id":"t1","prompt":"` + prompt + `"}`, []contract.Event{contract.EventFrameOpening}, contract.ManifestPreFrameLeading, "t1"},
		{"Model", `{"session_id":"s","turn_id":"t1"}`, []contract.Event{contract.EventFrameOpened}, "", "t1"},
		{"PreC", `{"session_id":"s","trigger":"auto"}`, []contract.Event{contract.EventContextPressureObserved}, "", ""},
		{"PostC", `{"session_id":"s","trigger":"auto"}`, []contract.Event{contract.EventContextCompacted}, "", ""},
		{"Stop", `{"session_id":"s","turn_id":"t1"}`, []contract.Event{contract.EventFrameEnding, contract.EventFrameEnded}, "", "t1"},
		{"Sub", `{"session_id":"s","turn_id":"t1","agent_id":"a"}`, []contract.Event{contract.EventFrameEnded}, "", "t1/a"},
		{"Sub", `{"session_id":"s","agent_id":"a"}`, nil, "", ""},
		{"End", `{"session_id":"s","reason":"exit"}`, []contract.Event{contract.EventSessionEnding}, "", ""},
		{"Tool", `{"session_id":"s"}`, nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.hook, func(t *testing.T) {
			m, err := Map(testSpec, "h", tt.hook, []byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			var got []contract.Event
			for _, mm := range m.Moments {
				got = append(got, mm.Event)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("events %v, want %v", got, tt.want)
			}
			if m.Accepts != tt.accepts {
				t.Errorf("accepts %q, want %q", m.Accepts, tt.accepts)
			}
			if tt.frame != "" {
				if fc := m.Moments[0].Frame; fc == nil || fc.FrameID != tt.frame {
					t.Errorf("frame %+v, want %s", fc, tt.frame)
				}
				if id := m.Moments[0].EventID; id != tt.frame+"/"+string(tt.want[0]) {
					t.Errorf("event id %q", id)
				}
			}
			if m.HarnessSessionID != "s" {
				t.Errorf("harness session %q", m.HarnessSessionID)
			}
		})
	}
	t.Run("derived frame", func(t *testing.T) {
		m, err := Map(testSpec, "h", "Prompt", []byte(`{"session_id":"s","prompt":"hello"}`))
		if err != nil {
			t.Fatal(err)
		}
		mm := m.Moments[0]
		if mm.Frame.FrameID != "s#2cf24dba5fb0" || mm.Summary["frame_id_derived"] != true || mm.EventID != "" {
			t.Errorf("derived frame %+v %v %q", mm.Frame, mm.Summary, mm.EventID)
		}
		if mm.Summary["prompt_bytes"] != len(prompt) {
			t.Errorf("summary %v", mm.Summary)
		}
	})
	t.Run("custom", func(t *testing.T) {
		m, err := Map(testSpec, "h", "note", []byte(` {"x":1}`))
		if err != nil || !m.OtherThreads {
			t.Fatalf("custom hook: %+v, %v", m, err)
		}
		if !testSpec.FromArgv("note") || testSpec.FromArgv("Stop") {
			t.Error("FromArgv")
		}
	})
}

func TestMapErrors(t *testing.T) {
	tests := []struct {
		name, hook, input string
		spec              *Spec
		want              error
	}{
		{"garbage", "Stop", "not json at all", testSpec, ErrInvalidInput},
		{"empty", "Stop", "", testSpec, ErrInvalidInput},
		{"array", "Stop", "[1,2]", testSpec, ErrInvalidInput},
		{"truncated", "Start", `{"session_id":"x"`, testSpec, ErrInvalidInput},
		{"wrong type", "End", `{"session_id":5}`, testSpec, ErrInvalidInput},
		{"event mismatch", "Stop", `{"hook_event_name":"End"}`, testSpec, ErrInvalidInput},
		{"unknown hook", "Bogus", `{}`, testSpec, ErrUnknownHook},
		{"adapter without hooks", "Stop", `{}`, nil, ErrUnknownHook},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Map(tt.spec, "h", tt.hook, []byte(tt.input))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
		})
	}
}

func TestResponse(t *testing.T) {
	tests := []struct {
		name, hook, ctx, want string
	}{
		{"session start with context", "Start", `{"payloads":[]}`, `{"hookSpecificOutput":{"hookEventName":"Start","additionalContext":"{\"payloads\":[]}"}}` + "\n"},
		{"prompt with context", "Prompt", "a<b", `{"hookSpecificOutput":{"hookEventName":"Prompt","additionalContext":"a<b"}}` + "\n"},
		{"no context", "Start", "", ""},
		{"stop cannot inject", "Stop", "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Response(testSpec, tt.hook, tt.ctx)); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := Response(nil, "Start", "x"); got != nil {
		t.Errorf("no spec: %q", got)
	}
}

// TestResponseFlat: a spec with FlatResponse answers with
// additionalContext at the top of the object, and still nothing for a
// hook that cannot inject.
func TestResponseFlat(t *testing.T) {
	flat := *testSpec
	flat.FlatResponse = true
	if got, want := string(Response(&flat, "Start", "a<b")), `{"additionalContext":"a<b"}`+"\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Response(&flat, "Stop", "x"); got != nil {
		t.Errorf("stop cannot inject: %q", got)
	}
}

func TestSettingsFile(t *testing.T) {
	for _, matcher := range []string{"*", ""} {
		spec := *testSpec
		spec.Matcher = matcher
		data := SettingsFile(&spec, []string{"/opt/my tools/lifeloop"}, nil)
		var s struct {
			Hooks map[string][]map[string]json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, data)
		}
		if len(s.Hooks) != len(spec.Hooks) {
			t.Fatalf("%d events, want %d", len(s.Hooks), len(spec.Hooks))
		}
		for _, h := range spec.Names() {
			g := s.Hooks[h]
			if len(g) != 1 {
				t.Fatalf("%s: %v", h, g)
			}
			if _, has := g[0]["matcher"]; has != (matcher != "") {
				t.Errorf("%s: matcher present=%v with spec matcher %q", h, has, matcher)
			}
			var entries []struct{ Type, Command string }
			if err := json.Unmarshal(g[0]["hooks"], &entries); err != nil || len(entries) != 1 || entries[0].Type != "command" {
				t.Fatalf("%s: %s", h, g[0]["hooks"])
			}
			if want := "'/opt/my tools/lifeloop' host-hook --adapter h --hook " + h; entries[0].Command != want {
				t.Errorf("%s: command %q, want %q", h, entries[0].Command, want)
			}
		}
	}
}

// TestSettingsFileHTTP: with an HTTP target every hook posts its JSON
// there with the bearer token, except a CommandOnly hook, which stays a
// program.
func TestSettingsFileHTTP(t *testing.T) {
	spec := *testSpec
	spec.Hooks = slices.Clone(spec.Hooks)
	spec.Hooks[0].CommandOnly = true
	data := SettingsFile(&spec, []string{"/usr/bin/lifeloop"}, &HTTPTarget{URL: "http://127.0.0.1:4000/hook", Token: "t0k"})
	var s struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type, Command, URL string
				Headers            map[string]string
				Timeout            int
			}
		}
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	for i, h := range spec.Hooks {
		e := s.Hooks[h.Name][0].Hooks[0]
		if i == 0 {
			if e.Type != "command" || e.URL != "" || !strings.HasSuffix(e.Command, " host-hook --adapter h --hook "+h.Name) {
				t.Errorf("%s (command only): %+v", h.Name, e)
			}
			continue
		}
		if e.Type != "http" || e.Command != "" || e.URL != "http://127.0.0.1:4000/hook/h/"+h.Name ||
			e.Headers["Authorization"] != "Bearer t0k" || e.Timeout != HTTPTimeoutSeconds {
			t.Errorf("%s: %+v", h.Name, e)
		}
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

func FuzzMap(f *testing.F) {
	f.Add("Stop", []byte(`{"session_id":"s","turn_id":"p"}`))
	f.Add("Sub", []byte(`{"session_id":"s","turn_id":"p","agent_id":"a"}`))
	f.Fuzz(func(t *testing.T, hook string, in []byte) {
		m, err := Map(testSpec, "h", hook, in)
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

// TestMayAttend: a hook installed for attention, or one the spec ignores
// (a launch may install it for attention), may tell a wrapper's attention
// something; a lifecycle hook, an unknown one and a nil spec do not.
func TestMayAttend(t *testing.T) {
	s := &Spec{
		Hooks:   []Hook{{Name: "Stop", Role: RoleTurnStop}, {Name: "Notification", Role: RoleAttention}},
		Ignored: []string{"PermissionRequest"},
	}
	for hook, want := range map[string]bool{"Notification": true, "PermissionRequest": true, "Stop": false, "Other": false} {
		if got := s.MayAttend(hook); got != want {
			t.Errorf("MayAttend(%s) = %v, want %v", hook, got, want)
		}
	}
	if (*Spec)(nil).MayAttend("Notification") {
		t.Error("a nil spec may attend")
	}
}
