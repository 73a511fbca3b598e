package launcher

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
)

// companionFixture is a session on a fake harness whose companion is the
// shell script body, run as `script autorenew --attached ID`.
func companionFixture(t *testing.T, body string) (*fixture, *fakeTerminal) {
	t.Helper()
	f, ft := renewFixture(t)
	f.cfg.Grace = 50 * time.Millisecond
	f.cfg.ControlSocket = control.SocketIn(statedir.SessionDir(f.root, f.cfg.Record.ID))
	script := filepath.Join(t.TempDir(), "companion.sh")
	if err := writeExecutable(script, []byte("#!/bin/sh\n"+body+"\n")); err != nil {
		t.Fatal(err)
	}
	f.cfg.Companion = []string{script, "autorenew", "--attached", f.cfg.Record.ID}
	f.cfg.CompanionEnv = []string{"PATH=/usr/bin:/bin", "COMPANION_MARK=from-env"}
	return f, ft
}

func companionLog(t *testing.T, f *fixture) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(statedir.SessionDir(f.root, f.cfg.Record.ID), CompanionLog))
	return string(b)
}

func degraded(f *fixture, capability string) []Moment {
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	var out []Moment
	for _, m := range f.rec.moments {
		if m.Event == contract.EventCapabilityDegraded && len(m.Degradations) > 0 && m.Degradations[0].Capability == capability {
			out = append(out, m)
		}
	}
	return out
}

// TestCompanionThatExits: a companion that exits while the session runs
// is one capability.degraded naming it and how it exited; the harness
// runs on; its output is in companion.log (0600), without a terminal.
func TestCompanionThatExits(t *testing.T) {
	f, ft := companionFixture(t, `echo "out $COMPANION_MARK $*"; echo err >&2; tty >/dev/null 2>&1 && echo has-a-tty; exit 3`)
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return len(degraded(f, "companion")) > 0 })
	time.Sleep(100 * time.Millisecond) // a second report would land now
	ds := degraded(f, "companion")
	if len(ds) != 1 {
		t.Fatalf("%d companion degradations, want 1", len(ds))
	}
	ev := *ds[0].Degradations[0].Evidence
	if !strings.Contains(ev, "`autorenew` exited (exit status 3) at ") || !strings.Contains(ev, "the session goes on without it") || strings.Contains(ev, "from-env") {
		t.Errorf("evidence %q", ev)
	}
	var st control.Status
	if err := callCtl(t, f, control.OpStatus, nil, &st); err != nil || st.Stopping || ft.count() != 1 || len(ft.proc(0).gotSignals()) != 0 {
		t.Errorf("the harness did not run on: status %+v %v, signals %v", st, err, ft.proc(0).gotSignals())
	}
	log := companionLog(t, f)
	if !strings.Contains(log, "out from-env autorenew --attached "+f.cfg.Record.ID) || !strings.Contains(log, "err") || strings.Contains(log, "has-a-tty") {
		t.Errorf("companion.log %q", log)
	}
	if fi, err := os.Stat(filepath.Join(statedir.SessionDir(f.root, f.cfg.Record.ID), CompanionLog)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("companion.log mode %v %v, want 0600", fi.Mode().Perm(), err)
	}
	ft.proc(0).exit(ptyio.ExitStatus{Code: 0})
	if res := <-done; res.State != statedir.StateCompleted {
		t.Errorf("state %s, want completed", res.State)
	}
	if n := len(degraded(f, "companion")); n != 1 {
		t.Errorf("%d companion degradations at the end, want 1", n)
	}
}

// TestCompanionStoppedAtTheEnd: a companion that never exits by itself,
// and what it started, are stopped once the session ends (after a 2 s
// grace);
// nothing is recorded about it.
func TestCompanionStoppedAtTheEnd(t *testing.T) {
	t.Parallel()
	f, ft := companionFixture(t, `sleep 1000 & echo $! > "$0.child"; echo $$ > "$0.pid"; wait`)
	script := f.cfg.Companion[0]
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	var pids []int
	testutil.WaitFor(t, func() bool {
		pids = pids[:0]
		for _, p := range []string{script + ".pid", script + ".child"} {
			b, err := os.ReadFile(p)
			n, cerr := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || cerr != nil {
				return false
			}
			pids = append(pids, n)
		}
		return true
	})
	start := time.Now()
	ft.proc(0).exit(ptyio.ExitStatus{Code: 0})
	<-done
	// The companion never exits by itself: a session that waited for it
	// would not end; the bound (its 2 s grace and the kill) is loose for
	// a loaded machine.
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the session took %v to end with its companion", d)
	}
	for _, p := range pids {
		if alive(p) {
			_ = syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("pid %d of the companion is left after the session", p)
		}
	}
	if n := len(degraded(f, "companion")); n != 0 {
		t.Errorf("%d companion degradations for a companion stopped at the end, want 0", n)
	}
}

// TestCompanionThatCannotStart: one capability.degraded, and the harness
// runs.
func TestCompanionThatCannotStart(t *testing.T) {
	f, ft := companionFixture(t, "exit 0")
	f.cfg.Companion = []string{filepath.Join(t.TempDir(), "missing"), "autorenew"}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 && len(degraded(f, "companion")) > 0 })
	if ev := *degraded(f, "companion")[0].Degradations[0].Evidence; !strings.Contains(ev, "`autorenew` could not start") {
		t.Errorf("evidence %q", ev)
	}
	ft.proc(0).exit(ptyio.ExitStatus{Code: 0})
	if res := <-done; res.State != statedir.StateCompleted {
		t.Errorf("state %s, want completed", res.State)
	}
	if n := len(degraded(f, "companion")); n != 1 {
		t.Errorf("%d companion degradations, want 1", n)
	}
}
