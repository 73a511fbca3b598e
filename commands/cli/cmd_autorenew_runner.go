package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// policyMachine is what the runner needs of a session's renewal policy
// (autorenew.Policy).
type policyMachine interface {
	Observe(r contract.LifecycleReceipt)
	Next(now time.Time) autorenew.Decision
	// AnsweredBecause is Answered with why a Failed failed, for a
	// person (its ReasonRefused report says it).
	AnsweredBecause(now time.Time, res autorenew.Result, why string)
	Reported(now time.Time)
	// ThisHour counts the session's policy renewals in the hour before
	// now.
	ThisHour(now time.Time) int
}

// slotTaker hands out the machine's renewal slots (autorenew.Lease).
type slotTaker interface {
	TryAcquire() (*autorenew.Slot, bool, error)
}

// Bounds of the runner's calls to the session's wrapper.
const (
	// emitTimeout bounds one report's emit.
	emitTimeout = 10 * time.Second
	// endCheckEvery is how often the runner looks whether the session
	// ended without a receipt saying so (its wrapper killed).
	endCheckEvery = 2 * time.Second
	// maxStepsPerWake bounds the decisions taken at one wake, so a policy
	// that never says Wait cannot spin.
	maxStepsPerWake = 16
)

// policyRunner runs one session's policy: it follows the session's
// ledger, feeds the receipts to the policy and carries out its decisions
// through the session's control socket, as `lifeloop renew` and `emit`
// do.
type policyRunner struct {
	e      *env
	root   string
	rec    statedir.SessionRecord
	opts   autorenewOptions
	cfg    autorenew.Config
	policy policyMachine
	lease  slotTaker
	out    *decisionPrinter
	// renewTimeout bounds one renew call.
	renewTimeout time.Duration

	state   autorenew.State
	written autorenew.State
	// said is the last line said, so a decision repeated (a machine
	// slot still busy) is said once.
	said string
}

// newPolicyRunner returns the runner of session rec under root.
func newPolicyRunner(e *env, root string, rec statedir.SessionRecord, o autorenewOptions, cfg autorenew.Config, out *decisionPrinter) *policyRunner {
	return &policyRunner{
		e: e, root: root, rec: rec, opts: o, cfg: cfg,
		policy:       autorenew.New(cfg),
		lease:        autorenew.Lease{Dir: filepath.Join(root, "autorenew"), Max: o.AtOnce},
		out:          out,
		renewTimeout: renewTimeout,
		state: autorenew.State{
			Schema: "lifeloop.autorenew.v1", Client: renewal.PolicyClientID, PID: os.Getpid(),
			Threshold: o.RenewAt, Resume: cfg.Resume, PerHour: cfg.PerHour,
		},
	}
}

// runGuarded is run with a panic turned into an error naming the
// session, so one session's failure never takes others down.
func (r *policyRunner) runGuarded(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = exitf(exitcode.Failed, "session %s: the renewal policy stopped: %v\n%s", r.rec.ID, p, debug.Stack())
		}
	}()
	return r.run(ctx)
}

// run replays the ledger as it stands, then follows it, deciding after
// each new receipt and when the policy's Until passes, until the session
// ends or ctx is cancelled.
func (r *policyRunner) run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	path := statedir.ReceiptsPath(r.root, r.rec.ID)
	var last uint64
	for en, err := range ledger.ReadSince(path, 0) {
		var le *ledger.LineError
		if errors.As(err, &le) {
			continue
		}
		if err != nil {
			return exitf(exitcode.Failed, "read the ledger of session %s: %v", r.rec.ID, err)
		}
		r.observe(en.Receipt)
		last = en.Sequence
	}
	entries := make(chan ledger.Entry)
	followed := make(chan error, 1)
	go func() { // ends with ctx
		followed <- ledger.Follow(ctx, path, last, func(en ledger.Entry) error {
			select {
			case entries <- en:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	check := time.NewTicker(endCheckEvery)
	defer check.Stop()
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	for {
		until, done := r.step(ctx)
		if done {
			return nil
		}
		wake.Stop()
		if !until.IsZero() {
			wake.Reset(max(until.Sub(r.e.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-followed:
			if err != nil && ctx.Err() == nil {
				return exitf(exitcode.Failed, "follow the ledger of session %s: %v", r.rec.ID, err)
			}
			return nil
		case en := <-entries:
			r.observe(en.Receipt)
		case <-wake.C:
		case <-check.C:
			if r.ended() {
				r.say(decisionLine{Decision: "done", Detail: "the session ended"})
				return nil
			}
		}
	}
}

// observe hands one receipt to the policy.
func (r *policyRunner) observe(rc contract.LifecycleReceipt) {
	r.policy.Observe(rc)
}

// ended reports whether the session ended or its wrapper is gone.
func (r *policyRunner) ended() bool {
	rec, err := statedir.ReadSession(r.root, r.rec.ID)
	if err == nil && rec.State.IsTerminal() {
		return true
	}
	return statedir.WrapperGone(r.root, r.rec.ID)
}

// step takes the policy's decisions until it says Wait (returning when
// to wake at the latest) or Done (done true).
func (r *policyRunner) step(ctx context.Context) (until time.Time, done bool) {
	for range maxStepsPerWake {
		now := r.e.Now()
		d := r.policy.Next(now)
		r.state.ThisHour = r.policy.ThisHour(now)
		switch d.Action {
		case autorenew.Wait:
			if d.Waiting != "" && d.Waiting != r.state.Waiting {
				r.say(decisionLine{Decision: "wait", Detail: d.Waiting})
			}
			r.state.Waiting = d.Waiting
			r.saveState()
			return d.Until, false
		case autorenew.Done:
			r.state.Waiting = ""
			r.saveState()
			r.say(decisionLine{Decision: "done", Detail: "the session ended"})
			return time.Time{}, true
		case autorenew.Renew:
			res, why, gone := r.renew(ctx, d)
			if gone {
				r.say(decisionLine{Decision: "done", Detail: "the session ended"})
				return time.Time{}, true
			}
			r.policy.AnsweredBecause(r.e.Now(), res, why)
			r.state.ThisHour = r.policy.ThisHour(r.e.Now())
			r.saveState()
		case autorenew.Record:
			if gone := r.record(ctx, d.Report); gone {
				return time.Time{}, true
			}
			r.state.GaveUp, r.state.GaveUpDetail = d.Report.Reason, d.Report.Detail
			r.policy.Reported(r.e.Now())
			r.saveState()
		default:
			r.say(decisionLine{Decision: "error", Detail: fmt.Sprintf("unknown policy action %d", d.Action)})
			return time.Time{}, true
		}
	}
	// A policy that keeps deciding: look again in a second.
	return r.e.Now().Add(time.Second), false
}

// saveState writes autorenew.json when what it says changed.
func (r *policyRunner) saveState() {
	st := r.state
	st.UpdatedAt = r.written.UpdatedAt
	if stateEqual(st, r.written) && !r.written.UpdatedAt.IsZero() {
		return
	}
	st.UpdatedAt = r.e.Now().UTC()
	if err := autorenew.WriteState(autorenew.StatePath(statedir.SessionDir(r.root, r.rec.ID)), st); err != nil {
		r.warn("write %s: %v", autorenew.StateFile, err)
		return
	}
	r.written = st
}

// stateEqual compares two States field by field (LastAt by time).
func stateEqual(a, b autorenew.State) bool {
	at, bt := a.LastAt, b.LastAt
	a.LastAt, b.LastAt = nil, nil
	if a != b {
		return false
	}
	switch {
	case at == nil || bt == nil:
		return at == bt
	default:
		return at.Equal(*bt)
	}
}

// say prints one decision line of this session.
func (r *policyRunner) say(l decisionLine) {
	l.Session = r.rec.ID
	key := fmt.Sprint(l.Decision, l.Result, l.Reason, l.Detail)
	if key == r.said {
		return
	}
	r.said = key
	if l.At.IsZero() {
		l.At = r.e.Now().UTC()
	}
	r.out.print(l)
}

// warn says on stderr what went wrong for this session; the policy goes
// on.
func (r *policyRunner) warn(format string, args ...any) {
	r.out.warn(r.rec.ID, fmt.Sprintf(format, args...))
}
