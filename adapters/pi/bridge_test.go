package pi

import (
	"bufio"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
)

// bridgeDriver loads the bridge extension the way Pi does (through jiti,
// which Pi itself uses) with a stand-in for Pi's extension API, fires a
// session start and a prompt, and prints what the prompt's handler
// returned.
const bridgeDriver = `
const { createJiti } = require(process.argv[2]);
(async () => {
	const jiti = createJiti(__filename);
	const bridge = await jiti.import(process.argv[3], { default: true });
	const on = {};
	bridge({ on: (ev, fn) => { on[ev] = fn; } });
	const ctx = { cwd: "/w", sessionManager: { getSessionId: () => "sid-1", getSessionFile: () => undefined, getEntries: () => [] } };
	await on.session_start({ reason: "startup" }, ctx);
	const r = await on.before_agent_start({ prompt: "hi" }, ctx);
	await on.agent_end({}, ctx);
	console.log(JSON.stringify(r ?? null));
})();
`

// runBridge runs the bridge with the control socket at socket and a
// hook program that records its calls; it returns what the prompt's
// handler returned and the hook program's calls.
func runBridge(t *testing.T, socket string) (returned string, spawned []string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	jiti := filepath.Join(testharness.ModuleRoot(t), "harnesses", "node_modules", "jiti")
	if _, err := os.Stat(jiti); err != nil {
		t.Skip("Pi's jiti is not installed (make harnesses)")
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	hook := filepath.Join(dir, "hook")
	script := "#!/bin/sh\necho \"$*\" >>" + calls + "\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"additionalContext\":\"FROM-PROGRAM\"}}'\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	bridge := filepath.Join(dir, "bridge.ts")
	if err := os.WriteFile(bridge, BridgeSource([]string{hook}), 0o600); err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(dir, "driver.cjs")
	if err := os.WriteFile(driver, []byte(bridgeDriver), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), node, driver, jiti, bridge)
	cmd.Env = append(os.Environ(), "LIFELOOP_SESSION_DIR=", "LIFELOOP_CONTROL_SOCKET="+socket)
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
// event is one request on it — the hook call host-hook would forward —
// and no process is started; the context answered reaches the prompt.
func TestBridgeCallsTheSocket(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "c.sock")
	l, err := new(net.ListenConfig).Listen(t.Context(), "unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	var hooks []string
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadBytes('\n')
			var req struct {
				Op   string `json:"op"`
				Args struct {
					Adapter string         `json:"adapter"`
					Hook    string         `json:"hook"`
					Stdin   map[string]any `json:"stdin"`
				} `json:"args"`
			}
			_ = json.Unmarshal(line, &req)
			mu.Lock()
			hooks = append(hooks, req.Op+" "+req.Args.Adapter+" "+req.Args.Hook+" "+req.Args.Stdin["session_id"].(string)+" "+req.Args.Stdin["hook_event_name"].(string))
			mu.Unlock()
			_, _ = c.Write([]byte(`{"ok":true,"result":{"additional_context":"CTX-` + req.Args.Hook + `","receipts":1}}` + "\n"))
			_ = c.Close()
		}
	}()
	returned, spawned := runBridge(t, socket)
	if len(spawned) != 0 {
		t.Errorf("the bridge started the hook program though the socket answered: %v", spawned)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"hook pi session_start sid-1 session_start", "hook pi before_agent_start sid-1 before_agent_start", "hook pi agent_end sid-1 agent_end"}
	if strings.Join(hooks, "\n") != strings.Join(want, "\n") {
		t.Errorf("socket calls:\n%s\nwant:\n%s", strings.Join(hooks, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(returned, `CTX-session_start\n\nCTX-before_agent_start`) {
		t.Errorf("the prompt's handler returned %s, want both contexts", returned)
	}
}

// TestBridgeFallsBackToTheProgram: with no socket answering, each event
// runs the hook program (`lifeloop host-hook`, which records why the
// wrapper could not be reached), and its context still reaches the prompt.
func TestBridgeFallsBackToTheProgram(t *testing.T) {
	returned, spawned := runBridge(t, filepath.Join(t.TempDir(), "gone.sock"))
	want := []string{"host-hook --adapter pi --hook session_start", "host-hook --adapter pi --hook before_agent_start", "host-hook --adapter pi --hook agent_end"}
	if strings.Join(spawned, "\n") != strings.Join(want, "\n") {
		t.Errorf("hook program calls:\n%s\nwant:\n%s", strings.Join(spawned, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(returned, "FROM-PROGRAM") {
		t.Errorf("the prompt's handler returned %s, want the program's context", returned)
	}
}
