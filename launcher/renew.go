package launcher

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// harnessProcess is the supervisor's running harness as renewal sees it:
// stop it gracefully, start it again on the same terminal. Both run on the
// supervisor loop's goroutine (inside a control request), so the loop does
// not see the old harness's exit as the end of the session.
type harnessProcess struct{ s *supervisor }

// Stop ends the current harness: it types exitCommand (if any) into the
// harness's terminal and waits up to grace, then sends SIGINT, SIGTERM and
// SIGKILL to its process group, waiting up to grace after each. It is
// bounded by 4×grace and returns how the harness ended.
func (p harnessProcess) Stop(ctx context.Context, exitCommand string, grace time.Duration) (contract.ExitFacts, error) {
	c := p.s.child
	if c == nil { // nothing runs (a wrapper continuing a crashed session)
		return contract.ExitFacts{Code: -1, StoppedBy: contract.StoppedByRenewal}, nil
	}
	if exitCommand != "" {
		// Typed like a person would: the command, then Enter.
		go func() {
			_, _ = c.Write([]byte(exitCommand))
			time.Sleep(50 * time.Millisecond)
			_, _ = c.Write([]byte("\r"))
		}()
	}
	steps := []syscall.Signal{0, syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL}
	if exitCommand == "" {
		steps = steps[1:]
	}
	for _, sig := range steps {
		if sig != 0 {
			p.s.log.Info("renewal: stopping the harness", "signal", sigName(sig))
			_ = c.SignalGroup(sig)
		}
		t := time.NewTimer(grace)
		select {
		case <-c.Done():
			t.Stop()
			st := c.Wait()
			return contract.ExitFacts{Code: st.Code, Signaled: st.Signaled, Signal: int(st.Signal), StoppedBy: contract.StoppedByRenewal, FromWaitStatus: true}, nil
		case <-ctx.Done():
			t.Stop()
			_ = c.SignalGroup(syscall.SIGKILL)
			<-c.Done()
			return contract.ExitFacts{}, ctx.Err()
		case <-t.C:
		}
	}
	<-c.Done()
	st := c.Wait()
	return contract.ExitFacts{Code: st.Code, Signaled: st.Signaled, Signal: int(st.Signal), StoppedBy: contract.StoppedByRenewal, FromWaitStatus: true}, nil
}

// Start launches argv on the same terminal: raw mode, size and the
// person's typing carry over to the new harness.
func (p harnessProcess) Start(_ context.Context, argv []string) error {
	s := p.s
	if len(argv) == 0 {
		return fmt.Errorf("renewal: empty command line")
	}
	if len(s.cfg.BridgeArgs) > 0 && !slices.Contains(argv, s.cfg.BridgeArgs[len(s.cfg.BridgeArgs)-1]) {
		argv = adapters.InsertArgs(argv, s.cfg.BridgeArgs)
	}
	if t := s.cfg.Telemetry; t != nil {
		var pinned string
		if argv, pinned = t.pinRelaunch(argv); pinned != "" {
			// Record what the previous transcript still holds, then
			// follow the new one.
			previous := s.obs
			s.drainObservations(previous, nil)
			s.obs = t.start(pinned, s.cfg.Now())
			if previous != nil {
				for m := range previous { // closed: its watcher stopped
					s.enqueueTelemetry(m)
				}
			}
		}
	}
	if s.cfg.Adapter != nil && s.cfg.Files != nil {
		var err error
		if argv, err = s.cfg.Adapter.ExternalizePlacement(argv, s.cfg.Files.write); err != nil {
			return err
		}
	}
	spec := ptyio.ChildSpec{Path: argv[0], Args: argv[1:], Env: s.cfg.Spec.Env, Dir: s.cfg.Spec.Dir}
	child, err := s.term.Start(spec)
	if err != nil {
		return err
	}
	s.child = child
	s.lastTickBytes = 0
	s.rec.Pid = child.Pid()
	s.rec.Argv = adapters.RedactPlacement(argv)
	s.saveRecord()
	s.log.Info("renewal: harness started again", "pid", child.Pid())
	return nil
}

// renewer returns the session's renewal orchestrator, built on first use.
func (s *supervisor) renewer() *renewal.Orchestrator {
	if s.orch == nil {
		dir := statedir.SessionDir(s.cfg.StateDir, s.rec.ID)
		s.orch = &renewal.Orchestrator{
			Adapter:          s.cfg.Adapter,
			Argv:             s.cfg.UserArgv,
			HarnessSessionID: func() string { return s.harnessSessionID },
			Process:          harnessProcess{s},
			Store:            &renewal.Store{Dir: statedir.ContinuationPath(s.cfg.StateDir, s.rec.ID), Now: s.cfg.Now},
			StatusPath:       renewal.StatusPath(dir),
			Record:           s.recordRenewal,
			Now:              s.cfg.Now,
			Grace:            s.cfg.Grace,
		}
	}
	return s.orch
}

// recordRenewal records one step of a renewal; the new session.started
// becomes the parent of the new harness's receipts.
func (s *supervisor) recordRenewal(ev contract.Event, summary map[string]any, prs []contract.PayloadReceipt) string {
	parent := s.startedReceipt
	r, err := s.record(Moment{Event: ev, Summary: summary, PayloadReceipts: prs, Parent: &parent})
	if err != nil {
		return ""
	}
	if ev == contract.EventSessionStarted {
		s.startedReceipt = r.ReceiptID
	}
	return r.ReceiptID
}

// onRenew handles the renew control operation.
func (s *supervisor) onRenew(raw json.RawMessage) (any, error) {
	if s.cfg.Adapter == nil {
		return nil, fmt.Errorf("renew: this session has no adapter to relaunch with")
	}
	if s.stopping {
		return nil, fmt.Errorf("renew: the session is stopping")
	}
	var req renewal.Request
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, fmt.Errorf("renew: bad arguments: %w", err)
		}
	}
	out, err := s.renewer().Renew(s.ctx, req)
	if err != nil {
		return nil, err
	}
	return out, nil
}
