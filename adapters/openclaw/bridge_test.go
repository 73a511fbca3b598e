package openclaw

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
)

// TestBridgeEnv: for `agent --local` the plugin folder is written once
// (files 0600 in a 0700 folder) and lifeloop's configuration (0600, in
// the session folder) includes the user's file, loads the plugin and
// enables it; OPENCLAW_INCLUDE_ROOTS keeps the user's roots and adds the
// folder of their configuration. Other command lines get nothing;
// --profile leaves the bridge unavailable.
func TestBridgeEnv(t *testing.T) {
	h := home(t)
	shared := filepath.Join(t.TempDir(), "bridges")
	b := adapters.BridgeTarget{
		Argv: []string{"openclaw", "agent", "--local", "-m", "hi"}, SessionDir: t.TempDir(), SharedDir: shared,
		Env:         []string{"HOME=" + h, includeRootsVar + "=/etc/mine"},
		HookCommand: []string{"/bin/lifeloop"},
	}
	vars, err := Harness{}.BridgeEnv(b)
	if err != nil || len(vars) != 2 {
		t.Fatalf("BridgeEnv = %q, %v", vars, err)
	}
	userCfg := filepath.Join(h, ".openclaw", "openclaw.json")
	if want := includeRootsVar + "=/etc/mine:" + filepath.Dir(userCfg); vars[1] != want {
		t.Errorf("vars[1] = %q, want %q", vars[1], want)
	}
	name, path, _ := strings.Cut(vars[0], "=")
	if name != configPathVar || filepath.Dir(path) != b.SessionDir {
		t.Fatalf("vars[0] = %q, want %s=<session dir>/…", vars[0], configPathVar)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("configuration %v %v, want mode 0600", st, err)
	}
	var cfg struct {
		Include string `json:"$include"`
		Plugins struct {
			Load    struct{ Paths []string }
			Entries map[string]struct {
				Enabled bool
				Hooks   struct{ AllowConversationAccess bool }
			}
			Allow []string
		}
	}
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	e := cfg.Plugins.Entries[pluginID]
	if cfg.Include != userCfg || len(cfg.Plugins.Load.Paths) != 1 || !e.Enabled || !e.Hooks.AllowConversationAccess || cfg.Plugins.Allow != nil {
		t.Errorf("configuration %s", data)
	}
	dir := cfg.Plugins.Load.Paths[0]
	if filepath.Dir(dir) != shared {
		t.Errorf("plugin folder %s, want under %s", dir, shared)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != kit.DirPerm {
		t.Errorf("plugin folder %v %v", st, err)
	}
	for name, want := range pluginFiles(b.HookCommand) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: %v", name, err)
		}
		if st, _ := os.Stat(filepath.Join(dir, name)); st == nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, st)
		}
	}
	var manifest, pkg map[string]any
	if json.Unmarshal(pluginFiles(nil)["openclaw.plugin.json"], &manifest) != nil || manifest["id"] != pluginID ||
		json.Unmarshal(pluginFiles(nil)["package.json"], &pkg) != nil {
		t.Errorf("plugin manifest %v, package %v", manifest, pkg)
	}
	// A second launch finds the plugin in place.
	again, err := Harness{}.BridgeEnv(b)
	if err != nil || len(again) != 2 {
		t.Errorf("second BridgeEnv = %q, %v", again, err)
	}

	for _, argv := range [][]string{
		{"openclaw", "chat"},
		{"openclaw", "agent", "-m", "hi"},
		{"openclaw", "agent", "exec", "--local", "hi"},
		{"openclaw", "agent", "--local", "--help"},
		{"openclaw", "--log-level", "agent", "sessions"},
	} {
		b.Argv = argv
		if vars, err := (Harness{}).BridgeEnv(b); vars != nil || err != nil {
			t.Errorf("BridgeEnv(%q) = %q, %v; want nothing", argv, vars, err)
		}
	}
	var unavailable *adapters.BridgeUnavailable
	for _, argv := range [][]string{
		{"openclaw", "--profile", "work", "agent", "--local", "-m", "hi"},
		{"env", configPathVar + "=/x.json", "openclaw", "agent", "--local", "-m", "hi"},
	} {
		b.Argv = argv
		if _, err := (Harness{}).BridgeEnv(b); !errors.As(err, &unavailable) {
			t.Errorf("BridgeEnv(%q): %v, want BridgeUnavailable", argv, err)
		}
	}
}

// TestBridgeEnvWithoutUserConfig: with no configuration file of the
// user's, lifeloop's includes nothing and sets no include roots.
func TestBridgeEnvWithoutUserConfig(t *testing.T) {
	b := adapters.BridgeTarget{
		Argv: []string{"openclaw", "agent", "--local", "-m", "hi"}, SessionDir: t.TempDir(),
		Env: []string{"HOME=" + t.TempDir()}, HookCommand: []string{"/bin/lifeloop"},
	}
	vars, err := Harness{}.BridgeEnv(b)
	if err != nil || len(vars) != 1 || !strings.HasPrefix(vars[0], configPathVar+"=") {
		t.Fatalf("BridgeEnv = %q, %v", vars, err)
	}
	data, _ := os.ReadFile(strings.TrimPrefix(vars[0], configPathVar+"="))
	if strings.Contains(string(data), "$include") {
		t.Errorf("configuration %s includes a file", data)
	}
}

// TestWrapperKeepsTheUsersAllowList: a user's plugins.allow list (only
// its plugins load) gets the bridge added; without one none is made.
func TestWrapperKeepsTheUsersAllowList(t *testing.T) {
	user := filepath.Join(t.TempDir(), "openclaw.json")
	if err := os.WriteFile(user, []byte("{ plugins: { allow: ['mine'], }, }"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !userAllowList(user) || userAllowList("") {
		t.Fatal("userAllowList")
	}
	data, err := wrapperContent(user, "/p", true)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Plugins struct{ Allow []string } }
	if json.Unmarshal(data, &cfg) != nil || len(cfg.Plugins.Allow) != 1 || cfg.Plugins.Allow[0] != pluginID {
		t.Errorf("configuration %s", data)
	}
}

// TestReadWindowsFollowsInclude: the windows of a configuration that
// includes the user's are the user's, with the including file's own
// models on top.
func TestReadWindowsFollowsInclude(t *testing.T) {
	h := home(t)
	dir := t.TempDir()
	wrap := filepath.Join(dir, "wrap.json")
	doc := `{ "$include": ` + quote(filepath.Join(h, ".openclaw", "openclaw.json")) + `, models: { providers: { extra: { models: [ { id: "x", contextWindow: 1000 } ] } } } }`
	if err := os.WriteFile(wrap, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	w := readWindows(wrap)
	if w["mock/mock-model"] != 200000 || w["other/m2"] != 0x10000 || w["extra/x"] != 1000 {
		t.Errorf("windows %v", w)
	}
	list := filepath.Join(dir, "list.json5")
	if err := os.WriteFile(list, []byte(`{ $include: ["./wrap.json"] }`), 0o600); err != nil {
		t.Fatal(err)
	}
	if w := readWindows(list); w["mock/mock-model"] != 200000 || w["extra/x"] != 1000 {
		t.Errorf("windows through a list %v", w)
	}
	loop := filepath.Join(dir, "loop.json")
	if err := os.WriteFile(loop, []byte(`{ "$include": "./loop.json" }`), 0o600); err != nil {
		t.Fatal(err)
	}
	if w := readWindows(loop); len(w) != 0 {
		t.Errorf("windows of a looping include %v", w)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestBridgeHooksMap: the plugin's reports map to the frame moments of
// the turn they name, with its id as the frame id; a prompt's report can
// take a payload (pre_frame_leading).
func TestBridgeHooksMap(t *testing.T) {
	spec := Harness{}.Hooks()
	in := `{"session_id":"s1","turn_id":"s1#1","cwd":"/w","hook_event_name":"%s"}`
	want := map[string][]contract.Event{
		"before_prompt_build": {contract.EventFrameOpening},
		"model_call_started":  {contract.EventFrameOpened},
		"agent_end":           {contract.EventFrameEnding, contract.EventFrameEnded},
	}
	for hook, events := range want {
		m, err := hooks.Map(spec, "openclaw", hook, []byte(strings.Replace(in, "%s", hook, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if m.HarnessSessionID != "s1" || len(m.Moments) != len(events) {
			t.Fatalf("%s: %+v", hook, m)
		}
		for i, mm := range m.Moments {
			if mm.Event != events[i] || mm.Frame.FrameID != "s1#1" || mm.EventID != "s1#1/"+string(events[i]) {
				t.Errorf("%s: moment %+v", hook, mm)
			}
		}
		if got := spec.CanInject(hook); got != (hook == "before_prompt_build") {
			t.Errorf("CanInject(%s) = %v", hook, got)
		}
	}
}

// bridgeDriver imports the plugin the way OpenClaw does (an ES module
// whose default export registers handlers), fires a user turn (prompt,
// two model calls, end) and a memory-flush run, and prints what the
// prompt's handler returned.
const bridgeDriver = `
const plugin = (await import(process.argv[2])).default;
const on = {};
plugin.register({ on: (ev, fn, opts) => { on[ev] = fn; if (!(opts?.timeoutMs > 30000)) throw new Error("budget " + JSON.stringify(opts)); } });
const ctx = { sessionId: "sid-1", runId: "r1", trigger: "user", workspaceDir: "/w" };
const flush = { sessionId: "internal", runId: "r0", trigger: "memory", workspaceDir: "/w" };
await on.before_prompt_build({ prompt: "x" }, flush);
await on.model_call_started({ runId: "r0" }, { sessionId: "internal", runId: "r0" });
const r = await on.before_prompt_build({ prompt: "hi" }, ctx);
await on.model_call_started({ runId: "r1" }, { sessionId: "sid-1", runId: "r1" });
await on.model_call_started({ runId: "r1" }, { sessionId: "sid-1", runId: "r1" });
await on.agent_end({ runId: "r1", success: true }, ctx);
console.log(JSON.stringify(r ?? null));
`

// runBridge runs the plugin with the control socket at socket and a hook
// program that records its calls; it returns what the prompt's handler
// returned and the hook program's calls.
func runBridge(t *testing.T, socket string) (returned string, spawned []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	hook := filepath.Join(dir, "hook")
	script := "#!/bin/sh\necho \"$*\" >>" + calls + "\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"additionalContext\":\"FROM-PROGRAM\"}}'\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(dir, "index.mjs")
	if err := os.WriteFile(plugin, PluginSource([]string{hook}), 0o600); err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(driver, []byte(bridgeDriver), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, driver, plugin)
	cmd.Env = append(os.Environ(), "LIFELOOP_CONTROL_SOCKET="+socket)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(calls); err == nil {
		spawned = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	return strings.TrimSpace(string(out)), spawned
}

// TestBridgeCallsTheSocket: with the wrapper's control socket up, each
// report of the user's turn is one request on it (the memory flush's
// run none, a second model call none), no process is started, and the
// context answered at the prompt is prepended to it.
func TestBridgeCallsTheSocket(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "c.sock")
	var mu sync.Mutex
	var calls []string
	// The wrapper's own control server answers, as under lifeloop run.
	srv, err := control.Listen(socket, func(_ context.Context, req control.Request) (any, error) {
		var a struct {
			Adapter string            `json:"adapter"`
			Hook    string            `json:"hook"`
			Stdin   map[string]string `json:"stdin"`
		}
		_ = json.Unmarshal(req.Args, &a)
		in := a.Stdin
		mu.Lock()
		calls = append(calls, strings.Join([]string{req.Op, a.Adapter, a.Hook, in["hook_event_name"], in["session_id"], in["turn_id"], in["cwd"]}, " "))
		mu.Unlock()
		return hooks.HookReply{AdditionalContext: "CTX-" + a.Hook, Receipts: 1}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	returned, spawned := runBridge(t, socket)
	if len(spawned) != 0 {
		t.Errorf("the bridge started the hook program though the socket answered: %v", spawned)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"hook openclaw before_prompt_build before_prompt_build sid-1 sid-1#1 /w",
		"hook openclaw model_call_started model_call_started sid-1 sid-1#1 /w",
		"hook openclaw agent_end agent_end sid-1 sid-1#1 /w",
	}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("socket calls:\n%s\nwant:\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	if returned != `{"prependContext":"CTX-before_prompt_build"}` {
		t.Errorf("the prompt's handler returned %s", returned)
	}
}

// TestBridgeFallsBackToTheProgram: with no socket answering, each report
// runs the hook program (`lifeloop host-hook`), and its context still
// reaches the prompt.
func TestBridgeFallsBackToTheProgram(t *testing.T) {
	returned, spawned := runBridge(t, filepath.Join(t.TempDir(), "gone.sock"))
	want := []string{"host-hook --adapter openclaw --hook before_prompt_build", "host-hook --adapter openclaw --hook model_call_started", "host-hook --adapter openclaw --hook agent_end"}
	if strings.Join(spawned, "\n") != strings.Join(want, "\n") {
		t.Errorf("hook program calls:\n%s\nwant:\n%s", strings.Join(spawned, "\n"), strings.Join(want, "\n"))
	}
	if returned != `{"prependContext":"FROM-PROGRAM"}` {
		t.Errorf("the prompt's handler returned %s", returned)
	}
}
