package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// The renewal policy (`lifeloop run --renew-at`, `lifeloop autorenew`)
// on the real TUIs, driven over its threshold by the mock's usage.

const (
	// autorenewAt is the threshold the tests give the policy.
	autorenewAt = "70%"
	// autorenewSettle is the policy's default settle: how long the
	// session is between turns before it asks.
	autorenewSettle = 2 * time.Second
	// noteHeader starts the built-in handoff note.
	noteHeader = "# Handoff note: session "
)

// autoTUI is one harness's TUI as the policy tests drive it.
type autoTUI struct {
	name string
	// kind is the mock's request kind of the harness's turns.
	kind string
	// window is the context window lifeloop reads for the harness here.
	window int
	// env is the harness's environment around mock, its window set.
	env func(t testing.TB, mock *mockmodel.Server) *testharness.HarnessEnv
	// argv is the harness's command line after `lifeloop run ... --`.
	argv func(t testing.TB, env *testharness.HarnessEnv) []string
	// runFlags go to `lifeloop run` besides the policy's.
	runFlags []string
	cols     int
	// ready waits until the TUI takes keys past byte n of the output.
	ready func(t testing.TB, term *testharness.Terminal, n int)
	// relaunched waits for the TUI a renewal started, past byte n.
	relaunched func(t testing.TB, term *testharness.Terminal, n int)
	// send submits what was typed (once it shows).
	send func(term *testharness.Terminal)
	// sendsNote: the note's placement is the relaunched TUI's first
	// message (argv, under --payload-argv-ok), which the TUI sends by
	// itself; otherwise the note waits for the next typed prompt.
	sendsNote bool
}

// usage is the mock usage of a response that fills pct percent of h's
// window.
func (h autoTUI) usage(pct int) mockmodel.Usage {
	return mockmodel.Usage{InputTokens: h.window*pct/100 - 100, OutputTokens: 100}
}

func sendAfterPause(term *testharness.Terminal) { time.Sleep(250 * time.Millisecond); term.Type("\r") }

// autoTUIs are the six harnesses' TUIs. Windows: Claude and Codex
// 100 000 (CLAUDE_CODE_MAX_CONTEXT_TOKENS, model_context_window),
// OpenCode 100 000 (its model limits), Pi and OpenClaw their mock
// model's 200 000, Gemini CLI 209 715 (its compression threshold 0.2 of
// 1 048 576, so the CLI's own compression stays below what we report).
var autoTUIs = map[string]autoTUI{
	"claude": {
		name: "claude", kind: "claude", window: 100000,
		env: func(t testing.TB, mock *mockmodel.Server) *testharness.HarnessEnv {
			env := testharness.NewHarnessEnv(t, mock)
			env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
			return env
		},
		argv:       func(t testing.TB, _ *testharness.HarnessEnv) []string { return []string{testharness.ClaudeBin(t)} },
		ready:      testharness.ClaudeScreenReady,
		relaunched: testharness.ClaudeScreenReady,
		send:       sendAfterPause,
	},
	"codex": {
		name: "codex", kind: "codex", window: 100000,
		env: func(t testing.TB, mock *mockmodel.Server) *testharness.HarnessEnv {
			return testharness.NewHarnessEnv(t, mock)
		},
		argv: func(t testing.TB, _ *testharness.HarnessEnv) []string {
			return []string{testharness.CodexBin(t), "-c", "model_context_window=100000"}
		},
		ready:      testharness.CodexScreenReady,
		relaunched: testharness.CodexRelaunched,
		send:       sendAfterPause,
	},
	"gemini": {
		name: "gemini", kind: mockmodel.KindGemini, window: 209715,
		env: func(t testing.TB, mock *mockmodel.Server) *testharness.HarnessEnv {
			env := testharness.NewHarnessEnv(t, mock)
			dir := filepath.Join(env.Dir, ".gemini")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"model":{"compressionThreshold":0.2}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			return env
		},
		argv: func(t testing.TB, _ *testharness.HarnessEnv) []string {
			return []string{testharness.GeminiBin(t), "-m", testharness.GeminiModel}
		},
		runFlags:   []string{"--payload-argv-ok"},
		ready:      testharness.GeminiScreenReady,
		relaunched: testharness.GeminiScreenReady,
		send:       geminiEnter,
		sendsNote:  true,
	},
	"opencode": {
		name: "opencode", kind: "claude", window: 100000,
		env: func(t testing.TB, mock *mockmodel.Server) *testharness.HarnessEnv {
			env := testharness.NewHarnessEnv(t, mock)
			env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 100000, Output: 1000})
			return env
		},
		argv:       func(t testing.TB, _ *testharness.HarnessEnv) []string { return []string{testharness.OpenCodeBin(t)} },
		ready:      testharness.OpenCodeScreenReady,
		relaunched: testharness.OpenCodeRelaunched,
		send:       sendAfterPause,
	},
	"pi": {
		name: "pi", kind: "claude", window: testharness.PiContextWindow,
		env: func(t testing.TB, mock *mockmodel.Server) *testharness.HarnessEnv {
			return testharness.NewHarnessEnv(t, mock)
		},
		argv:       func(t testing.TB, env *testharness.HarnessEnv) []string { return []string{env.UsePi(t)} },
		ready:      testharness.PiScreenReady,
		relaunched: testharness.PiRelaunched,
		send:       sendAfterPause,
	},
	"openclaw": {
		name: "openclaw", kind: "claude", window: testharness.OpenClawContextWindow,
		env: func(t testing.TB, mock *mockmodel.Server) *testharness.HarnessEnv {
			return testharness.NewHarnessEnv(t, mock)
		},
		argv:       func(t testing.TB, env *testharness.HarnessEnv) []string { return []string{env.UseOpenClaw(t), "chat"} },
		runFlags:   []string{"--payload-argv-ok"},
		cols:       160,
		ready:      testharness.OpenClawScreenReady,
		relaunched: func(testing.TB, *testharness.Terminal, int) {},
		send:       sendAfterPause,
		sendsNote:  true,
	},
}

// startAutoTUI runs h's TUI under `lifeloop run --renew-at 70%` (plus
// extra run flags) and waits until it takes keys.
func startAutoTUI(t testing.TB, h autoTUI, env *testharness.HarnessEnv, state string, extra ...string) *testharness.Terminal {
	t.Helper()
	args := slices.Concat([]string{"run", "--state-dir", state, "--tick", "1s"}, extra, h.runFlags, []string{"--"}, h.argv(t, env))
	cols := h.cols
	if cols == 0 {
		cols = 120
	}
	term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), args...), cols, 40)
	h.ready(t, term, 0)
	return term
}

// prompt types text, waits until the TUI shows it past the current
// output, and submits it.
func (h autoTUI) prompt(t testing.TB, term *testharness.Terminal, text string) {
	t.Helper()
	at := len(term.Output())
	term.Type(text)
	if err := term.WaitForAfter(at, text, screenTimeout); err != nil {
		t.Fatal(err)
	}
	h.send(term)
}

// renewalReceipts returns the receipts of the session's renewals (those
// whose telemetry_summary says reason "renewal").
func renewalReceipts(rs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range rs {
		if dig(r, "telemetry_summary", "reason") == "renewal" && dig(r, "telemetry_summary", "renewal_step") != nil {
			out = append(out, r)
		}
	}
	return out
}

// renewalsStarted counts the renewals whose relaunched harness started.
func renewalsStarted(rs []map[string]any) int {
	n := 0
	for _, r := range renewalReceipts(rs) {
		if r["event"] == "session.started" {
			n++
		}
	}
	return n
}

// policyReports returns the policy's capability.degraded reports.
func policyReports(rs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range receiptsFor(rs, "capability.degraded") {
		if dig(r, "telemetry_summary", "policy", "client") == renewal.PolicyClientID {
			out = append(out, r)
		}
	}
	return out
}

// waitSession waits until the ledger of session ses satisfies ok, up to
// runTimeout, and shows the ledger's events when it does not.
func waitSession(t *testing.T, term *testharness.Terminal, state, ses, what string, ok func([]map[string]any) bool) []map[string]any {
	t.Helper()
	path := filepath.Join(state, "sessions", ses, "receipts.jsonl")
	var rs []map[string]any
	for deadline := time.Now().Add(runTimeout); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			if rs = readJSONL(t, path); ok(rs) {
				return rs
			}
		}
		if time.Now().After(deadline) {
			screen := ""
			if term != nil {
				screen = tailText(testharness.StripANSI(term.Output()), 3000)
			}
			t.Fatalf("session %s: no %s in the ledger; events %v\n%s\nscreen:\n%s", ses, what, eventsOf(rs), policyLog(state, ses), screen)
		}
	}
}

// policyLog is the policy client's log and state in the session folder,
// for failure messages.
func policyLog(state, ses string) string {
	dir := filepath.Join(state, "sessions", ses)
	log, _ := os.ReadFile(filepath.Join(dir, "companion.log"))
	st, _ := os.ReadFile(filepath.Join(dir, "autorenew.json"))
	return fmt.Sprintf("companion.log:\n%s\nautorenew.json: %s", tailText(string(log), 3000), st)
}

// waitRequest waits for the first request of kind after the first n
// that carries text, and returns its body.
func waitRequest(t *testing.T, term *testharness.Terminal, mock *mockmodel.Server, kind string, n int, text string) []byte {
	t.Helper()
	// runTimeout, not screenTimeout: a relaunched OpenClaw that sends the
	// note as its first message took over 2 min to send it on a loaded
	// machine (89 s alone).
	for deadline := time.Now().Add(runTimeout); ; time.Sleep(100 * time.Millisecond) {
		reqs := mock.RequestsOfKind(kind)
		for _, r := range reqs[min(n, len(reqs)):] {
			if _, ok := requestCarries(t, r.Body, text); ok {
				return r.Body
			}
		}
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("no %s model request carries %q; screen:\n%s", kind, text, tailText(testharness.StripANSI(term.Output()), 3000))
		}
	}
}

// indexOf is the index in rs of the first receipt at or after from that
// satisfies ok, or -1.
func indexOf(rs []map[string]any, from int, ok func(map[string]any) bool) int {
	for i := max(from, 0); i < len(rs); i++ {
		if ok(rs[i]) {
			return i
		}
	}
	return -1
}

func isEvent(ev string) func(map[string]any) bool {
	return func(r map[string]any) bool { return r["event"] == ev }
}

func isRenewalStep(step string) func(map[string]any) bool {
	return func(r map[string]any) bool {
		return dig(r, "telemetry_summary", "reason") == "renewal" && dig(r, "telemetry_summary", "renewal_step") == step
	}
}

// assertPolicyRenewals checks the session's policy renewals: exactly want
// of them, each complete (ending, ended, starting, started) and carrying
// the policy's evidence, each asked between turns: its session.ending
// comes after a frame.ended that follows a pressure reading at or above
// the threshold, with no frame opened between them, and at least the
// settle after it.
func assertPolicyRenewals(t *testing.T, rs []map[string]any, want int) {
	t.Helper()
	var steps []string
	for _, r := range renewalReceipts(rs) {
		steps = append(steps, fmt.Sprint(dig(r, "telemetry_summary", "renewal_step")))
		p, _ := dig(r, "telemetry_summary", "policy").(map[string]any)
		if p["client"] != renewal.PolicyClientID || p["threshold_percent"] != 70.0 ||
			num(p["trigger_percent"]) < 70 || p["note_digest"] == nil || num(p["note_bytes"]) <= 0 ||
			p["note_source"] != "builtin" || num(p["renewals_this_hour"]) < 1 {
			t.Errorf("%s of the renewal: policy evidence %s", r["event"], toJSON(p))
		}
	}
	if got, wantSteps := strings.Join(steps, " "), strings.TrimSpace(strings.Repeat("ending ended starting started ", want)); got != wantSteps {
		t.Fatalf("renewal receipts %q, want %q; events %v", got, wantSteps, pressureTrail(rs))
	}
	for from := 0; ; {
		ending := indexOf(rs, from, isRenewalStep("ending"))
		if ending < 0 {
			break
		}
		from = ending + 1
		ended := -1
		for i := ending - 1; i >= 0 && ended < 0; i-- {
			switch rs[i]["event"] {
			case "frame.ended":
				ended = i
			case "frame.opening", "frame.opened":
				t.Errorf("a frame opened (receipt %d, %s) after the last frame.ended and before the renewal's session.ending (%d): events %v", i, rs[i]["event"], ending, eventsOf(rs))
				i = -1
			}
		}
		if ended < 0 {
			t.Errorf("no frame.ended before the renewal's session.ending (%d): %v", ending, eventsOf(rs))
			continue
		}
		// The crossing reading may be recorded just after its turn's
		// frame.ended (the transcript is read after the Stop hook).
		crossed := false
		for _, r := range rs[:ending] {
			if r["event"] == "context.pressure_observed" && num(dig(r, "telemetry_summary", "percent")) >= 70 {
				crossed = true
			}
		}
		if !crossed {
			t.Errorf("no pressure reading at or above 70%% before the renewal's session.ending (%d): %v", ending, pressureTrail(rs))
		}
		if gap := num(rs[ending]["at_epoch_s"]) - num(rs[ended]["at_epoch_s"]); gap < int(autorenewSettle/time.Second) {
			t.Errorf("the renewal's session.ending came %d s after the frame.ended, want at least the settle %v", gap, autorenewSettle)
		}
	}
}

// pressureTrail lists the ledger's events with the pressure readings'
// percent, for failure messages.
func pressureTrail(rs []map[string]any) []string {
	var out []string
	for i, r := range rs {
		if r["event"] == "supervisor.tick" {
			continue
		}
		e := fmt.Sprintf("%d:%s", i, r["event"])
		if r["event"] == "context.pressure_observed" {
			e += fmt.Sprintf("(%v%%)", dig(r, "telemetry_summary", "percent"))
		}
		out = append(out, e)
	}
	return out
}

// assertNoNoteInLedger fails when the session's ledger holds the note's
// body.
func assertNoNoteInLedger(t *testing.T, state, ses string) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(state, "sessions", ses, "receipts.jsonl"))
	if strings.Contains(string(b), noteHeader) || strings.Contains(string(b), "## Task (first prompts)") {
		t.Error("the ledger carries the handoff note's body")
	}
}

func TestAutorenewClaude(t *testing.T)   { autorenewOnce(t, autoTUIs["claude"]) }
func TestAutorenewCodex(t *testing.T)    { autorenewOnce(t, autoTUIs["codex"]) }
func TestAutorenewGemini(t *testing.T)   { autorenewOnce(t, autoTUIs["gemini"]) }
func TestAutorenewOpenCode(t *testing.T) { autorenewOnce(t, autoTUIs["opencode"]) }
func TestAutorenewPi(t *testing.T)       { autorenewOnce(t, autoTUIs["pi"]) }
func TestAutorenewOpenClaw(t *testing.T) { autorenewOnce(t, autoTUIs["openclaw"]) }

// autorenewOnce: a session under `lifeloop run --renew-at 70%` whose first
// answer fills 80 % of the window is renewed exactly once, fresh, after
// that turn's frame ended (and the settle), with the policy's evidence on
// the renewal's receipts; the new conversation's next model request
// carries the handoff note (its header, and the first prompt's marker,
// which only the note can bring to a fresh conversation); a second turn at
// 15 % renews nothing more. The ledger never holds the note's body, and
// SIGTERM ends the session with no process left (the policy client
// included).
func autorenewOnce(t *testing.T, h autoTUI) {
	skipShort(t)
	marker := "AR-TASK-" + h.name + "-5e1f"
	mock := startMock(t, mockmodel.Config{Reply: "Reply from the mock.", UsageSequence: []mockmodel.Usage{h.usage(80)}, Usage: h.usage(15)})
	env := h.env(t, mock)
	state := stateDir(t)
	term := startAutoTUI(t, h, env, state, "--renew-at", autorenewAt)
	h.prompt(t, term, "first prompt "+marker)
	testharness.WaitReceipts(t, term, state, "frame.ended", 1, runTimeout)
	ses, _ := onlySession(t, state)
	n := len(mock.RequestsOfKind(h.kind))
	before := len(term.Output())
	waitSession(t, term, state, ses, "policy renewal", func(rs []map[string]any) bool { return renewalsStarted(rs) >= 1 })
	h.relaunched(t, term, before)

	var turn []byte
	if h.sendsNote {
		turn = waitRequest(t, term, mock, h.kind, n, marker)
		waitSession(t, term, state, ses, "frame.ended of the note's turn", func(rs []map[string]any) bool { return countFrames(rs) >= 2 })
	} else {
		h.prompt(t, term, "second prompt 3a7d")
		turn = waitRequest(t, term, mock, h.kind, n, "second prompt 3a7d")
		if _, ok := requestCarries(t, turn, marker); !ok {
			t.Errorf("the new conversation's request does not carry the first prompt's marker (the note's task)")
		}
		waitSession(t, term, state, ses, "frame.ended of the second turn", func(rs []map[string]any) bool { return countFrames(rs) >= 2 })
	}
	if _, ok := requestCarries(t, turn, noteHeader); !ok {
		t.Errorf("the new conversation's request does not carry the note's header %q", noteHeader)
	}
	time.Sleep(autorenewSettle + 3*time.Second)
	_, rs := onlySession(t, state)
	assertPolicyRenewals(t, rs, 1)
	if reps := policyReports(rs); len(reps) != 0 {
		t.Errorf("policy reports %s", toJSON(reps))
	}
	assertNoNoteInLedger(t, state, ses)
	endSafeTUI(t, env, term)
}
