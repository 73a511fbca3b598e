package kit_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/testharness"
)

// The hook bridge runtime (bridge.js) is tested here under every
// JavaScript runtime the harnesses load their bridges with — the PATH's
// Node (Pi's), the newer Node installed for OpenClaw, and the Bun inside
// OpenCode's executable — against the wrapper's own control server
// (internal/control), which decodes each request as the supervisor does
// (hooks.DecodeHookArgs).

// jsRuntime is one JavaScript runtime: its executable and the
// environment it needs.
type jsRuntime struct {
	path string
	env  []string
}

// runtimes returns the JavaScript runtimes installed here by name and
// version; the test is skipped when there is none.
func runtimes(t *testing.T) map[string]jsRuntime {
	t.Helper()
	found := map[string]jsRuntime{}
	if p, err := exec.LookPath("node"); err == nil {
		found["node"] = jsRuntime{path: p}
	}
	if root, err := testharness.FindModuleRoot(); err == nil {
		if d := testharness.OpenClawNodeDir(filepath.Join(root, "harnesses", "openclaw", "node_modules", ".bin", "openclaw")); d != "" {
			found["node#openclaw"] = jsRuntime{path: filepath.Join(d, "node")}
		}
	}
	if dir, err := testharness.HarnessBinDir(); err == nil {
		// A Bun-compiled executable runs as Bun itself with BUN_BE_BUN=1.
		if p := filepath.Join(dir, "opencode"); fileExists(p) {
			found["bun"] = jsRuntime{path: p, env: []string{"BUN_BE_BUN=1"}}
		}
	}
	out := map[string]jsRuntime{}
	for name, rt := range found {
		cmd := exec.CommandContext(t.Context(), rt.path, "--version")
		cmd.Env = append(os.Environ(), rt.env...)
		v, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s --version: %v", rt.path, err)
		}
		name, _, _ = strings.Cut(name, "#")
		out[name+"-"+strings.TrimPrefix(strings.TrimSpace(string(v)), "v")] = rt
	}
	if len(out) == 0 {
		t.Skip("neither node nor bun is installed")
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// bridgeDriver imports a bridge module whose glue exports `lifeloop`,
// makes the calls named in argv[3] ([hook, input] pairs) all at once, as
// a harness that does not wait for its handlers would, and prints what
// each resolved to once every call is settled.
const bridgeDriver = `
const lifeloop = (await import(process.argv[2])).default;
const calls = JSON.parse(process.argv[3]);
const answers = Promise.all(calls.map(([hook, input]) => lifeloop.call(hook, input)));
await lifeloop.settled();
console.log(JSON.stringify(await answers));
`

// probeAdapter is the adapter the test's bridge reports for.
const probeAdapter = "probe"

// call is one call the driver makes.
type call struct {
	Hook  string
	Input map[string]any
}

func (c call) MarshalJSON() ([]byte, error) { return json.Marshal([]any{c.Hook, c.Input}) }

// bridgeRun is what one run of the driver saw.
type bridgeRun struct {
	answers []string // what each call resolved to
	spawned []string // the fallback program's arguments, one line per run
	stdins  []string // the fallback program's stdin, one per run
}

// runBridge runs calls through a bridge module under rt with the control
// socket at socket ("" for none) and a fallback program that records its
// arguments and stdin and answers FROM-PROGRAM.
func runBridge(t *testing.T, rt jsRuntime, socket string, calls []call) bridgeRun {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	program := filepath.Join(dir, "lifeloop")
	script := "#!/bin/sh\necho \"$*\" >>" + log + "\ncat >>" + log + ".stdin\necho >>" + log + ".stdin\n" +
		"echo '{\"hookSpecificOutput\":{\"additionalContext\":\"FROM-PROGRAM\"}}'\n"
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	module := filepath.Join(dir, "bridge.mjs")
	// The program is run through /bin/sh: a script just written can fail
	// to exec (ETXTBSY) while a parallel test's fork still holds its
	// descriptor, and the runtime answers such a failure quietly.
	if err := os.WriteFile(module, kit.BridgeModule(probeAdapter, []string{"/bin/sh", program}, "export default lifeloop;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(driver, []byte(bridgeDriver), 0o600); err != nil {
		t.Fatal(err)
	}
	arg, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), rt.path, driver, module, string(arg))
	cmd.Env = append(append(os.Environ(), rt.env...), control.SocketEnv+"="+socket)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", rt.path, err, out, stderr.String())
	}
	var r bridgeRun
	if err := json.Unmarshal(out, &r.answers); err != nil {
		t.Fatalf("driver printed %q: %v\n%s", out, err, stderr.String())
	}
	if b, err := os.ReadFile(log); err == nil {
		r.spawned = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	if b, err := os.ReadFile(log + ".stdin"); err == nil {
		r.stdins = strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	return r
}

// wrapper is a control server answering hook calls as the supervisor's
// would, recording each call it decoded.
type wrapper struct {
	mu       sync.Mutex
	calls    []hooks.HookArgs
	inFlight int
	overlap  bool // a call arrived while another was being answered
	answer   func(a hooks.HookArgs) (any, error)
}

// listen serves w on a control socket in a temporary folder and returns
// the socket's path and the server (closed when the test ends).
func (w *wrapper) listen(t *testing.T) (string, *control.Server) {
	t.Helper()
	path := control.SocketIn(t.TempDir())
	srv, err := control.Listen(path, w.handle, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return path, srv
}

func (w *wrapper) handle(ctx context.Context, req control.Request) (any, error) {
	if req.Op != control.OpHook {
		return nil, errors.New("unknown op " + req.Op)
	}
	a, err := hooks.DecodeHookArgs(req.Args)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	first := len(w.calls) == 0
	w.calls = append(w.calls, a)
	w.inFlight++
	w.overlap = w.overlap || w.inFlight > 1
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.inFlight--
		w.mu.Unlock()
	}()
	if first {
		// The first answer is held back a moment, so that calls made at
		// once would overlap here if the runtime did not order them.
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
		}
	}
	return w.answer(a)
}

// contextFor answers each call with a context naming its hook.
func contextFor(a hooks.HookArgs) (any, error) {
	return hooks.HookReply{AdditionalContext: "CTX-" + a.Hook, Receipts: 1}, nil
}

var probeCalls = []call{
	{"start", map[string]any{"session_id": "s1", "cwd": "/w"}},
	{"prompt", map[string]any{"session_id": "s1", "turn_id": "s1#1", "prompt": "naïve 日本語 \u2028 \"quoted\""}},
	{"end", map[string]any{"session_id": "s1", "turn_id": "s1#1", "reason": "stop"}},
}

// TestBridgeRuntimeCallsTheControlSocket: with the wrapper's control
// socket up, each call is one hook request on it, in the order the calls
// were made and never two at once, carrying the adapter, the hook and the
// input with hook_event_name, as the supervisor decodes it; each call
// resolves to the context the wrapper answered, and no process starts.
func TestBridgeRuntimeCallsTheControlSocket(t *testing.T) {
	for name, rt := range runtimes(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := &wrapper{answer: contextFor}
			socket, _ := w.listen(t)
			r := runBridge(t, rt, socket, probeCalls)
			if len(r.spawned) != 0 {
				t.Errorf("the fallback program ran though the socket answered: %q", r.spawned)
			}
			if want := []string{"CTX-start", "CTX-prompt", "CTX-end"}; strings.Join(r.answers, ",") != strings.Join(want, ",") {
				t.Errorf("calls resolved to %q, want %q", r.answers, want)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.overlap {
				t.Error("a call reached the wrapper while the one before it was still being answered")
			}
			if len(w.calls) != len(probeCalls) {
				t.Fatalf("the wrapper got %d calls, want %d: %+v", len(w.calls), len(probeCalls), w.calls)
			}
			for i, a := range w.calls {
				c := probeCalls[i]
				if a.Adapter != probeAdapter || a.Hook != c.Hook || a.StdinBase64 != "" || len(a.Argv) != 0 {
					t.Errorf("call %d: adapter %q, hook %q, stdin %s, stdin_base64 %q, argv %q; want adapter %s, hook %s, JSON stdin", i, a.Adapter, a.Hook, a.Stdin, a.StdinBase64, a.Argv, probeAdapter, c.Hook)
				}
				var in map[string]any
				if err := json.Unmarshal(a.Stdin, &in); err != nil {
					t.Fatalf("call %d: stdin %s: %v", i, a.Stdin, err)
				}
				want := map[string]any{"hook_event_name": c.Hook}
				for k, v := range c.Input {
					want[k] = v
				}
				if got, _ := json.Marshal(in); string(got) != mustJSON(t, want) {
					t.Errorf("call %d: stdin %s, want %s", i, got, mustJSON(t, want))
				}
			}
		})
	}
}

// TestBridgeRuntimeReadsALongAnswer: an answer longer than one read of
// the socket, with characters whose bytes a read may split, arrives as
// the wrapper sent it.
func TestBridgeRuntimeReadsALongAnswer(t *testing.T) {
	long := strings.Repeat("é日本語🙂", 40000) // about 500 kB
	for name, rt := range runtimes(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := &wrapper{answer: func(hooks.HookArgs) (any, error) {
				return hooks.HookReply{AdditionalContext: long, Receipts: 1}, nil
			}}
			socket, _ := w.listen(t)
			r := runBridge(t, rt, socket, probeCalls[:1])
			if len(r.answers) != 1 || r.answers[0] != long {
				got := ""
				if len(r.answers) == 1 {
					got = r.answers[0]
				}
				t.Errorf("the call resolved to %d bytes (%d replacement characters), want the %d bytes sent", len(got), strings.Count(got, "\uFFFD"), len(long))
			}
		})
	}
}

// TestBridgeRuntimeFallsBackToTheProgram: when the wrapper cannot be
// reached — no socket named, the socket gone with its wrapper, a socket
// file nobody listens on — or answers an error, each call runs
// `PROGRAM host-hook --adapter ADAPTER --hook HOOK` with the input on
// stdin, one after the other, and resolves to the context it printed.
func TestBridgeRuntimeFallsBackToTheProgram(t *testing.T) {
	cases := map[string]func(t *testing.T) string{
		"no socket": func(*testing.T) string { return "" },
		"wrapper gone": func(t *testing.T) string {
			socket, srv := (&wrapper{answer: contextFor}).listen(t)
			srv.Close()
			return socket
		},
		"nobody listening": func(t *testing.T) string {
			socket := control.SocketIn(t.TempDir())
			l, err := net.ListenUnix("unix", &net.UnixAddr{Name: socket, Net: "unix"})
			if err != nil {
				t.Fatal(err)
			}
			l.SetUnlinkOnClose(false)
			_ = l.Close()
			return socket
		},
		"wrapper refuses": func(t *testing.T) string {
			socket, _ := (&wrapper{answer: func(hooks.HookArgs) (any, error) {
				return nil, errors.New("refused")
			}}).listen(t)
			return socket
		},
	}
	for name, rt := range runtimes(t) {
		for what, socket := range cases {
			t.Run(name+"/"+what, func(t *testing.T) {
				t.Parallel()
				r := runBridge(t, rt, socket(t), probeCalls)
				var want, wantStdin []string
				for _, c := range probeCalls {
					want = append(want, "host-hook --adapter "+probeAdapter+" --hook "+c.Hook)
					in := map[string]any{"hook_event_name": c.Hook}
					for k, v := range c.Input {
						in[k] = v
					}
					wantStdin = append(wantStdin, mustJSON(t, in))
				}
				if strings.Join(r.spawned, "\n") != strings.Join(want, "\n") {
					t.Errorf("the program ran with:\n%s\nwant:\n%s", strings.Join(r.spawned, "\n"), strings.Join(want, "\n"))
				}
				for i, s := range r.stdins {
					var in map[string]any
					if err := json.Unmarshal([]byte(s), &in); err != nil {
						t.Fatalf("stdin %d: %q: %v", i, s, err)
					}
					if got := mustJSON(t, in); i >= len(wantStdin) || got != wantStdin[i] {
						t.Errorf("stdin %d: %s, want %v", i, got, wantStdin)
					}
				}
				if strings.Join(r.answers, ",") != "FROM-PROGRAM,FROM-PROGRAM,FROM-PROGRAM" {
					t.Errorf("calls resolved to %q, want the program's context", r.answers)
				}
			})
		}
	}
}

// mustJSON is v's JSON with sorted keys.
func mustJSON(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
