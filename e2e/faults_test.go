package e2e

// The fault suite (docs/reliability.md): a full disk, a read-only remount,
// a wrapper killed at random points, an orphaned harness, a killed
// harness, many concurrent sessions, hostile control clients and hook
// input. Each asserts that no acknowledged receipt is lost, that ledgers
// verify once sealed, that the user is told, and that memory stays
// bounded. None needs a real harness.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// faultEnv is an isolated environment for lifeloop processes the test
// starts and kills; every process carrying its marker is killed when the
// test ends.
func faultEnv(t *testing.T) *testharness.HarnessEnv {
	t.Helper()
	skipShort(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	t.Cleanup(func() {
		if left := env.KillStrays(); len(left) > 0 {
			t.Errorf("processes left behind: %+v", left)
		}
	})
	return env
}

// llJSON runs a lifeloop command that prints JSON and decodes it.
func llJSON(t *testing.T, env *testharness.HarnessEnv, out any, args ...string) {
	t.Helper()
	res := env.Run(30*time.Second, lifeloopBin(t), args...)
	if res.ExitCode != 0 {
		t.Fatalf("lifeloop %s: exit %d\n%s", strings.Join(args, " "), res.ExitCode, res.Stderr)
	}
	if err := json.Unmarshal([]byte(res.Stdout), out); err != nil {
		t.Fatalf("lifeloop %s: %v\n%s", strings.Join(args, " "), err, res.Stdout)
	}
}

type sessionJSON struct {
	ID    string `json:"id"`
	State string `json:"state"`
	Pid   int    `json:"pid"`
}

func sessionsOf(t *testing.T, env *testharness.HarnessEnv, state string) []sessionJSON {
	t.Helper()
	var out []sessionJSON
	llJSON(t, env, &out, "sessions", "--state-dir", state, "--json")
	return out
}

// waitForEvent waits until the only session under state has recorded ev.
func waitForEvent(t *testing.T, state, ev string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for id, rs := range sessionLedgers(t, state) {
			if lastOf(rs, ev) != nil {
				return id
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s recorded under %s within %v", ev, state, timeout)
	return ""
}

// assertSealedOnce checks that a session's ledger verifies and ends with
// exactly one session.ended.
func assertSealedOnce(t *testing.T, env *testharness.HarnessEnv, state, id, reason string) []map[string]any {
	t.Helper()
	res := env.Run(30*time.Second, lifeloopBin(t), "ledger", "verify", "--state-dir", state, id)
	if res.ExitCode != 0 {
		t.Fatalf("ledger verify %s: exit %d\n%s%s", id, res.ExitCode, res.Stdout, res.Stderr)
	}
	rs := readJSONL(t, filepath.Join(state, "sessions", id, "receipts.jsonl"))
	n := 0
	for _, r := range rs {
		if r["event"] == "session.ended" {
			n++
		}
	}
	last := rs[len(rs)-1]
	if n != 1 || last["event"] != "session.ended" {
		t.Fatalf("session %s: %d session.ended, last receipt %v\n%s", id, n, last["event"], describeStream(rs))
	}
	if reason != "" && dig(last, "telemetry_summary", "reason") != reason {
		t.Fatalf("session %s ended with reason %v, want %s", id, dig(last, "telemetry_summary", "reason"), reason)
	}
	return rs
}

func groupAlive(pgid int) bool { return len(testharness.ProcessGroupMembers(pgid)) > 0 }

// TestKilledWrapperIsSealedAndItsOrphanStopped: kill -9 of the wrapper of
// a harness that ignores the terminal's hangup. The harness lives on as an
// orphan; sessions shows lost; the ledger gets exactly one session.ended;
// status names the orphan and abort stops it.
func TestKilledWrapperIsSealedAndItsOrphanStopped(t *testing.T) {
	t.Parallel() // see the package doc
	env := faultEnv(t)
	state := stateDir(t)
	cmd := env.Command(lifeloopBin(t), "run", "--state-dir", state, "--tick", "50ms", "--",
		"bash", "-c", `trap "" HUP; sleep 60; echo done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id := waitForEvent(t, state, "session.started", 20*time.Second)
	time.Sleep(150 * time.Millisecond) // a few ticks
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	var st struct {
		Live       bool        `json:"live"`
		Session    sessionJSON `json:"session"`
		OrphanPids []int       `json:"orphan_pids"`
	}
	llJSON(t, env, &st, "status", "--state-dir", state, "--json", id)
	if st.Live || st.Session.State != "lost" || len(st.OrphanPids) == 0 {
		t.Fatalf("status after kill -9 of the wrapper: %+v", st)
	}
	ss := sessionsOf(t, env, state)
	if len(ss) != 1 || ss[0].State != "lost" {
		t.Fatalf("sessions: %+v", ss)
	}
	assertSealedOnce(t, env, state, id, "wrapper_lost")

	res := env.Run(30*time.Second, lifeloopBin(t), "abort", "--state-dir", state, id)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "stopped the orphaned harness") {
		t.Fatalf("abort of the orphan: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if groupAlive(st.Session.Pid) {
		t.Fatalf("the orphaned harness group %d still runs after abort", st.Session.Pid)
	}
	assertSealedOnce(t, env, state, id, "wrapper_lost") // abort added nothing
}

// TestHarnessDiesWithItsKilledWrapper: a harness that does not ignore the
// hangup ends when its wrapper is killed (the kernel hangs up the PTY), so
// the common case leaves no orphan.
func TestHarnessDiesWithItsKilledWrapper(t *testing.T) {
	t.Parallel() // see the package doc
	env := faultEnv(t)
	state := stateDir(t)
	cmd := env.Command(lifeloopBin(t), "run", "--state-dir", state, "--", "sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForEvent(t, state, "session.started", 20*time.Second)
	ss := sessionsOf(t, env, state)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if left := testharness.WaitProcessGroupGone(ss[0].Pid, 10*time.Second); left != nil {
		t.Fatalf("the harness outlived its killed wrapper: %+v", left)
	}
	// The next run seals it while its own harness runs, before anyone
	// lists the sessions.
	if res := env.Run(30*time.Second, lifeloopBin(t), "run", "--state-dir", state, "--", "sleep", "3"); res.ExitCode != 0 {
		t.Fatalf("second run: exit %d\n%s", res.ExitCode, res.Stderr)
	}
	b, err := os.ReadFile(filepath.Join(state, "sessions", ss[0].ID, "session.json"))
	if err != nil || !strings.Contains(string(b), `"state": "lost"`) {
		t.Fatalf("the next run did not seal the lost session: %v\n%s", err, b)
	}
	assertSealedOnce(t, env, state, ss[0].ID, "wrapper_lost")
}

// TestWrapperKilledAtRandomPoints: SIGKILL of the wrapper at random
// moments of many short sessions, in both durability modes; afterwards
// every session is ended or lost, every ledger verifies and tells one
// coherent story (stateDir's check), and every receipt a sink was handed
// (acknowledged) is in the ledger.
func TestWrapperKilledAtRandomPoints(t *testing.T) {
	t.Parallel() // see the package doc
	for _, mode := range []string{"group", "sync"} {
		t.Run(mode, func(t *testing.T) {
			env := faultEnv(t)
			state := stateDir(t)
			const runs = 8
			var sinks []string
			for i := range runs {
				events := filepath.Join(t.TempDir(), fmt.Sprintf("events-%d.jsonl", i))
				sinks = append(sinks, events)
				cmd := env.Command(lifeloopBin(t), "run", "--state-dir", state, "--durability", mode, "--events", events,
					"--tick", "10ms", "--", "sh", "-c", "echo hi; sleep 0.3")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				delay := time.Duration(rand.IntN(450)) * time.Millisecond
				if i == 0 {
					delay = 0 // before anything is recorded
				}
				time.Sleep(delay)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				_ = cmd.Wait()
			}
			// A harness outlives its killed wrapper by its 0.3 s of sleep;
			// the check for strays at the end is for what does not end.
			for deadline := time.Now().Add(10 * time.Second); len(env.StrayProcesses()) > 0 && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
			ss := sessionsOf(t, env, state)
			recorded := map[string]bool{}
			lost := 0
			for _, s := range ss {
				switch s.State {
				case "lost":
					lost++
				case "completed":
				default:
					t.Errorf("session %s is %s after its wrapper was killed", s.ID, s.State)
				}
				if _, err := os.Stat(filepath.Join(state, "sessions", s.ID, "receipts.jsonl")); err == nil {
					for _, r := range assertSealedOnce(t, env, state, s.ID, "") {
						recorded[r["receipt_id"].(string)] = true
					}
				}
			}
			acked := 0
			for _, path := range sinks {
				if _, err := os.Stat(path); err != nil {
					continue
				}
				for _, r := range readJSONL(t, path) {
					if r["sequence"] == nil {
						continue
					}
					acked++
					if !recorded[r["receipt_id"].(string)] {
						t.Errorf("receipt %v (%v) reached a sink but is not in the ledger", r["receipt_id"], r["event"])
					}
				}
			}
			t.Logf("%d sessions (a kill before the session folder existed leaves none), %d lost, %d completed; %d acknowledged receipts all in the ledgers",
				len(ss), lost, len(ss)-lost, acked)
		})
	}
}

// TestKilledHarnessIsRecorded: SIGKILL of the harness itself ends the
// session with the signal, the wrapper exits 137.
func TestKilledHarnessIsRecorded(t *testing.T) {
	t.Parallel() // see the package doc
	env := faultEnv(t)
	state := stateDir(t)
	res := env.Run(30*time.Second, lifeloopBin(t), "run", "--state-dir", state, "--", "sh", "-c", "kill -9 $$")
	if res.ExitCode != 137 {
		t.Fatalf("exit %d, want 137\n%s", res.ExitCode, res.Stderr)
	}
	id, _ := onlySession(t, state)
	assertSealedOnce(t, env, state, id, "sigkill")
}

// faultInjectionCovers names the tests that cover a full disk without
// root.
const faultInjectionCovers = "the full-disk path is covered by internal/ledger's fault-injecting TestSpool* tests"

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// TestFullStateDisk: the state folder's disk fills while the harness
// runs. The harness runs to its end and its exit code passes through; run
// tells on stderr, after the harness, which session lacks how many
// receipts; once space returns, sessions seals the session, whose ledger
// verifies and ends with session.ended; the log stays short.
func TestFullStateDisk(t *testing.T) {
	t.Parallel() // see the package doc
	env, cmd, stderr, state, id, filler := runFillingDisk(t, `for i in $(seq 30); do echo line $i; sleep 0.05; done; exit 7`)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("run on a full disk: %v, want the harness's exit 7\nstderr: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], id) || !strings.Contains(lines[0], "receipts were not recorded") ||
		!strings.Contains(lines[0], "no space left on device") {
		t.Fatalf("stderr after a full disk, want one line naming the session and the cause:\n%s", stderr.String())
	}
	t.Logf("run said: %s", lines[0])

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	ss := sessionsOf(t, env, state)
	if len(ss) != 1 || ss[0].State == "running" {
		t.Fatalf("sessions after space returned: %+v", ss)
	}
	assertSealedOnce(t, env, state, id, "")
	if n := countLines(t, filepath.Join(state, "sessions", id, "lifeloop.log")); n >= 20 {
		t.Fatalf("lifeloop.log has %d lines, want under 20", n)
	}
}

// TestDiskFullThenFreedMidRun: the state folder's disk fills while the
// harness runs and is freed before it ends; the ledger carries on gapless,
// with one capability.degraded saying what waited and why, and run has
// nothing to tell. (A read-only remount cannot be staged the same way:
// the kernel refuses it, EBUSY, while lifeloop holds its files open for
// writing; EROFS and EIO take the same path in internal/ledger's
// fault-injecting tests.)
func TestDiskFullThenFreedMidRun(t *testing.T) {
	t.Parallel() // see the package doc
	env, cmd, stderr, state, id, filler := runFillingDisk(t, `for i in $(seq 40); do echo line $i; sleep 0.04; done`)
	time.Sleep(400 * time.Millisecond)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("run wrote to stderr although every receipt was recorded: %s", stderr.String())
	}
	rs := assertSealedOnce(t, env, state, id, "exit_code_0")
	var report map[string]any
	for _, r := range rs {
		if r["event"] == "capability.degraded" && strings.Contains(fmt.Sprint(r["capability_degradations"]), "receipt_ledger") {
			report = r
		}
	}
	if report == nil || !strings.Contains(fmt.Sprint(report["capability_degradations"]), "no space left on device") {
		t.Fatalf("no receipt_ledger degradation naming the full disk:\n%s", describeStream(rs))
	}
	t.Logf("outage report: %v", dig(report, "telemetry_summary"))
}

// TestManyConcurrentSessions: 200 wrapped sessions at once with 10 ms
// ticks all end completed with verifying ledgers.
func TestManyConcurrentSessions(t *testing.T) {
	t.Parallel() // see the package doc
	env := faultEnv(t)
	state := stateDir(t)
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := env.Command(lifeloopBin(t), "run", "--state-dir", state, "--tick", "10ms", "--", "sleep", "1")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("%v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	ss := sessionsOf(t, env, state)
	if len(ss) != n {
		t.Fatalf("%d sessions, want %d", len(ss), n)
	}
	for _, s := range ss {
		if s.State != "completed" {
			t.Errorf("session %s: %s", s.ID, s.State)
		}
		rep := env.Run(30*time.Second, lifeloopBin(t), "ledger", "verify", "--state-dir", state, s.ID)
		if rep.ExitCode != 0 {
			t.Errorf("ledger verify %s: %s", s.ID, rep.Stdout)
		}
	}
}

// TestHostileControlClients: 200 half-open connections and garbage on
// the control socket never stall the session's status or its harness.
func TestHostileControlClients(t *testing.T) {
	t.Parallel() // see the package doc
	env := faultEnv(t)
	state := stateDir(t)
	cmd := env.Command(lifeloopBin(t), "run", "--state-dir", state, "--", "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Ended before the test's context is (which would SIGKILL it).
	defer func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }()
	id := waitForEvent(t, state, "session.started", 20*time.Second)
	sock := control.SocketFor(state, id)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	var d net.Dialer
	for i := range 200 {
		c, err := d.DialContext(t.Context(), "unix", sock)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
		switch i % 3 {
		case 0: // half-open: a request that never ends
			_, _ = c.Write([]byte(`{"op":"status"`))
		case 1: // garbage
			_, _ = c.Write([]byte("\x00\xffnot json\n"))
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, _ = bufio.NewReader(c).ReadString('\n')
		}
	}
	start := time.Now()
	var st struct {
		Live bool `json:"live"`
	}
	llJSON(t, env, &st, "status", "--state-dir", state, "--json", id)
	if !st.Live {
		t.Fatal("status did not reach the live wrapper behind 200 hostile connections")
	}
	t.Logf("status answered in %v behind 200 hostile connections", time.Since(start).Round(time.Millisecond))
}

// TestMalformedHookInput: garbage on a hook's stdin is answered at once
// and never blocks the harness that called it.
func TestMalformedHookInput(t *testing.T) {
	t.Parallel() // see the package doc
	env := faultEnv(t)
	state := stateDir(t)
	for _, in := range []string{"not json at all", "{\"hook_event_name\":", strings.Repeat("x", 2<<20), "\x00\x01\x02"} {
		cmd := env.Command(lifeloopBin(t), "host-hook", "--state-dir", state, "--adapter", "claude", "--hook", "Stop")
		cmd.Stdin = strings.NewReader(in)
		// A hang guard, not a speed target: a host-hook that blocks on
		// its input would block the harness that called it.
		var blocked atomic.Bool
		guard := time.AfterFunc(30*time.Second, func() { blocked.Store(true); _ = cmd.Process.Kill() })
		out, err := cmd.CombinedOutput()
		guard.Stop()
		if blocked.Load() {
			t.Fatalf("host-hook blocked on %.20q", in)
		}
		if err != nil {
			t.Fatalf("host-hook with %.20q: %v\n%s", in, err, out)
		}
	}
}

// TestHugeTranscriptLine: a 300 MB line in a transcript (a tool output
// pasted whole) is skipped without holding it in memory: `watch` stays
// far under the line's size and still reads the lines around it.
func TestHugeTranscriptLine(t *testing.T) {
	t.Parallel() // see the package doc
	env := faultEnv(t)
	state := stateDir(t)
	sample, err := os.ReadFile(filepath.Join(testharness.ModuleRoot(t), "adapters", "claude", "testdata", "claude-tool-turn.transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(sample), "\n")
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	if err := os.WriteFile(path, []byte(lines[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	// The idle bound counts from the last observation: the whole 300 MB
	// line is written and read within it (a busy disk has stalled that
	// write for seconds), so it is a generous bound, not a measure.
	cmd := env.Command(lifeloopBin(t), "watch", "--state-dir", state, "--adapter", "claude", "--until-idle", "10s", path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForEvent(t, state, "session.started", 20*time.Second)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, _ = w.WriteString(`{"type":"user","message":{"role":"user","content":"`)
	chunk := strings.Repeat("x", 1<<20)
	for range 300 {
		_, _ = w.WriteString(chunk)
	}
	_, _ = w.WriteString("\"}}\n")
	_, _ = w.WriteString(strings.Join(lines[1:], ""))
	if err := errors.Join(w.Flush(), f.Close()); err != nil {
		t.Fatal(err)
	}
	// The peak is read from /proc (VmHWM) while watch runs: the rusage
	// of a waited child also counts the test binary's memory it was
	// forked from, which grows with every test before this one.
	var peakKiB int64
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
			if err != nil {
				return
			}
			for _, l := range strings.Split(string(b), "\n") {
				var kib int64
				if _, err := fmt.Sscanf(l, "VmHWM: %d kB", &kib); err == nil && kib > peakKiB {
					peakKiB = kib
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch: %v\n%s", err, out.String())
	}
	<-polled
	peak := peakKiB >> 10
	_, rs := onlySession(t, state)
	if lastOf(rs, "frame.ended") == nil {
		t.Fatalf("the turn after the huge line was not read:\n%s", describeStream(rs))
	}
	if peak > 64 {
		t.Fatalf("watch peaked at %d MiB reading a 300 MB line", peak)
	}
	t.Logf("watch peak RSS %d MiB over a 300 MB line", peak)
}

// runFillingDisk starts `lifeloop run -- bash -c script` with its state
// folder on a small tmpfs, waits for the session to start, then fills
// that disk with the file filler. It returns the started run (its stderr
// captured), the state folder and the session's id.
func runFillingDisk(t *testing.T, script string) (env *testharness.HarnessEnv, cmd *exec.Cmd, stderr *strings.Builder, state, id, filler string) {
	t.Helper()
	env = faultEnv(t)
	disk := testutil.SmallTmpfs(t, "512k", faultInjectionCovers)
	state = filepath.Join(disk, "state")
	cmd = env.Command(lifeloopBin(t), "run", "--state-dir", state, "--tick", "20ms", "--", "bash", "-c", script)
	stderr = &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	id = waitForEvent(t, state, "session.started", 20*time.Second)
	filler = filepath.Join(disk, "filler")
	testutil.FillDisk(t, filler)
	return env, cmd, stderr, state, id, filler
}
