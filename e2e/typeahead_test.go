package e2e

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestCodexTypeaheadDuringRenewal: keys typed while lifeloop renews the
// real Codex TUI (which drops typeahead while it starts) are held and
// reach the new Codex: the prompt typed during the renewal is the one the
// mock model gets.
func TestCodexTypeaheadDuringRenewal(t *testing.T) {
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Typeahead answered."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin), 120, 40)
	testharness.CodexScreenReady(t, term, 0)
	sessions, _ := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions %v", sessions)
	}
	ses := filepath.Base(sessions[0])

	renew := env.Command(ll, "renew", "--state-dir", state, "--fresh", ses)
	var out bytes.Buffer
	renew.Stdout, renew.Stderr = &out, &out
	if err := renew.Start(); err != nil {
		t.Fatal(err)
	}
	statusPath := renewal.StatusPath(statedir.SessionDir(state, ses))
	deadline := time.Now().Add(screenTimeout)
	for {
		if st, _ := renewal.ReadStatus(statusPath); st.State.InProgress() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewal never started; renew: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	const prompt = "typeahead prompt 5f2a"
	term.Type(prompt)
	if err := renew.Wait(); err != nil {
		t.Fatalf("lifeloop renew: %v: %s", err, out.String())
	}
	n := len(mock.RequestsOfKind("codex"))
	// The held keys reach the new Codex's prompt; Enter sends the turn.
	deadline = time.Now().Add(screenTimeout)
	for !strings.Contains(strings.Join(strings.Fields(term.Output()), ""), strings.Join(strings.Fields(prompt), "")) {
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("the keys typed during the renewal never reached the new Codex; terminal:\n%s", term.Output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	term.Type("\r")
	deadline = time.Now().Add(screenTimeout)
	for {
		found := false
		for _, r := range mock.RequestsOfKind("codex")[n:] {
			if bytes.Contains(r.Body, []byte(prompt)) {
				found = true
			}
		}
		if found {
			break
		}
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("no model request carries the prompt typed during the renewal; terminal:\n%s", term.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	testharness.CodexQuit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v)", code, sig, err)
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %v", procs)
	}
}
