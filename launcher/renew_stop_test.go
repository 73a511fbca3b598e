package launcher

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestRenewalWaitsForTheHarnessGroup: a harness whose own process ends
// at once on the stop signal while another process of its group goes on
// (a launcher, and the program it runs still shutting down) is started
// again only once that process has exited too, so the two never share
// the session's files.
func TestRenewalWaitsForTheHarnessGroup(t *testing.T) {
	t.Parallel()
	left := exec.Command("sleep", "1")
	left.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its own group, as a harness's
	if err := left.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = left.Process.Kill() })
	gone := make(chan time.Time, 1)
	go func() { _ = left.Wait(); gone <- time.Now() }() // ends with sleep

	f, ft := renewFixture(t)
	f.cfg.Grace = 5 * time.Second // the member is not signalled (the harness is fake): it ends by itself
	relaunched := make(chan time.Time, 1)
	ft.behave = func(n int, p *fakeProc) {
		switch n {
		case 0: // exits on the first stop signal; sleep is left in its group
			p.pid = left.Process.Pid
		case 1:
			relaunched <- time.Now()
		}
	}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	if err := <-renewAsync(t, f, renewal.Request{Reason: "test"}); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if ft.count() != 2 {
		t.Fatalf("%d harnesses started, want 2", ft.count())
	}
	at, end := <-relaunched, <-gone
	if at.Before(end) {
		t.Errorf("the relaunch started %v before the last process of the stopped harness's group exited", end.Sub(at))
	}
	ft.proc(1).exit(ptyio.ExitStatus{Code: 0})
	<-done
}
