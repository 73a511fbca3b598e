package stream

import (
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// Driver is the one loop around a session's keeper that `run`, `watch`
// and `host-hook` all use: it steps a fact, records every receipt the
// keeper makes ready through the caller's recorder, tells the keeper
// what was recorded, saves new harness session ids and sets the one
// timer out at the keeper's next deadline. The call order lives here
// only; the caller does the I/O through the functions it gives.
//
// A Driver is not safe for concurrent use. A fact stepped while a
// receipt is being recorded (the recorder reports a moment of its own)
// follows that receipt.
type Driver[R any] struct {
	k      *Keeper
	record Recorder[R]
	bound  func(id string)
	arm    func(at time.Time, ok bool)
	busy   bool
}

// Recorder records one complete moment (sync: with the synchronous
// clients) and returns what recording answered and the receipt's id.
type Recorder[R any] func(m Moment, sync bool) (res R, receiptID string, err error)

// Callbacks are what the caller is told besides the receipts: Bound, each
// harness session id the session never had before (to save it in the
// session record); Arm, after each step, when the keeper next needs a
// Due fact (ok false: nothing waits).
type Callbacks struct {
	Bound func(id string)
	Arm   func(at time.Time, ok bool)
}

// NewDriver returns the driver of a session configured by cfg (its
// prior receipts and known harness session ids taken up), recording
// through record.
func NewDriver[R any](cfg Config, record Recorder[R], h Callbacks) *Driver[R] {
	k := New(cfg)
	k.remember(cfg.Known)
	k.resume(cfg.Prior)
	return &Driver[R]{k: k, record: record, bound: h.Bound, arm: h.Arm}
}

// Step tells the keeper f and records what it makes ready, in order; a
// receipt that cannot be recorded is the recorder's to report.
func (d *Driver[R]) Step(f Fact) { _, _, _ = d.Ask(f) }

// Ask is Step for a caller that needs f's own receipt: res and ok answer
// for f's moment, recorded (ok) with what recording answered, or dropped
// (the stream already tells it), held, or stepped while recording (ok
// false); err is recording's error.
func (d *Driver[R]) Ask(f Fact) (res R, ok bool, err error) {
	if d.busy {
		d.k.stepFirst(f)
		return res, false, nil
	}
	d.busy = true
	defer func() { d.busy = false }()
	d.k.Step(f)
	for r, more := d.k.Ready(); more; r, more = d.k.Ready() {
		d.announce()
		got, id, rerr := d.record(r.Moment, r.Sync)
		if rerr == nil {
			d.k.Recorded(r.Moment, id)
		}
		if r.Answer {
			res, ok, err = got, rerr == nil, rerr
		}
	}
	d.announce()
	if d.arm != nil {
		d.arm(d.k.Next())
	}
	return res, ok, err
}

// announce tells the caller the harness session ids bound for the first
// time.
func (d *Driver[R]) announce() {
	for _, id := range d.k.Bound() {
		if d.bound != nil {
			d.bound(id)
		}
	}
}

// Waiting reports whether moments wait for a Due fact.
func (d *Driver[R]) Waiting() bool { return d.k.Waiting() }

// Holds says what the keeper holds back and why, in order.
func (d *Driver[R]) Holds() []Hold { return d.k.Holds() }

// OpenFrames returns the frames recorded and not ended, oldest first.
func (d *Driver[R]) OpenFrames() []contract.FrameContext { return d.k.OpenFrames() }

// FrameOpen reports whether a turn is under way: a top-level frame
// recorded or held and not ended.
func (d *Driver[R]) FrameOpen() bool { return d.k.FrameOpen() }

// HarnessSession is the latest harness session id ("" before the harness
// named one, or after a fresh relaunch).
func (d *Driver[R]) HarnessSession() string { return d.k.HarnessSession() }

// HeldStarted returns how long the keeper may still hold session.started
// and why (ok false: it is not held, or held only behind other moments).
func (d *Driver[R]) HeldStarted() (h Hold, ok bool) {
	for _, h := range d.k.Holds() {
		if h.Event == contract.EventSessionStarted && !h.Until.IsZero() {
			return h, true
		}
	}
	return Hold{}, false
}
