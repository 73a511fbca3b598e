package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// safeTUI is one harness's interactive TUI as the safe-renewal tests
// drive it under `lifeloop run`.
type safeTUI struct {
	name string
	// kind is the mock's request kind of the harness's turns.
	kind string
	// start runs the TUI under lifeloop and waits until it takes input.
	start func(t testing.TB, env *testharness.HarnessEnv, state string) *testharness.Terminal
	// setup adjusts env before the start (nil: nothing).
	setup func(t testing.TB, env *testharness.HarnessEnv)
	// send submits what was typed.
	send func(term *testharness.Terminal)
	// relaunched waits for the TUI a renewal started, past byte n.
	relaunched func(t testing.TB, term *testharness.Terminal, n int)
	// dialog is what the harness's permission dialog shows for a shell
	// command; nil when this setup has no dialog to open.
	dialog *regexp.Regexp
}

// safeTUIs are the five harnesses. Codex and Pi open no permission dialog
// here: Pi has no permission system, and Codex runs a workspace write such
// as `touch` in a trusted project without asking.
var safeTUIs = []safeTUI{
	{
		name: "claude", kind: "claude",
		start: func(t testing.TB, env *testharness.HarnessEnv, state string) *testharness.Terminal {
			// The permission mode that asks: Claude Code 2.1.332 starts in
			// its auto mode, which opens no dialog for the command.
			term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), "run", "--state-dir", state, "--", testharness.ClaudeBin(t), "--permission-mode", "default"), 120, 40)
			testharness.ClaudeStarted(t, term, state, 1)
			testharness.ClaudeScreenReady(t, term, 0)
			return term
		},
		send:       func(term *testharness.Terminal) { time.Sleep(250 * time.Millisecond); term.Type("\r") },
		relaunched: testharness.ClaudeScreenReady,
		dialog:     regexp.MustCompile(`Do you want to proceed\?`),
	},
	{
		name: "codex", kind: "codex",
		start: func(t testing.TB, env *testharness.HarnessEnv, state string) *testharness.Terminal {
			term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), "run", "--state-dir", state, "--", testharness.CodexBin(t)), 120, 40)
			testharness.CodexScreenReady(t, term, 0)
			return term
		},
		send:       func(term *testharness.Terminal) { time.Sleep(250 * time.Millisecond); term.Type("\r") },
		relaunched: testharness.CodexRelaunched,
	},
	{
		name: "gemini", kind: mockmodel.KindGemini,
		start: func(t testing.TB, env *testharness.HarnessEnv, state string) *testharness.Terminal {
			return startGeminiTUIUnderLifeloop(t, env, state)
		},
		send:       geminiEnter,
		relaunched: testharness.GeminiScreenReady,
		dialog:     regexp.MustCompile(`(?i)allow execution`),
	},
	{
		name: "opencode", kind: "claude",
		setup: askBeforeBash,
		start: func(t testing.TB, env *testharness.HarnessEnv, state string) *testharness.Terminal {
			term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), "run", "--state-dir", state, "--", testharness.OpenCodeBin(t)), 120, 40)
			testharness.OpenCodeScreenReady(t, term, 0)
			return term
		},
		send: func(term *testharness.Terminal) { time.Sleep(250 * time.Millisecond); term.Type("\r") },
		// The footer: the prompt's placeholder is gone once keys typed
		// during the renewal are in it.
		relaunched: func(t testing.TB, term *testharness.Terminal, n int) {
			waitOutputAfter(t, term, n, "ctrl+p", screenTimeout)
		},
		dialog: regexp.MustCompile(`(?i)permission required`),
	},
	{
		name: "pi", kind: "claude",
		start: func(t testing.TB, env *testharness.HarnessEnv, state string) *testharness.Terminal {
			term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), "run", "--state-dir", state, "--", env.UsePi(t)), 120, 40)
			testharness.PiScreenReady(t, term, 0)
			return term
		},
		send:       func(term *testharness.Terminal) { time.Sleep(250 * time.Millisecond); term.Type("\r") },
		relaunched: testharness.PiRelaunched,
	},
}

// askBeforeBash makes OpenCode ask before it runs a shell command (it
// allows bash by default).
func askBeforeBash(t testing.TB, env *testharness.HarnessEnv) {
	t.Helper()
	path := filepath.Join(env.OpenCodeConfigDir(), "opencode.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["permission"] = map[string]any{"bash": "ask"}
	if b, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// renewSafely runs `lifeloop renew --fresh` on the only session under
// state, checks it succeeded, waits for the relaunched TUI and returns
// the session's log.
func renewSafely(t *testing.T, tc safeTUI, env *testharness.HarnessEnv, term *testharness.Terminal, state string) string {
	t.Helper()
	ses, _ := onlySession(t, state)
	before := len(term.Output())
	res := env.Run(runTimeout, lifeloopBin(t), "renew", "--state-dir", state, "--fresh", ses)
	if res.ExitCode != 0 {
		t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
	}
	tc.relaunched(t, term, before)
	log, _ := os.ReadFile(filepath.Join(state, "sessions", ses, "lifeloop.log"))
	return string(log)
}

// oneStopSignal fails unless the renewal's log shows that the stop
// needed only the harness's own stop signal: no escalation.
func oneStopSignal(t *testing.T, log string) {
	t.Helper()
	if n := strings.Count(log, "renewal: stopping the harness"); n != 1 {
		t.Errorf("the renewal's stop sent %d signals, want the stop signal alone:\n%s", n, log)
	}
}

// endSafeTUI ends lifeloop (SIGTERM reaches the harness's group) and
// checks nothing is left.
func endSafeTUI(t testing.TB, env *testharness.HarnessEnv, term *testharness.Terminal) {
	t.Helper()
	_ = term.Signal(syscall.SIGTERM)
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		t.Fatalf("lifeloop did not end after SIGTERM: %v\n%s", err, term.Output())
	}
	assertNoProcessLeft(t, env, term.Pid())
}

// TestRenewNeverApprovesADialog: with the harness's permission dialog
// open for a shell command the model asked for, `lifeloop renew` stops
// the harness without answering the dialog: the command never runs (its
// file is never created), no tool result reaches the model, and the
// harness is started again.
func TestRenewNeverApprovesADialog(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	const file = "renewal-approved-4d1c"
	for _, tc := range safeTUIs {
		if tc.dialog == nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
			env := testharness.NewHarnessEnv(t, mock)
			if tc.setup != nil {
				tc.setup(t, env)
			}
			state := stateDir(t)
			term := tc.start(t, env, state)
			at := len(term.Output())
			prompt := "please " + mockmodel.DefaultToolTrigger + " now"
			term.Type(prompt)
			// Enter only once the prompt is on the screen: on a busy
			// machine an Enter that arrives with the last typed keys is
			// taken as part of a paste (a new line), not as sending.
			if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
				t.Fatal(err)
			}
			tc.send(term)
			waitOutputMatch(t, term, at, tc.dialog)
			n := len(mock.RequestsOfKind(tc.kind))
			log := renewSafely(t, tc, env, term, state)
			oneStopSignal(t, log)
			if _, err := os.Stat(filepath.Join(env.Dir, file)); err == nil {
				t.Fatalf("the command of the open dialog ran: %s exists", file)
			}
			for _, r := range mock.RequestsOfKind(tc.kind)[n:] {
				if strings.Contains(string(r.Body), "touch "+file) && strings.Contains(string(r.Body), mockmodel.DefaultToolReply) {
					t.Errorf("a model request after the renewal carries the tool's result: %.300s", r.Body)
				}
			}
			endSafeTUI(t, env, term)
			if _, err := os.Stat(filepath.Join(env.Dir, file)); err == nil {
				t.Fatalf("the command of the open dialog ran: %s exists", file)
			}
		})
	}
}

// TestRenewNeverSendsADraft: text the person typed and did not send is
// never sent by a renewal: no model request carries it, on all five
// harnesses, and the harness's stop signal alone ended it.
func TestRenewNeverSendsADraft(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	for _, tc := range safeTUIs {
		t.Run(tc.name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{})
			env := testharness.NewHarnessEnv(t, mock)
			if tc.setup != nil {
				tc.setup(t, env)
			}
			state := stateDir(t)
			term := tc.start(t, env, state)
			const draft = "unsent draft 7be3"
			term.Type(draft)
			if err := term.WaitFor(draft, screenTimeout); err != nil {
				t.Fatal(err)
			}
			log := renewSafely(t, tc, env, term, state)
			oneStopSignal(t, log)
			for _, r := range mock.Requests() {
				if strings.Contains(string(r.Body), draft) {
					t.Fatalf("a model request carries the unsent draft (%s %s)", r.Kind, r.Path)
				}
			}
			endSafeTUI(t, env, term)
			for _, r := range mock.Requests() {
				if strings.Contains(string(r.Body), draft) {
					t.Fatalf("a model request carries the unsent draft (%s %s)", r.Kind, r.Path)
				}
			}
		})
	}
}

// waitOutputMatch waits until the output past byte n matches re.
func waitOutputMatch(t *testing.T, term *testharness.Terminal, n int, re *regexp.Regexp) {
	t.Helper()
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(50 * time.Millisecond) {
		out := term.Output()
		if len(out) > n && re.MatchString(out[n:]) {
			return
		}
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("no %v on the screen; terminal:\n%s", re, out)
		}
	}
}
