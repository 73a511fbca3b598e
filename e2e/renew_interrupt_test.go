package e2e

import (
	"bytes"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestSIGINTDuringClaudeRenewal: SIGINT sent to lifeloop while it renews
// the real Claude TUI is honoured at once — the supervisor loop is not
// busy with the renewal — and the session ends cancelled with no process
// left; a renewal it cut short keeps its payload in the continuation
// store. The stream stays coherent (stateDir's checker).
func TestSIGINTDuringClaudeRenewal(t *testing.T) {
	skipShort(t)
	term, env, state := startClaudeTUIUnderLifeloop(t, "unused")
	ll := lifeloopBin(t)
	sessions, _ := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions %v", sessions)
	}
	ses := filepath.Base(sessions[0])
	pf := writePayloadFile(t, "pay_interrupted", "INTERRUPTED-RENEWAL-PAYLOAD", contract.PlacementDeveloperEquivalentFrame)

	renew := env.Command(ll, "renew", "--state-dir", state, "--fresh", "--payload", pf, ses)
	var out bytes.Buffer
	renew.Stdout, renew.Stderr = &out, &out
	if err := renew.Start(); err != nil {
		t.Fatal(err)
	}
	statusPath := renewal.StatusPath(statedir.SessionDir(state, ses))
	var at renewal.State
	deadline := time.Now().Add(screenTimeout)
	for {
		st, _ := renewal.ReadStatus(statusPath)
		if st.State.InProgress() {
			at = st.State
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewal never started: status %+v; renew: %s", st, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	sent := time.Now()
	if err := syscall.Kill(term.Pid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		t.Fatalf("lifeloop did not end after SIGINT during the renewal (%s): %v\n%s", at, err, term.Output())
	}
	took := time.Since(sent)
	_ = renew.Wait()
	t.Logf("SIGINT at renewal state %s; lifeloop ended %v later; renew said: %s", at, took, bytes.TrimSpace(out.Bytes()))
	// Prompt: within the default grace (5 s) and its SIGKILL, never the
	// 4×grace a renewal may take.
	if took > 8*time.Second {
		t.Errorf("lifeloop took %v to end after SIGINT", took)
	}

	rec := sessionRecord(t, state, ses)
	if rec["state"] != "aborted" || dig(rec, "exit", "outcome") != "cancelled" {
		t.Errorf("session.json state %v exit %v, want aborted and outcome cancelled", rec["state"], rec["exit"])
	}
	st, _ := renewal.ReadStatus(statusPath)
	if st.State != renewal.StateDelivered {
		if st.State != renewal.StateFailed {
			t.Errorf("renewal status %s after the interrupted renewal, want failed (or delivered)", st.State)
		}
		store := &renewal.Store{Dir: statedir.ContinuationPath(state, ses)}
		pending, err := store.Pending()
		if err != nil || !slices.ContainsFunc(pending, func(p contract.PayloadEnvelope) bool { return p.PayloadID == "pay_interrupted" }) {
			t.Errorf("the interrupted renewal's payload is not in the store: %v %v", pending, err)
		}
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %v", procs)
	}
}
