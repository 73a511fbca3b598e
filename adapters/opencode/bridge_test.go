package opencode

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// TestMergeConfigKeepsTheUsers: every key of the user's configuration
// keeps its meaning (comments and trailing commas read as OpenCode reads
// them); lifeloop's entries go after the user's in the same lists.
func TestMergeConfigKeepsTheUsers(t *testing.T) {
	user := `{
	// the user's own
	"model": "p/m",
	"provider": {"p": {"options": {"baseURL": "http://127.0.0.1:1/<v1>"}, "models": {"m": {"limit": {"context": 1000}}}}},
	"plugin": ["user-plugin"],
	"instructions": null,
}`
	got, err := mergeConfig(user, map[string][]string{"plugin": {"file:///b.js"}, "instructions": {"/i.md"}})
	if err != nil {
		t.Fatal(err)
	}
	var have, want map[string]any
	if err := json.Unmarshal([]byte(got), &have); err != nil {
		t.Fatalf("merged %s: %v", got, err)
	}
	if err := json.Unmarshal(stripJSONC([]byte(user)), &want); err != nil {
		t.Fatal(err)
	}
	want["plugin"] = []any{"user-plugin", "file:///b.js"}
	want["instructions"] = []any{"/i.md"}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("merged %s\nwant %v", got, want)
	}
	if !strings.Contains(got, "<v1>") {
		t.Errorf("the user's strings re-escaped: %s", got)
	}
	for _, c := range []struct{ user, want string }{
		{"", `{"plugin":["x"]}`},
		{"  ", `{"plugin":["x"]}`},
		{`{}`, `{"plugin":["x"]}`},
	} {
		if got, err := mergeConfig(c.user, map[string][]string{"plugin": {"x"}}); err != nil || got != c.want {
			t.Errorf("mergeConfig(%q) = %s, %v; want %s", c.user, got, err, c.want)
		}
	}
	for _, bad := range []string{"not json", `["a"]`, `{"plugin": "one"}`, `{"plugin": [`, "null"} {
		if _, err := mergeConfig(bad, map[string][]string{"plugin": {"x"}}); !errors.Is(err, errUserConfig) {
			t.Errorf("mergeConfig(%q): %v, want errUserConfig", bad, err)
		}
	}
}

// TestBridgeEnv: the plugin is written once (0600 in a 0700 folder), named
// by a file:// URL appended to the user's plugin list in
// OPENCODE_CONFIG_CONTENT; nothing for a command that starts no session
// nor for a one-shot `opencode run`; an invalid user value leaves the
// bridge unavailable.
func TestBridgeEnv(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "bridges")
	b := adapters.BridgeTarget{
		Argv: []string{"opencode", "--model", "p/m"}, SessionDir: t.TempDir(), SharedDir: shared,
		Env:         []string{"HOME=/h", configVar + `={"model":"p/m","plugin":["mine"]}`},
		HookCommand: []string{"/bin/lifeloop"},
	}
	vars, err := Harness{}.BridgeEnv(b)
	if err != nil || len(vars) != 1 {
		t.Fatalf("BridgeEnv = %q, %v", vars, err)
	}
	name, value, _ := strings.Cut(vars[0], "=")
	var cfg struct {
		Model  string   `json:"model"`
		Plugin []string `json:"plugin"`
	}
	if err := json.Unmarshal([]byte(value), &cfg); name != configVar || err != nil || cfg.Model != "p/m" || len(cfg.Plugin) != 2 || cfg.Plugin[0] != "mine" {
		t.Fatalf("%s = %s (%v)", name, value, err)
	}
	u, err := url.Parse(cfg.Plugin[1])
	if err != nil || u.Scheme != "file" || filepath.Dir(u.Path) != shared {
		t.Fatalf("plugin %q", cfg.Plugin[1])
	}
	st, err := os.Stat(u.Path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("plugin file: %v %v", st, err)
	}
	if dst, _ := os.Stat(shared); dst.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", dst.Mode().Perm())
	}
	src, _ := os.ReadFile(u.Path)
	if !strings.Contains(string(src), `const lifeloop = lifeloopBridge("opencode", ["/bin/lifeloop"]);`+"\n") || !strings.HasSuffix(string(src), bridgeSource) {
		t.Errorf("plugin source:\n%s", src)
	}
	again, _ := Harness{}.BridgeEnv(b)
	if !reflect.DeepEqual(again, vars) {
		t.Errorf("second launch %q, want %q", again, vars)
	}
	b.Argv = []string{"opencode", "--version"}
	if vars, err := (Harness{}).BridgeEnv(b); vars != nil || err != nil {
		t.Errorf("--version: %q, %v", vars, err)
	}
	for _, argv := range [][]string{{"opencode", "run", "hi"}, {"opencode", "--log-level", "INFO", "run", "-c", "go on"}, {"env", "A=1", "opencode", "run", "hi"}} {
		b.Argv = argv
		if vars, err := (Harness{}).BridgeEnv(b); vars != nil || err != nil {
			t.Errorf("%q: %q, %v, want no plugin for a one-shot", argv, vars, err)
		}
	}
	var unavailable *adapters.BridgeUnavailable
	b.Argv = []string{"env", configVar + "={}", "opencode"}
	if vars, err := (Harness{}).BridgeEnv(b); vars != nil || !errors.As(err, &unavailable) {
		t.Errorf("the command line's own assignment: %q, %v", vars, err)
	}
	b.Argv, b.Env = []string{"opencode"}, []string{configVar + "={broken"}
	if vars, err := (Harness{}).BridgeEnv(b); vars != nil || !errors.As(err, &unavailable) {
		t.Errorf("invalid user config: %q, %v", vars, err)
	}
}

// TestMapBridge: each turn report maps to its frame moments, with the
// database's frame id and no prompt text; a session report to
// session.started under its id; a compaction to context.compacted under
// its request's id (none without it).
func TestMapBridge(t *testing.T) {
	spec := Harness{}.Hooks()
	for _, c := range []struct {
		hook string
		want []contract.Event
	}{
		{hookPrompt, []contract.Event{contract.EventFrameOpening}},
		{hookReply, []contract.Event{contract.EventFrameOpened}},
		{hookEnd, []contract.Event{contract.EventFrameEnding, contract.EventFrameEnded}},
	} {
		in := `{"session_id":"ses_1","turn_id":"msg_1","cwd":"/w","trigger":"session.idle","stop_reason":"stop","hook_event_name":"` + c.hook + `"}`
		m, err := hooks.Map(spec, "opencode", c.hook, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if m.HarnessSessionID != "ses_1" || len(m.Moments) != len(c.want) {
			t.Fatalf("%s: %+v", c.hook, m)
		}
		for i, mm := range m.Moments {
			if mm.Event != c.want[i] || mm.Frame.FrameID != "msg_1" || mm.EventID != "msg_1/"+string(c.want[i]) || mm.Summary["trigger"] != "session.idle" {
				t.Errorf("%s: %+v", c.hook, mm)
			}
			if (mm.Summary["stop_reason"] == "stop") != (c.hook == hookEnd) {
				t.Errorf("%s: stop_reason %v", c.hook, mm.Summary["stop_reason"])
			}
		}
	}
	m, err := hooks.Map(spec, "opencode", hookSession, []byte(`{"session_id":"ses_2","cwd":"/w","trigger":"session.created","hook_event_name":"session"}`))
	if err != nil || m.HarnessSessionID != "ses_2" || len(m.Moments) != 1 || m.Moments[0].Event != contract.EventSessionStarted || m.Moments[0].Frame != nil || m.Moments[0].Summary["trigger"] != "session.created" {
		t.Errorf("session: %+v, %v", m, err)
	}
	m, err = hooks.Map(spec, "opencode", hookCompacted, []byte(`{"session_id":"ses_2","turn_id":"msg_c","trigger":"auto","hook_event_name":"compacted"}`))
	if err != nil || len(m.Moments) != 1 || m.Moments[0].Event != contract.EventContextCompacted || m.Moments[0].Frame != nil ||
		m.Moments[0].EventID != "msg_c/context.compacted" || m.Moments[0].Summary["trigger"] != "auto" {
		t.Errorf("compacted: %+v, %v", m, err)
	}
	m, err = hooks.Map(spec, "opencode", hookCompacted, []byte(`{"session_id":"ses_2","hook_event_name":"compacted"}`))
	if err != nil || len(m.Moments) != 1 || m.Moments[0].EventID != "" {
		t.Errorf("compacted without its request: %+v, %v", m, err)
	}
	if _, err := hooks.Map(spec, "opencode", hookSession, []byte(`{"cwd":"/w"}`)); !errors.Is(err, hooks.ErrInvalidInput) {
		t.Errorf("session without an id: %v", err)
	}
	for _, bad := range []string{`{"session_id":"ses_1"}`, `{"turn_id":"m"}`, `{"session_id":"s","turn_id":"m","hook_event_name":"reply"}`} {
		if _, err := hooks.Map(spec, "opencode", hookPrompt, []byte(bad)); !errors.Is(err, hooks.ErrInvalidInput) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
