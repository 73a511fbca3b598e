package launcher

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/stream"
)

// policySignals are the signals the supervisor catches (see the package
// doc).
var policySignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// SignalCatch catches the signal policy's signals off the start-up path.
// Each signal a signal.Notify or signal.Stop names is a round trip to the
// Go runtime's signal thread: together about 0.5 ms of a `lifeloop run
// -- true` that the supervisor would otherwise wait for, at start and at
// exit. Whoever calls CatchSignals calls Release.
type SignalCatch struct {
	ch    chan os.Signal
	ready chan struct{}
}

// CatchSignals starts catching the policy's signals. A caller that knows
// early that it will launch (the CLI, before parsing flags) passes the
// catch in Options.Signals, so it overlaps more of the start-up.
func CatchSignals() *SignalCatch {
	c := &SignalCatch{ch: make(chan os.Signal, 8), ready: make(chan struct{})}
	go func() {
		signal.Notify(c.ch, policySignals...)
		close(c.ready)
	}()
	return c
}

// wait returns the channel of caught signals once they are caught; nil
// (no signals) for a nil SignalCatch.
func (c *SignalCatch) wait() <-chan os.Signal {
	if c == nil {
		return nil
	}
	<-c.ready
	return c.ch
}

// Release stops catching, without waiting: the session is over, and a
// signal that arrives meanwhile is caught and dropped rather than ending
// lifeloop before it reports the harness's exit code. Release of nil does
// nothing.
func (c *SignalCatch) Release() {
	if c == nil {
		return
	}
	go func() {
		<-c.ready
		signal.Stop(c.ch)
	}()
}

// stop delivers a stop lifeloop decided on: session.ending, the signal to
// the group, and the grace timer. A renewal in progress ends first (its
// payloads stay stored). A second stop escalates to SIGKILL.
func (s *supervisor) stop(reason string, sig syscall.Signal) {
	if s.stopping {
		s.log.Warn("second stop; killing the process group", "reason", reason)
		s.signalChild(syscall.SIGKILL)
		return
	}
	// Read before an abort overwrites the state: a paused harness is
	// continued first, so it can act on the stop signal.
	paused := s.rec.State == statedir.StatePaused
	s.stopping = true
	s.stoppedBy = reason
	if s.renewing != nil {
		s.log.Info("stop during a renewal: the renewal ends", "reason", reason)
		s.renewing.cancel(errStopping(reason))
	}
	if reason == contract.StoppedByAbort {
		s.aborting = true
		s.rec.State = statedir.StateAborting
		s.saveRecord()
	}
	// The stop comes after everything observed before it, and a turn it
	// cuts off is closed before its session.ending, as a renewal's is.
	s.d.Step(stream.Fact{Kind: stream.Stop, Reason: reason, Now: s.cfg.Now(), Moment: Moment{
		Event:   contract.EventSessionEnding,
		Summary: map[string]any{"reason": reason, "signal": sigName(sig)},
	}})
	if paused {
		s.signalChild(syscall.SIGCONT)
	}
	s.signalChild(sig)
	s.graceTimer = time.NewTimer(s.cfg.Grace)
}

func (s *supervisor) onSignal(sig syscall.Signal) {
	s.log.Info("signal received", "signal", sigName(sig))
	switch sig {
	case syscall.SIGINT, syscall.SIGTERM:
		s.stop(sigReason(sig), sig) // a second one escalates
	case syscall.SIGHUP, syscall.SIGQUIT:
		if !s.stopping {
			s.stop(sigReason(sig), sig)
			return
		}
		s.signalChild(sig)
	default:
		s.signalChild(sig)
	}
}

func sigReason(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return contract.StoppedBySIGINT
	case syscall.SIGTERM:
		return contract.StoppedBySIGTERM
	case syscall.SIGHUP:
		return "sighup"
	case syscall.SIGQUIT:
		return "sigquit"
	}
	return fmt.Sprintf("signal_%d", int(sig))
}

func sigName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGUSR1:
		return "SIGUSR1"
	case syscall.SIGUSR2:
		return "SIGUSR2"
	case syscall.SIGSTOP:
		return "SIGSTOP"
	case syscall.SIGCONT:
		return "SIGCONT"
	}
	return fmt.Sprintf("SIG%d", int(sig))
}
