package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// Where a renewal is, as seen from its files: the renewal status and the
// session's ledger. A renewal only moves forward through these stages.
const (
	stageNotBegun    = iota // an earlier renewal's status, or none
	stageStopping           // status stopping, session.ending not recorded yet
	stageStopHarness        // status stopping, session.ending recorded: the stop signal is sent, the harness is being stopped
	stageEnded              // the old harness ended: the renewal's session.ended is recorded, the status still says stopping
	stageRelaunching        // status relaunching: the new harness is being started
	stagePending            // status pending_delivery: the new harness started with the payload
	stageDone               // delivered, failed or expired
)

var stageNames = []string{"not begun", "stopping", "stopping the harness", "harness ended", "relaunching", "pending_delivery", "done"}

// renewalWatch reads a session's renewal progress for attempt.
type renewalWatch struct {
	statusPath, ledgerPath string
	attempt                int

	ledgerSize int64
	ended      bool
}

// observe returns the renewal's stage and its status. The ledger is read
// again only when it grew; a line being appended while it is read is
// skipped (it is read whole on the next call).
func (w *renewalWatch) observe() (int, renewal.Status) {
	st, err := renewal.ReadStatus(w.statusPath)
	if err != nil {
		return stageNotBegun, st
	}
	if fi, err := os.Stat(w.ledgerPath); err == nil && fi.Size() != w.ledgerSize && !w.ended {
		b, _ := os.ReadFile(w.ledgerPath)
		w.ledgerSize = int64(len(b))
		for _, line := range bytes.Split(b, []byte("\n")) {
			var r map[string]any
			if json.Unmarshal(line, &r) != nil {
				continue
			}
			if r["event"] == "session.ended" && dig(r, "telemetry_summary", "renewal_step") == "ended" &&
				num(dig(r, "telemetry_summary", "renewal_attempt")) == w.attempt {
				w.ended = true
			}
		}
	}
	if st.Attempt < w.attempt {
		return stageNotBegun, st
	}
	switch st.State {
	case renewal.StateStopping:
		switch {
		case w.ended:
			return stageEnded, st
		case st.EndingReceiptID != "":
			return stageStopHarness, st
		}
		return stageStopping, st
	case renewal.StateRelaunching:
		return stageRelaunching, st
	case renewal.StatePendingDelivery:
		return stagePending, st
	case renewal.StateNotAttempted:
		return stageNotBegun, st
	}
	return stageDone, st
}

// freeze stops pid (SIGSTOP) and returns once none of its threads can run,
// so that the files it writes stay as they are until thaw or a kill. A
// thread inside a system call (an fsync, a rename) stops when the call
// returns.
func freeze(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP lifeloop: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for !allThreadsStopped(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("lifeloop (pid %d) did not stop within a minute of SIGSTOP", pid)
		}
		time.Sleep(time.Millisecond)
	}
}

func thaw(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT lifeloop: %v", err)
	}
}

// allThreadsStopped reports whether every thread of pid is stopped (or
// the process is gone).
func allThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return true
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			continue // the thread exited
		}
		// stat: tid (comm) state ...
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return false
		}
		switch b[i+2] {
		case 'T', 't', 'Z', 'X':
		default:
			return false
		}
	}
	return true
}

// waitCmd waits up to timeout for cmd (started) to exit; on timeout it
// kills the process and fails the test.
func waitCmd(t *testing.T, cmd *exec.Cmd, timeout time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		t.Errorf("%s did not exit within %v; killed", strings.Join(cmd.Args, " "), timeout)
	}
}

// TestRenewCrashRecovery kills the wrapper (SIGKILL on `lifeloop run`,
// nothing else) in the middle of a renewal of a real interactive Claude
// session, then continues the session with `lifeloop run
// --continue-session ... -- claude -p`: the continued wrapper finishes the
// renewal, the continuation payload reaches the continued session's model
// requests, the ledger holds exactly one delivered receipt for it, the
// renewal status is delivered (recovered), the continuation store is
// empty and no process is left.
//
// Kill points (lifeloop is frozen with SIGSTOP as soon as its files show
// the stage, the stage is read again while it cannot move, then lifeloop
// is killed):
//
//   - stopping: status stopping with session.ending recorded: the exit
//     command is typed and the old harness is being stopped. Claude takes
//     seconds to exit, so this is always hit; polled every 2ms.
//   - harness_ended: the old harness has ended and the renewal's
//     session.ended is in the ledger, the status still says stopping.
//   - relaunching: status relaunching, before or after session.starting is
//     recorded and the new harness started (the documented window after
//     Process.Start, before pending_delivery is written).
//
// The last two last a few milliseconds together (fsynced writes and the
// exec of the new harness), so the files are polled every 200µs there.
// When lifeloop is found already past the stage, it is let go, the renewal
// finishes normally and a new one is tried on the same session, up to
// maxTries; the test skips (it does not fail) when the stage is never
// caught on a machine too loaded to see it.
//
//   - pending_delivery: the new harness was started with the payload; it
//     dies with its wrapper, so the continued wrapper starts one again with
//     the payload (Orchestrator.Recover). A kill right after session.started
//     was recorded, before the status says so, records that step again with
//     the same renewal_attempt and renewal_step — consumers drop the repeat,
//     and so does this test.
func TestRenewCrashRecovery(t *testing.T) {
	skipShort(t)
	points := []struct {
		name  string
		stage int
		every time.Duration
	}{
		{"stopping", stageStopHarness, 2 * time.Millisecond},
		{"harness_ended", stageEnded, 200 * time.Microsecond},
		{"relaunching", stageRelaunching, 200 * time.Microsecond},
		{"pending_delivery", stagePending, 200 * time.Microsecond},
	}
	for _, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			testRenewCrash(t, pt.stage, pt.every)
		})
	}
}

func testRenewCrash(t *testing.T, killStage int, every time.Duration) {
	const maxTries = 5
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "0", "--", bin), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	sessions, _ := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions %v", sessions)
	}
	ses := filepath.Base(sessions[0])
	dir := statedir.SessionDir(state, ses)
	pid := term.Pid() // lifeloop; the harness runs in a session of its own

	var payloadIDs []string
	var marker string
	var renew *exec.Cmd
	var renewOut bytes.Buffer
	var killed renewal.Status
	for attempt := 1; ; attempt++ {
		if attempt > maxTries {
			t.Skipf("the renewal never stopped at stage %q in %d renewals: the step is too short on this machine", stageNames[killStage], maxTries)
		}
		id := fmt.Sprintf("pay_crash_%d", attempt)
		marker = fmt.Sprintf("RENEW-CRASH-MARKER-%s-%d", strings.ReplaceAll(stageNames[killStage], " ", "-"), attempt)
		payloadIDs = append(payloadIDs, id)
		pf := writePayloadFile(t, id, marker, contract.PlacementDeveloperEquivalentFrame)
		renewOut.Reset()
		renew = env.Command(ll, "renew", "--state-dir", state, "--reason", "e2e crash", "--payload", pf, ses)
		renew.Stdout, renew.Stderr = &renewOut, &renewOut
		if err := renew.Start(); err != nil {
			t.Fatal(err)
		}

		w := &renewalWatch{statusPath: renewal.StatusPath(dir), ledgerPath: statedir.ReceiptsPath(state, ses), attempt: attempt}
		deadline := time.Now().Add(screenTimeout)
		var stage int
		for {
			stage, killed = w.observe()
			if stage >= killStage {
				freeze(t, pid)
				if stage, killed = w.observe(); stage >= killStage {
					break
				}
				thaw(t, pid)
			}
			if time.Now().After(deadline) || term.Exited() {
				t.Fatalf("renewal at stage %q, status %+v, after %v; terminal:\n%s", stageNames[stage], killed, screenTimeout, term.Output())
			}
			time.Sleep(every)
		}
		if stage == killStage {
			break
		}
		// Past the kill point: let this renewal finish and try again.
		t.Logf("renewal %d was already at stage %q when lifeloop stopped; trying again", attempt, stageNames[stage])
		thaw(t, pid)
		waitCmd(t, renew, runTimeout)
		if !strings.Contains(renewOut.String(), "renewal delivered") {
			t.Fatalf("renewal %d: %s", attempt, renewOut.String())
		}
		testharness.ClaudeStarted(t, term, state, attempt+1) // the first launch and one per renewal
	}
	t.Logf("killed lifeloop in renewal %d at %q: status %s, session.starting recorded %v",
		len(payloadIDs), stageNames[killStage], killed.State, killed.StartingReceiptID != "")

	// SIGKILL lifeloop only; then end what it left running: the renew
	// call (its connection is gone) and the harness (own process group).
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, sig, err := term.WaitTimeout(screenTimeout); err != nil || sig != syscall.SIGKILL {
		t.Fatalf("lifeloop after SIGKILL: signal %v, %v", sig, err)
	}
	waitCmd(t, renew, runTimeout)
	if renew.ProcessState.ExitCode() == 0 || strings.Contains(renewOut.String(), "renewal delivered") {
		t.Errorf("renew reported success although its wrapper was killed: %s", renewOut.String())
	}
	if rec, err := statedir.ReadSession(state, ses); err == nil && rec.Pid > 0 {
		_ = syscall.Kill(-rec.Pid, syscall.SIGKILL)
		if left := testharness.WaitProcessGroupGone(rec.Pid, 15*time.Second); len(left) > 0 {
			t.Fatalf("the harness's process group survives SIGKILL: %v", left)
		}
	}
	// A harness started just before the kill may not be in session.json yet.
	for _, p := range env.KillStrays() {
		t.Logf("killed a process the killed wrapper left: %v", p)
	}
	n := len(mock.RequestsOfKind("claude"))

	const prompt = "next step 3b9f"
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--continue-session", ses, "--", bin, "-p", prompt)
	if res.ExitCode != 0 {
		t.Fatalf("continued run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	reqs := mock.RequestsOfKind("claude")[n:]
	if _, ok := anyRequestCarries(t, reqs, prompt); !ok {
		t.Errorf("no model request of the continued session (%d requests)", len(reqs))
	}
	if _, ok := anyRequestCarries(t, reqs, marker); !ok {
		st, _ := renewal.ReadStatus(renewal.StatusPath(dir))
		logb, _ := os.ReadFile(statedir.LogPath(state, ses))
		t.Errorf("the continued session's model requests do not carry the payload; status %+v\nlog:\n%s", st, logb)
	}

	_, receipts := onlySession(t, state)
	for i, id := range payloadIDs {
		// One per renewal step: a step recorded twice (a kill between
		// its record and the status write) has the same attempt and step.
		steps := map[string]bool{}
		for _, r := range receipts {
			prs, _ := r["payload_receipts"].([]any)
			for _, pr := range prs {
				if dig(pr, "payload_id") == id && dig(pr, "status") == "delivered" {
					steps[fmt.Sprint(dig(r, "telemetry_summary", "renewal_attempt"), "/", dig(r, "telemetry_summary", "renewal_step"))] = true
				}
			}
		}
		if delivered := len(steps); delivered != 1 {
			t.Errorf("%d delivered receipts for %s (renewal %d), want 1; events %v", delivered, id, i+1, eventsOf(receipts))
		}
	}
	started := 0
	for _, r := range receipts {
		if r["event"] == "session.started" && dig(r, "telemetry_summary", "renewal_step") == "started" &&
			num(dig(r, "telemetry_summary", "renewal_attempt")) == len(payloadIDs) {
			started++
		}
	}
	if started < 1 || started > 1 && killStage != stagePending {
		t.Errorf("the killed renewal's session.started recorded %d times, want 1", started)
	}
	if ledger, _ := os.ReadFile(statedir.ReceiptsPath(state, ses)); bytes.Contains(ledger, []byte(marker)) {
		t.Error("the ledger carries the payload body")
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(dir))
	if err != nil || st.State != renewal.StateDelivered || st.Attempt != len(payloadIDs) || !st.Recovered || st.PayloadPending {
		t.Errorf("renewal status %+v, %v; want delivered, attempt %d, recovered", st, err, len(payloadIDs))
	}
	if left, _ := os.ReadDir(statedir.ContinuationPath(state, ses)); len(left) != 0 {
		t.Errorf("continuation store still holds %d files", len(left))
	}
	deadline := time.Now().Add(15 * time.Second)
	for procs := env.StrayProcesses(); len(procs) > 0; procs = env.StrayProcesses() {
		if time.Now().After(deadline) {
			t.Errorf("processes left behind: %v", procs)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}
