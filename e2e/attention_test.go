package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// attentionJSON is the attention block of `lifeloop status --json`.
type attentionJSON struct {
	State         string    `json:"state"`
	Since         time.Time `json:"since"`
	Source        string    `json:"source"`
	Detail        string    `json:"detail"`
	WaitedSeconds float64   `json:"waited_seconds"`
}

// waitAttention polls `lifeloop status --json` of session id until its
// attention is in one of states, and returns it.
func waitAttention(t *testing.T, env *testharness.HarnessEnv, state, id string, within time.Duration, states ...string) attentionJSON {
	t.Helper()
	var last attentionJSON
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		var st struct {
			Live      bool           `json:"live"`
			Attention *attentionJSON `json:"attention"`
		}
		llJSON(t, env, &st, "status", "--state-dir", state, "--json", id)
		if st.Attention != nil {
			last = *st.Attention
			for _, s := range states {
				if last.State == s {
					return last
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("status attention %+v (live %v) after %s, want one of %v", st.Attention, st.Live, within, states)
		}
	}
}

// waitAttentionFrom waits as waitAttention does and then, up to within
// again, until the state is told by source: the dialog's text on the
// screen may tell it first, and the hook, more trusted, takes the
// episode over when its report arrives.
func waitAttentionFrom(t *testing.T, env *testharness.HarnessEnv, state, id string, within time.Duration, source string, states ...string) attentionJSON {
	t.Helper()
	a := waitAttention(t, env, state, id, within, states...)
	for deadline := time.Now().Add(within); a.Source != source && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		a = waitAttention(t, env, state, id, within, states...)
	}
	return a
}

// screenPermissionAnswered follows a permission dialog that only the
// screen tells (its text just drawn on term) for the shell command that
// creates file: status says needs_permission from the screen while the
// command has not run; Enter (the dialog's first choice, allow) makes it
// working or waiting_for_input, the command runs, and the turn's end
// leaves it waiting_for_input from the frame; the ledger's ticks carry
// the episode. It ends the TUI.
func screenPermissionAnswered(t *testing.T, env *testharness.HarnessEnv, state string, term *testharness.Terminal, file string) {
	t.Helper()
	drawn := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttention(t, env, state, ses, 10*time.Second, "needs_permission")
	t.Logf("needs_permission in status %s after the test's terminal showed the dialog", time.Since(drawn).Round(time.Millisecond))
	if a.Source != "screen" {
		t.Errorf("attention at the dialog: %+v, want needs_permission from the screen", a)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err == nil {
		t.Fatal("the command ran before it was allowed")
	}
	time.Sleep(300 * time.Millisecond)
	term.Type("\r") // the first choice: allow
	after := waitAttention(t, env, state, ses, 10*time.Second, "working", "waiting_for_input")
	if after.State == "needs_permission" {
		t.Errorf("the answered dialog reopened: %+v", after)
	}
	a = waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
	if a.Source != "frame" {
		t.Errorf("attention after the turn: %+v, want waiting_for_input from the frame", a)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	endSafeTUI(t, env, term)
	_, receipts := onlySession(t, state)
	attentionTicked(t, receipts, "needs_permission", "screen")
}

// TestAttentionClaudePermission: under `lifeloop run`, the real Claude
// TUI in its asking permission mode opens its dialog for the mock's shell
// command: status says needs_permission, from the PermissionRequest hook,
// naming the tool, within a few seconds of the dialog; the answer key
// typed at the terminal makes it working (or, the turn already done,
// waiting for input), and the turn's end leaves it waiting for input with
// the time waited counted. The ledger has no receipt of it.
func TestAttentionClaudePermission(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	const file = "attention-allowed-5b1e"
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	tc := safeTUIs[0]
	if tc.name != "claude" {
		t.Fatalf("safeTUIs[0] is %s, want claude", tc.name)
	}
	term := tc.start(t, env, state)
	at := len(term.Output())
	prompt := "please " + mockmodel.DefaultToolTrigger + " now"
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	tc.send(term)
	waitOutputMatch(t, term, at, tc.dialog)
	drawn := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttentionFrom(t, env, state, ses, 5*time.Second, "hook", "needs_permission")
	t.Logf("needs_permission seen %s after the dialog was drawn (since %s, from the %s)", time.Since(drawn).Round(time.Millisecond), a.Since.Format(time.StampMilli), a.Source)
	if a.Source != "hook" || a.Detail != "Bash" {
		t.Errorf("attention at the dialog: %+v, want from hook about Bash", a)
	}
	time.Sleep(300 * time.Millisecond)
	term.Type("\r") // "1. Yes"
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
	for _, r := range receipts {
		if b, _ := r["telemetry_summary"].(map[string]any); b != nil {
			if h, _ := b["hook"].(string); strings.HasPrefix(h, "Permission") || h == "Notification" || h == "StopFailure" {
				t.Errorf("a receipt of an attention hook: %v", r)
			}
		}
	}
}
