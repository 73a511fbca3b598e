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

// TestRenewWithANote: a person hands a real Claude session a markdown
// note with the one-line renewal `lifeloop renew --latest --note
// handoff.md --resume`: no envelope written by hand, the note reaches the
// resumed conversation's next model request, and renew says how it was
// placed in both placement vocabularies.
func TestRenewWithANote(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	term, env, state, _ := claudeTUIAfterOneTurn(t, "Reply before the note.", "first prompt 7e3a")
	const note = "# Handoff\n\nNOTE-MARKER-3b9d: continue with step 2, the tests are green.\n"
	if err := os.WriteFile(filepath.Join(env.Dir, "handoff.md"), []byte(note), 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(term.Output())
	n := len(env.Mock.RequestsOfKind("claude"))
	res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--latest", "--note", "handoff.md", "--resume")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
		t.Fatalf("lifeloop renew --note: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
	}
	if !strings.Contains(res.Stdout, "payload placement") || !strings.Contains(res.Stdout, "manifest placement") {
		t.Errorf("renew does not name the placement in both vocabularies: %s", res.Stdout)
	}
	if strings.Contains(res.Stdout+res.Stderr, "NOTE-MARKER-3b9d") {
		t.Error("renew printed the note")
	}
	testharness.ClaudeStarted(t, term, state, 2)
	term.Type("second prompt 4c8f")
	waitOutputAfter(t, term, before, "second prompt 4c8f", screenTimeout)
	term.Type("\r")
	var turn []mockmodel.Request
	for deadline := time.Now().Add(screenTimeout); len(turn) == 0; time.Sleep(100 * time.Millisecond) {
		for _, r := range env.Mock.RequestsOfKind("claude")[n:] {
			if strings.Contains(string(r.Body), "second prompt 4c8f") {
				turn = append(turn, r)
			}
		}
		if len(turn) == 0 && (time.Now().After(deadline) || term.Exited()) {
			t.Fatalf("no model request for the second prompt; terminal:\n%s", term.Output())
		}
	}
	if _, ok := requestCarries(t, turn[0].Body, "NOTE-MARKER-3b9d: continue with step 2"); !ok {
		t.Error("the resumed conversation's request does not carry the note")
	}
	if _, ok := requestCarries(t, turn[0].Body, "first prompt 7e3a"); !ok {
		t.Error("the renewed session did not resume the conversation")
	}
	testharness.ClaudeExit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v)", code, sig, err)
	}
	assertNoProcessLeft(t, env, term.Pid())
}
