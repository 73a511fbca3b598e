package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestAttentionGeminiPermission: with lifeloop's hooks installed in the
// user's Gemini settings (`host apply`: Gemini CLI has no per-launch
// settings file), the real Gemini TUI under `lifeloop run`, in its default
// approval mode, opens its confirmation for the mock's shell command: its
// Notification hook, forwarded by host-hook to the wrapper, makes status
// say needs_permission from the hook, naming the command; the answer key
// typed at the terminal makes it working (or, the turn already done,
// waiting for input), and the turn's end leaves it waiting for input. The
// ledger has no receipt of the Notification.
func TestAttentionGeminiPermission(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	const file = "attention-allowed-9c2d"
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	ll := lifeloopBin(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	if res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "gemini", "--user"); res.ExitCode != 0 {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	term := startGeminiTUIUnderLifeloop(t, env, state)
	at := len(term.Output())
	prompt := "please " + mockmodel.DefaultToolTrigger + " now"
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	geminiEnter(term)
	waitOutputMatch(t, term, at, geminiDialog)
	drawn := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttentionFrom(t, env, state, ses, 5*time.Second, "hook", "needs_permission")
	t.Logf("needs_permission seen %s after the dialog was drawn (since %s)", time.Since(drawn).Round(time.Millisecond), a.Since.Format(time.StampMilli))
	if a.Source != "hook" || a.Detail != "Confirm Shell Command: touch" {
		t.Errorf("attention at the dialog: %+v, want from hook about the shell command touch", a)
	}
	time.Sleep(300 * time.Millisecond)
	term.Type("\r") // "1. Allow once"
	waitAttention(t, env, state, ses, 5*time.Second, "working", "waiting_for_input")
	a = waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
	if a.Source != "frame" || a.WaitedSeconds < 0.3 {
		t.Errorf("attention after the turn: %+v, want waiting_for_input from the frame, having waited ≥ 0.3 s", a)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	endSafeTUI(t, env, term)
	_, receipts := onlySession(t, state)
	noAttentionReceipt(t, receipts, "Notification")
	attentionTicked(t, receipts, "needs_permission", "hook")
}

// noAttentionReceipt fails t when a receipt comes from one of the
// attention-only hooks named.
func noAttentionReceipt(t *testing.T, receipts []map[string]any, hooks ...string) {
	t.Helper()
	for _, r := range receipts {
		for _, h := range hooks {
			if dig(r, "telemetry_summary", "hook") == h {
				t.Errorf("a receipt of the attention hook %s: %v", h, r)
			}
		}
	}
}

// geminiDialog is what Gemini CLI's confirmation of a shell command shows.
var geminiDialog = regexp.MustCompile(`(?i)allow execution`)

// attentionTicked fails t unless the ledger holds a supervisor.tick whose
// attention block opened state from source: the stream shows the episode
// status showed.
func attentionTicked(t *testing.T, receipts []map[string]any, state, source string) {
	t.Helper()
	for _, r := range receipts {
		if r["event"] == "supervisor.tick" && dig(r, "telemetry_summary", "attention", "state") == state && dig(r, "telemetry_summary", "attention", "source") == source {
			return
		}
	}
	t.Errorf("no supervisor.tick with attention %s from %s in the ledger (%v)", state, source, eventsOf(receipts))
}
