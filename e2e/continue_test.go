package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestContinueSessionFinishesInterruptedRenewal: a wrapper killed in the
// middle of a renewal (payload stored, harness stopped, relaunch not yet
// done) loses nothing: `lifeloop run --continue-session` relaunches with
// the pending payload, which reaches the model exactly once.
func TestContinueSessionFinishesInterruptedRenewal(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)

	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--", bin, "-p", "first")
	if res.ExitCode != 0 {
		t.Fatalf("first run: exit %d: %s", res.ExitCode, res.Stderr)
	}
	rec, err := statedir.Latest(state)
	if err != nil {
		t.Fatal(err)
	}

	// The state a wrapper killed between stopping the harness and
	// relaunching it leaves behind.
	const marker = "LIFELOOP-RECOVERED-MARKER-6"
	pf := payloadFile(t, env.Dir, "pay_recover", marker)
	put := exec.CommandContext(t.Context(), ll, "continuation", "put", "--state-dir", state, rec.ID, pf)
	put.Env = env.Env()
	if out, err := put.CombinedOutput(); err != nil {
		t.Fatalf("continuation put: %v: %s", err, out)
	}
	now := time.Now()
	if err := renewal.WriteStatus(renewal.StatusPath(statedir.SessionDir(state, rec.ID)), renewal.Status{
		State: renewal.StateRelaunching, Attempt: 1, PayloadPending: true, StartedAt: &now, UpdatedAt: now,
	}); err != nil {
		t.Fatal(err)
	}

	res = env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--continue-session", rec.ID, "--", bin, "-p", "second")
	if res.ExitCode != 0 {
		t.Fatalf("continued run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	n := len(mock.RequestsOfKind("claude"))
	if _, ok := anyRequestCarries(t, mock.RequestsOfKind("claude"), marker); !ok {
		st, _ := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(state, rec.ID)))
		logb, _ := os.ReadFile(statedir.LogPath(state, rec.ID))
		t.Fatalf("the continued session's model request does not carry the pending payload; status %+v\nlog:\n%s", st, logb)
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(state, rec.ID)))
	if err != nil || st.State != renewal.StateDelivered {
		t.Fatalf("renewal status %+v, %v", st, err)
	}
	left, _ := os.ReadDir(statedir.ContinuationPath(state, rec.ID))
	if len(left) != 0 {
		t.Errorf("continuation store still holds %d files", len(left))
	}

	// Continuing again delivers nothing twice.
	res = env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--continue-session", rec.ID, "--", bin, "-p", "third")
	if res.ExitCode != 0 {
		t.Fatalf("third run: exit %d: %s", res.ExitCode, res.Stderr)
	}
	if _, ok := anyRequestCarries(t, mock.RequestsOfKind("claude")[n:], marker); ok {
		t.Errorf("the payload was delivered a second time")
	}
	_, receipts := onlySession(t, state)
	delivered := 0
	for _, r := range receipts {
		prs, _ := r["payload_receipts"].([]any)
		for _, pr := range prs {
			if dig(pr, "payload_id") == "pay_recover" && dig(pr, "status") == "delivered" {
				delivered++
			}
		}
	}
	if delivered != 1 {
		t.Errorf("%d delivered receipts for the payload, want 1 (events %v)", delivered, eventsOf(receipts))
	}
}

// TestContinueSessionAfterALostWrapperEndsOnce: a wrapper killed with
// SIGKILL under a running Claude TUI leaves its session to be sealed
// (wrapper_lost); `run --continue-session` then runs it on to its end.
// The continuation is a new incarnation: OrgLoop gets one start and one
// end per dedupe-key session (before issue 51 its start repeated the
// first one's key, which a deduping consumer drops, and its end was a
// second end of the first start), and the ledger's last end,
// session.json, OrgLoop's last event and HCP's final state agree on how
// the session ended.
func TestContinueSessionAfterALostWrapperEndsOnce(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)

	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "0", "--", bin), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	if err := syscall.Kill(term.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		t.Fatalf("the killed wrapper did not end: %v", err)
	}
	// Any command that lists the session seals it.
	if res := env.Run(runTimeout, ll, "sessions", "--state-dir", state); res.ExitCode != 0 || !strings.Contains(res.Stdout, "lost") {
		t.Fatalf("lifeloop sessions after the wrapper's death: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	ses, _ := onlySession(t, state)

	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--continue-session", ses, "--", bin, "-p", "second")
	if res.ExitCode != 0 {
		t.Fatalf("continued run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}

	_, rs := onlySession(t, state)
	var ends []map[string]any
	for _, r := range rs {
		if r["event"] == "session.ended" {
			ends = append(ends, r)
		}
	}
	if len(ends) != 2 || dig(ends[0], "telemetry_summary", "reason") != "wrapper_lost" {
		t.Fatalf("want the sealed end, then the continuation's:\n%s", describeStream(rs))
	}
	ledgerPhase := dig(ends[1], "telemetry_summary", "phase")

	// OrgLoop, as `receipts --format orgloop` (and the webhook) project it.
	out := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--format", "orgloop", ses)
	if out.ExitCode != 0 {
		t.Fatalf("receipts --format orgloop: exit %d: %s", out.ExitCode, out.Stderr)
	}
	type life struct{ starts, ends int }
	lives := map[string]*life{}
	var keys []string
	var lastPhase string
	for line := range strings.Lines(out.Stdout) {
		var ev contract.OrgLoopEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("orgloop line %q: %v", line, err)
		}
		lc := ev.Payload.Lifecycle
		if lc.Phase == contract.PhaseActive {
			continue
		}
		keys = append(keys, lc.DedupeKey)
		inc := strings.TrimSuffix(lc.DedupeKey, ":"+string(lc.Phase))
		if lives[inc] == nil {
			lives[inc] = &life{}
		}
		if lc.Terminal {
			lives[inc].ends++
			lastPhase = string(lc.Phase)
		} else {
			lives[inc].starts++
		}
	}
	for inc, l := range lives {
		if l.starts != 1 || l.ends != 1 {
			t.Errorf("OrgLoop incarnation %s: %d starts and %d ends, want 1 and 1 (keys %v)", inc, l.starts, l.ends, keys)
		}
	}
	if len(lives) != 2 {
		t.Errorf("OrgLoop incarnations %v, want the first wrapper's and the continuation's", keys)
	}

	assertEndedCompleted(t, state, ses, rs, ledgerPhase, lastPhase)
}

// TestContinueSessionAfterAWrapperLostInsideARenewal: a real Claude TUI
// whose stop is slowed (slowStopClaude) is renewed with a payload; its
// wrapper is SIGKILLed once the renewal recorded the old harness's stop
// and the relaunch's session.starting, before its session.started. The
// sealed end carries renewal_interrupted and posts nothing to OrgLoop;
// `run --continue-session` finishes the renewal (its payload reaches
// the model) and runs on to the harness's exit. OrgLoop then has the
// story of a renewal never interrupted — one start and one end per
// incarnation — and the ledger's last end, session.json, OrgLoop's last
// terminal event and HCP's final state say completed. Before, the
// sealed end closed the first incarnation and the continuation's end
// was a third end for two starts.
func TestContinueSessionAfterAWrapperLostInsideARenewal(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	s := startSlowStopClaudeAfterATurn(t, "Plain answer.", "0")
	ll, real, mock, env, term, state, ses := s.ll, s.real, s.mock, s.env, s.term, s.state, s.ses

	const marker = "LOST-IN-RENEWAL-MARKER-8d21"
	pf := writePayloadFile(t, "pay_lost", marker, contract.PlacementDeveloperEquivalentFrame)
	renew := exec.CommandContext(t.Context(), ll, "renew", "--state-dir", state, "--resume", "--payload", pf, ses)
	renew.Env = env.Env()
	if err := renew.Start(); err != nil {
		t.Fatal(err)
	}
	renewed := make(chan error, 1)
	go func() { renewed <- renew.Wait() }()

	// Kill the wrapper between the relaunch's session.starting and its
	// session.started.
	step := func(rs []map[string]any, event, name string) bool {
		for _, r := range rs {
			if r["event"] == event && dig(r, "telemetry_summary", "renewal_step") == name {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(10 * time.Millisecond) {
		_, rs := onlySession(t, state)
		if step(rs, "session.starting", "starting") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the renewal recorded no relaunch session.starting:\n%s", describeStream(rs))
		}
	}
	if err := syscall.Kill(term.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		t.Fatalf("the killed wrapper did not end: %v", err)
	}
	<-renewed // it fails: its wrapper is gone
	if _, rs := onlySession(t, state); step(rs, "session.started", "started") {
		t.Fatalf("the relaunch's session.started was recorded before the wrapper was killed (the window this test needs was missed):\n%s", describeStream(rs))
	}
	// Any command that lists the session seals it, once the relaunch the
	// killed wrapper was starting has died of the hangup too (until then
	// it may hold what the wrapper held).
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(200 * time.Millisecond) {
		res := env.Run(runTimeout, ll, "sessions", "--state-dir", state)
		if res.ExitCode == 0 && strings.Contains(res.Stdout, "lost") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lifeloop sessions after the wrapper's death: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	_, rs := onlySession(t, state)
	sealed := rs[len(rs)-1]
	if sealed["event"] != "session.ended" || dig(sealed, "telemetry_summary", "reason") != "wrapper_lost" || dig(sealed, "telemetry_summary", "renewal_interrupted") != float64(1) {
		t.Errorf("want the sealed end of a wrapper lost inside renewal 1 last:\n%s", describeStream(rs))
	}

	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--continue-session", ses, "--", real, "-p", "second")
	if res.ExitCode != 0 {
		t.Fatalf("continued run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, ok := anyRequestCarries(t, mock.RequestsOfKind("claude"), marker); !ok {
		t.Errorf("no model request carries the interrupted renewal's payload")
	}

	_, rs = onlySession(t, state)
	last := lastOf(rs, "session.ended")
	ledgerPhase := dig(last, "telemetry_summary", "phase")
	out := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--format", "orgloop", ses)
	if out.ExitCode != 0 {
		t.Fatalf("receipts --format orgloop: exit %d: %s", out.ExitCode, out.Stderr)
	}
	var keys []string
	var lastPhase string
	for line := range strings.Lines(out.Stdout) {
		var ev contract.OrgLoopEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("orgloop line %q: %v", line, err)
		}
		lc := ev.Payload.Lifecycle
		if lc.Phase == contract.PhaseActive {
			continue
		}
		keys = append(keys, lc.DedupeKey)
		if lc.Terminal {
			lastPhase = string(lc.Phase)
		}
	}
	k := "claude-code:" + ses
	want := []string{k + ":started", k + ".r1:stopped", k + ".r1:started", k + ":completed"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("OrgLoop keys\n got %v\nwant %v\nreceipts:\n%s", keys, want, describeStream(rs))
	}

	assertEndedCompleted(t, state, ses, rs, ledgerPhase, lastPhase)
}

// assertEndedCompleted checks that the ledger's last end (ledgerPhase),
// OrgLoop's last event (lastPhase), session.json and the HCP projection of
// receipts rs all say the session completed.
func assertEndedCompleted(t *testing.T, state, ses string, rs []map[string]any, ledgerPhase any, lastPhase string) {
	t.Helper()
	p := hcp.NewProjector(ses)
	for _, m := range rs {
		b, _ := json.Marshal(m)
		var r contract.LifecycleReceipt
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		p.Project(r)
	}
	rec, err := statedir.ReadSession(state, ses)
	if err != nil {
		t.Fatal(err)
	}
	if ledgerPhase != "completed" || lastPhase != "completed" || rec.State != statedir.StateCompleted || p.State() != hcp.StateCompleted {
		t.Errorf("how the session ended: ledger %v, OrgLoop %s, session.json %s, HCP %s; want completed in all four", ledgerPhase, lastPhase, rec.State, p.State())
	}
}
