package launcher

import (
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/ptyio"
)

// Process is a running harness as the supervisor sees it: *ptyio.Child is
// one. Every method is safe to call from any goroutine, so a renewal
// running beside the supervisor loop can stop it. It has no way to type
// into the harness's terminal: only the person types there.
type Process interface {
	Pid() int
	// Done is closed when the process has exited and its output is
	// drained; Wait then returns at once.
	Done() <-chan struct{}
	Wait() ptyio.ExitStatus
	// SignalGroup signals the harness's whole process group.
	SignalGroup(sig syscall.Signal) error
	// TakesKeys reports whether the harness takes typed keys: it reads
	// its terminal key by key and has drawn the adapter's ready text.
	TakesKeys() bool
	Activity() ptyio.Activity
}

// Terminal starts harnesses on the person's terminal, one at a time.
// ptyio's Terminal is the real one; launcher tests use a fake without a
// PTY.
type Terminal interface {
	Start(spec ptyio.ChildSpec) (Process, error)
	// HoldInput keeps typed keys from the harness until ReleaseInput.
	HoldInput()
	ReleaseInput()
	// LastKey is when a key was last typed at the person's terminal
	// (zero: none).
	LastKey() time.Time
	// Close restores the person's terminal.
	Close() error
}

// OpenPTY opens the person's terminal through ptyio.
func OpenPTY(cfg ptyio.TerminalConfig) (Terminal, error) {
	t, err := ptyio.OpenTerminal(cfg)
	if err != nil {
		return nil, err
	}
	return ptyTerminal{t}, nil
}

type ptyTerminal struct{ t *ptyio.Terminal }

func (p ptyTerminal) Start(spec ptyio.ChildSpec) (Process, error) {
	c, err := p.t.Start(spec)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func (p ptyTerminal) HoldInput()    { p.t.HoldInput() }
func (p ptyTerminal) ReleaseInput() { p.t.ReleaseInput() }
func (p ptyTerminal) Close() error  { return p.t.Close() }

func (p ptyTerminal) LastKey() time.Time { return p.t.LastKey() }
