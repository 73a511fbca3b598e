package launcher

import (
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/ptyio"
)

// fakeTerminal starts fakeProcs: the supervisor's harness without a PTY
// or a process. pids are above the kernel's pid range, so nothing real is
// ever signalled.
type fakeTerminal struct {
	mu    sync.Mutex
	procs []*fakeProc
	// behave configures each new harness (nil: the defaults).
	behave func(n int, p *fakeProc)
	// startErr, when set, is the error of the nth start (nil: it starts).
	startErr func(n int) error
	// held and released count HoldInput and ReleaseInput calls.
	held, released int
	// lastKey is when a key was last typed (typeKey).
	lastKey time.Time
}

// typeKey is a key typed at the person's terminal now.
func (t *fakeTerminal) typeKey() {
	t.mu.Lock()
	t.lastKey = time.Now()
	t.mu.Unlock()
}

func (t *fakeTerminal) LastKey() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastKey
}

func (t *fakeTerminal) Start(spec ptyio.ChildSpec) (Process, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.startErr != nil {
		if err := t.startErr(len(t.procs)); err != nil {
			return nil, err
		}
	}
	p := &fakeProc{pid: 1<<30 + len(t.procs), argv: append([]string{spec.Path}, spec.Args...), env: spec.Env, done: make(chan struct{}),
		exitOn: map[syscall.Signal]bool{syscall.SIGINT: true, syscall.SIGTERM: true, syscall.SIGKILL: true}}
	if t.behave != nil {
		t.behave(len(t.procs), p)
	}
	t.procs = append(t.procs, p)
	return p, nil
}

func (t *fakeTerminal) HoldInput() {
	t.mu.Lock()
	t.held++
	t.mu.Unlock()
}

func (t *fakeTerminal) ReleaseInput() {
	t.mu.Lock()
	t.released++
	t.mu.Unlock()
}

func (t *fakeTerminal) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range t.procs {
		p.exit(ptyio.ExitStatus{Signaled: true, Signal: syscall.SIGHUP})
	}
	return nil
}

func (t *fakeTerminal) proc(i int) *fakeProc {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i >= len(t.procs) {
		return nil
	}
	return t.procs[i]
}

func (t *fakeTerminal) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.procs)
}

// fakeProc is one fake harness: it exits on the signals in exitOn.
type fakeProc struct {
	pid    int
	argv   []string
	env    []string
	exitOn map[syscall.Signal]bool
	// notReady: it never takes keys (a harness still starting).
	notReady bool

	mu      sync.Mutex
	signals []syscall.Signal
	status  ptyio.ExitStatus
	done    chan struct{}
	exited  bool
}

func (p *fakeProc) Pid() int              { return p.pid }
func (p *fakeProc) Done() <-chan struct{} { return p.done }
func (p *fakeProc) Activity() ptyio.Activity {
	return ptyio.Activity{Metered: true}
}

func (p *fakeProc) Wait() ptyio.ExitStatus {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

func (p *fakeProc) TakesKeys() bool { return !p.notReady }

func (p *fakeProc) SignalGroup(sig syscall.Signal) error {
	p.mu.Lock()
	p.signals = append(p.signals, sig)
	exits := p.exitOn[sig]
	p.mu.Unlock()
	if exits {
		p.exit(ptyio.ExitStatus{Code: -1, Signaled: true, Signal: sig})
	}
	return nil
}

func (p *fakeProc) exit(st ptyio.ExitStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited {
		return
	}
	p.exited, p.status = true, st
	close(p.done)
}

func (p *fakeProc) gotSignals() []syscall.Signal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]syscall.Signal(nil), p.signals...)
}

// writeExecutable writes a script the test then runs. It holds the fork
// lock while the file is open for writing: a process another test forks
// meanwhile would inherit the descriptor until it execs, and running the
// script then fails with "text file busy".
func writeExecutable(path string, body []byte) error {
	syscall.ForkLock.Lock()
	defer syscall.ForkLock.Unlock()
	return os.WriteFile(path, body, 0o700)
}
