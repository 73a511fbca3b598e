package callback

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// childResult is what one run of the client process produced, before any
// contract interpretation.
type childResult struct {
	startErr    error  // the program could not be started
	stdout      []byte // at most cap bytes
	overCap     bool   // stdout exceeded the cap; the group was killed
	timedOut    bool   // the timeout (or the caller's context) ended the run
	ctxErr      error  // the context error when timedOut
	exitCode    int    // -1 when killed by a signal
	signaled    bool   // the child died of a signal
	stdinUnread bool   // the child exited without consuming all of stdin
	heldOpen    bool   // stdout stayed open past the grace after the child exited
}

// limits bound one child run.
type limits struct {
	timeout   time.Duration
	stdoutCap int64
	exitGrace time.Duration
	stderr    io.Writer // nil discards
}

// runChild starts cmd in its own process group, writes stdin to it, reads
// its stdout up to the cap, and always leaves no process of the group
// behind. It never blocks longer than timeout plus exitGrace plus the time
// the kernel takes to reap a SIGKILLed group.
func runChild(ctx context.Context, path string, args, env []string, stdin []byte, lim limits) childResult {
	ctx, cancel := context.WithTimeout(ctx, lim.timeout)
	defer cancel()

	inR, inW, err := os.Pipe()
	if err != nil {
		return childResult{startErr: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return childResult{startErr: err}
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return childResult{startErr: err}
	}

	// The context kills the whole process group, not just the child.
	var timedOut atomic.Bool
	cmd := exec.CommandContext(ctx, path, args...) //nolint:gosec // the client command is operator configuration
	cmd.Env = env
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		timedOut.Store(true)
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		if ctx.Err() != nil {
			return childResult{timedOut: true, ctxErr: ctx.Err(), exitCode: -1}
		}
		return childResult{startErr: err}
	}
	pgid := cmd.Process.Pid
	killGroup := func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
	// The child holds its own copies; ours of the write ends must go so
	// EOF arrives when the child (and its descendants) close theirs. Our
	// copy of the stdin read end stays open until the child is gone, so the
	// number of bytes it left unread can still be measured afterwards.
	closeAll(outW, errW)

	var wg sync.WaitGroup
	wg.Add(3)
	// stdin writer: exits when everything is written or the pipe is closed.
	writeDone := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(writeDone)
		_, _ = inW.Write(stdin)
		_ = inW.Close()
	}()
	// stdout reader: exits at EOF, at the cap, or when outR is closed.
	var out bytes.Buffer
	overCap := make(chan struct{})
	outDone := make(chan struct{})
	go func() {
		defer wg.Done()
		defer close(outDone)
		n, _ := io.Copy(&out, io.LimitReader(outR, lim.stdoutCap+1))
		if n > lim.stdoutCap {
			close(overCap)
			killGroup()
		}
	}()
	// stderr copier: exits at EOF or when errR is closed.
	go func() {
		defer wg.Done()
		w := lim.stderr
		if w == nil {
			w = io.Discard
		}
		_, _ = io.Copy(w, io.LimitReader(errR, 1<<20))
		_, _ = io.Copy(io.Discard, errR)
	}()

	_ = cmd.Wait() // the exit status is read from ProcessState

	res := childResult{exitCode: cmd.ProcessState.ExitCode(), timedOut: timedOut.Load()}
	if res.timedOut {
		res.ctxErr = ctx.Err()
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.signaled = true
	}

	// The writer only stays blocked once the child is gone when the pipe
	// is full, i.e. the child never read it; give it the grace to finish
	// filling the buffer otherwise. Bytes still sitting in the pipe were
	// never read by the child.
	graceT := time.NewTimer(lim.exitGrace)
	select {
	case <-writeDone:
	case <-graceT.C:
		res.stdinUnread = true
	}
	graceT.Stop()
	// The trailing newline after the envelope does not count: a client
	// that decoded the whole document and stopped there did read it.
	if n, err := pendingBytes(inR); err == nil && n > 1 {
		res.stdinUnread = true
	}
	select {
	case <-outDone:
	default:
		// A descendant still holds stdout: give it a bounded grace, then
		// kill the whole group.
		t := time.NewTimer(lim.exitGrace)
		select {
		case <-outDone:
			t.Stop()
		case <-t.C:
			res.heldOpen = true
			killGroup()
		case <-ctx.Done():
			res.timedOut = true
			res.ctxErr = ctx.Err()
			killGroup()
			t.Stop()
		}
	}
	// Hygiene: nothing of the client's group outlives the dispatch.
	killGroup()
	// Closing our ends unblocks any goroutine still waiting on a pipe a
	// killed descendant held.
	closeAll(inR, outR, errR)
	wg.Wait()

	select {
	case <-overCap:
		res.overCap = true
	default:
	}
	res.stdout = out.Bytes()
	if int64(len(res.stdout)) > lim.stdoutCap {
		res.stdout = res.stdout[:lim.stdoutCap]
	}
	return res
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// isNotFound reports whether a start error means the program does not exist.
func isNotFound(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist)
}
