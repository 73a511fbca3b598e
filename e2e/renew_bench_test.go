package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
	"testing"
)

// BenchmarkRenewal prints the renewal rows of the summary alone
// (LIFELOOP_BENCH_HARNESSES picks the harnesses, LIFELOOP_BENCH_RENEWALS
// the renewals per kind, default 3).
func BenchmarkRenewal(b *testing.B) {
	for b.Loop() {
		t := &summary{b: b}
		t.renewals()
		t.print(os.Stdout)
	}
}

func renewalRuns() int {
	if v, err := strconv.Atoi(os.Getenv("LIFELOOP_BENCH_RENEWALS")); err == nil && v > 0 {
		return v
	}
	return 3
}

// renewals adds, per harness, two rows for its TUI under `lifeloop run`
// (from the launch to session.started in the ledger, and from the
// harness's exit to lifeloop's once the harness is ended by its stop
// signal to its process group), and two rows per kind of renewal (resume,
// fresh): from the renew command to the new harness taking keys, and from
// the old harness's exit to that, beside the harness's own start in the same run (its launch
// under lifeloop until its screen takes input). "Taking keys" is what a
// person sees: keys typed right after the renew command (held meanwhile)
// drawn in the new harness's prompt.
func (t *summary) renewals() {
	pick := os.Getenv("LIFELOOP_BENCH_HARNESSES")
	for _, tc := range safeTUIs {
		if pick != "" && !slices.Contains(strings.Split(pick, ","), tc.name) {
			continue
		}
		var starts, ends []time.Duration
		for _, resume := range []bool{true, false} {
			start, end := t.renewal(tc, resume)
			starts, ends = append(starts, start), append(ends, end)
		}
		t.row(tc.name+" TUI: launch → session.started", ms(median(starts)), "—", "—", "—")
		t.row(tc.name+" TUI: harness exit → lifeloop exit", ms(median(ends)), "—", "—", "< 20 ms")
	}
}

// renewal runs renewalRuns() renewals of one kind and adds their rows; it
// returns how long the TUI took from launch to session.started and from
// its harness's exit to lifeloop's.
func (t *summary) renewal(tc safeTUI, resume bool) (start, end time.Duration) {
	b := t.b
	ll := lifeloopBin(b)
	mock, err := mockmodel.Start(mockmodel.Config{Reply: "Answered."})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = mock.Close() }()
	env := testharness.NewHarnessEnv(b, mock)
	if tc.setup != nil {
		tc.setup(b, env)
	}
	state := filepath.Join(b.TempDir(), "state")
	launched := time.Now()
	started := watchLedger(state, `"event":"session.started"`)
	term := tc.start(b, env, state)
	ready := time.Since(launched)
	defer endSafeTUI(b, env, term)
	start = (<-started).Sub(launched)
	term.Type("first prompt")
	if err := term.WaitFor("first prompt", screenTimeout); err != nil {
		b.Fatal(err)
	}
	tc.send(term)
	turns := 1
	waitReceipt(b, term, state, "frame.ended", turns)
	ses, _ := onlySession(b, state)
	kind := "--fresh"
	if resume {
		kind = "--resume"
	}
	var toReady, exitToReady []time.Duration
	for i := range renewalRuns() {
		rec, err := statedir.ReadSession(state, ses)
		if err != nil {
			b.Fatal(err)
		}
		old := rec.Pid
		before := len(term.Output())
		start := time.Now()
		done := startRenew(b, env, ll, state, ses, kind)
		exited := watchExit(old)
		typed := fmt.Sprintf("typed %d %s", i, strings.TrimPrefix(kind, "--"))
		term.Type(typed)
		if !outputAfter(term, before, typed, screenTimeout) {
			logData, _ := os.ReadFile(filepath.Join(statedir.SessionDir(state, ses), "lifeloop.log"))
			b.Fatalf("%s: the keys typed during the renewal never showed:\n%s\nsession log:\n%s", kind, tailText(term.Output(), 1500), logData)
		}
		ready := time.Now()
		if err := <-done; err != nil {
			b.Fatalf("lifeloop renew %s: %v", kind, err)
		}
		toReady = append(toReady, ready.Sub(start))
		exitToReady = append(exitToReady, ready.Sub(<-exited))
		// The typed text is the next prompt: the new harness session
		// binds, as a person's would.
		tc.send(term)
		turns++
		waitReceipt(b, term, state, "frame.ended", turns)
	}
	name := fmt.Sprintf("%s renew %s", tc.name, kind)
	own := "its launch → ready " + ms(ready)
	t.row(name+": renew → harness takes keys", ms(median(toReady)), own, fmt.Sprintf("%.2f×", median(toReady).Seconds()/ready.Seconds()), "—")
	t.row(name+": old harness's exit → takes keys", ms(median(exitToReady)), own, fmt.Sprintf("%.2f×", median(exitToReady).Seconds()/ready.Seconds()), "≤ 2 s, or the harness's own start")

	// The harness ends (its stop signal, to its process group): how long
	// lifeloop takes to follow.
	rec, err := statedir.ReadSession(state, ses)
	if err != nil {
		b.Fatal(err)
	}
	a, err := builtin.Default().Lookup(tc.name)
	if err != nil {
		b.Fatal(err)
	}
	sig, _ := a.StopSignal()
	exited := watchExit(rec.Pid)
	if err := syscall.Kill(-rec.Pid, sig); err != nil {
		b.Fatal(err)
	}
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		b.Fatalf("lifeloop did not end after its harness: %v", err)
	}
	return start, time.Since(<-exited)
}

// watchLedger reports when a receipt containing text first shows in a
// ledger under state, looking every 2 ms (the zero time after a minute).
func watchLedger(state, text string) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
			paths, _ := filepath.Glob(filepath.Join(statedir.SessionsDir(state), "*", statedir.ReceiptsFile))
			for _, p := range paths {
				if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(text)) {
					at <- time.Now()
					return
				}
			}
		}
		at <- time.Time{}
	}()
	return at
}

// startRenew starts `lifeloop renew KIND SESSION` once it is accepted (a
// resume is refused with identity_unavailable until the harness named its
// session) and returns its end.
func startRenew(b testing.TB, env *testharness.HarnessEnv, ll, state, ses, kind string) <-chan error {
	statusPath := renewal.StatusPath(statedir.SessionDir(state, ses))
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(100 * time.Millisecond) {
		var out bytes.Buffer
		renew := env.Command(ll, "renew", "--state-dir", state, kind, ses)
		renew.Stdout, renew.Stderr = &out, &out
		if err := renew.Start(); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			err := renew.Wait()
			if err != nil {
				err = fmt.Errorf("%w: %s", err, out.String())
			}
			done <- err
		}()
		if renewalStarted(statusPath, done) {
			return done
		}
		if !strings.Contains(out.String(), "identity_unavailable") || time.Now().After(deadline) {
			b.Fatalf("the renewal never started: %s", out.String())
		}
	}
}

// watchExit reports when process pid has exited (is gone or a zombie),
// looking every millisecond.
func watchExit(pid int) <-chan time.Time {
	at := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if st, err := procfs.Stat(pid); err != nil || st.State == 'Z' {
				break
			}
		}
		at <- time.Now()
	}()
	return at
}

// outputAfter reports whether s shows in term's output past byte n
// (spaces aside) within timeout.
func outputAfter(term *testharness.Terminal, n int, s string, timeout time.Duration) bool {
	squeezed := strings.Join(strings.Fields(s), "")
	for deadline := time.Now().Add(timeout); ; time.Sleep(100 * time.Millisecond) {
		if out := term.Output(); len(out) > n {
			tail := out[n:]
			if strings.Contains(tail, s) || strings.Contains(strings.Join(strings.Fields(tail), ""), squeezed) {
				return true
			}
		}
		if time.Now().After(deadline) || term.Exited() {
			return false
		}
	}
}

// tailText is the last n bytes of s.
func tailText(s string, n int) string { return s[max(0, len(s)-n):] }
