package launcher

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/stream"

	"golang.org/x/sys/unix"
)

// The drain after a harness exited ends as soon as the record is
// complete, not after a fixed quiet:
//
//  1. Hooks: a hook process the harness started may still be running
//     (reporting its last turn, or its session's end) after the harness
//     itself exited. Such processes stay in the harness's process group,
//     so the drain waits until no process of that group is left but
//     zombies: it looks again as soon as the processes it found have
//     all exited (procfs.WatchExits), and after groupPoll, then less and
//     less often, where they cannot be watched or others took their
//     place. A hook call that reached the control socket keeps its
//     process alive until the loop answers it, so once the group is gone
//     every hook's moment is in.
//  2. Telemetry: then the watcher reads every followed source (the
//     files or session database) to its end at
//     once, without waiting for a file event or a poll, and hands over
//     what it read (observe.Watcher.Sync).
//  3. Nothing more can arrive: the moments that waited for a hook are
//     recorded — and after them a session-end hook's session.ending
//     that waited for this read (stream.Drained) — and the
//     session ends (or the renewal's relaunch starts).
//
// drainMax bounds it all: a process that stays in the harness's group
// (a daemon it left behind, killed at the session's end) is not waited
// for longer.
const (
	drainMax     = 3 * time.Second
	groupPoll    = 2 * time.Millisecond
	groupPollMax = 50 * time.Millisecond
)

// drainState is the loop's phase after a harness exited: the telemetry
// still in flight is recorded, so the harness session's last receipts
// come before its session.ended (or before a relaunch's watcher takes
// over). Hooks are still served meanwhile.
type drainState struct {
	// pgid is the harness's process group while it still has members
	// (0 once it is empty); poll looks at it again.
	pgid  int
	poll  *time.Timer
	every time.Duration
	// exits is closed once the live members last found (watched) have
	// all exited; nil while none are watched. stop ends the watch with
	// the drain.
	exits   <-chan struct{}
	watched []int
	stop    chan struct{}
	// synced is closed once the watcher has caught up; nil before the
	// catch-up was asked for, and once it is done.
	synced   <-chan struct{}
	caughtUp bool
	deadline *time.Timer
	// then runs when the drain ends; nil ends the session.
	then func()
}

// beginDrain starts draining; then runs when it is over (nil: the
// session ends).
func (s *supervisor) beginDrain(then func()) {
	if s.drain != nil {
		return
	}
	d := &drainState{deadline: time.NewTimer(drainMax), then: then, stop: make(chan struct{})}
	s.drain = d
	s.groupGone = 0 // this harness's group has not been seen empty yet
	if s.child != nil {
		if left, pids := liveMembers(s.child.Pid()); len(left) > 0 {
			s.log.Info("harness exited; waiting for its process group", "left", left)
			d.pgid, d.every = s.child.Pid(), groupPoll
			d.poll = time.NewTimer(d.every)
			d.watch(pids)
			return
		}
		s.groupGone = s.child.Pid()
	}
	s.catchUp()
}

// liveMembers lists the processes of group pgid that can still act
// ("pid comm") and their pids; zombies, reaped by whoever adopted them,
// cannot. When the group cannot be read, left holds the reason and pids
// is empty (unknown: wait, within the bound).
func liveMembers(pgid int) (left []string, pids []int) {
	if errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) {
		return nil, nil
	}
	stats, err := procfs.GroupStats(pgid)
	if err != nil {
		return []string{err.Error()}, nil
	}
	for _, p := range stats {
		if p.State != 'Z' {
			left = append(left, fmt.Sprintf("%d %s", p.PID, p.Comm))
			pids = append(pids, p.PID)
		}
	}
	return left, pids
}

// groupAlive reports whether group pgid has a process that can still act.
func groupAlive(pgid int) bool {
	left, _ := liveMembers(pgid)
	return len(left) > 0
}

// watch has the drain woken as soon as pids have all exited, unless a
// watch is already on its way or these very pids were watched before (a
// process whose end was reported but that /proc still shows as running
// is then left to the poll, not looked at in a loop).
func (d *drainState) watch(pids []int) {
	if d.exits != nil || len(pids) == 0 || slices.Equal(pids, d.watched) {
		return
	}
	d.watched = pids
	d.exits = procfs.WatchExits(pids, d.stop)
}

// channels returns the group poll, the watched members' exits, the
// watcher's answer and the bound (nil when not draining or not waiting
// for them).
func (d *drainState) channels() (poll <-chan time.Time, exits, synced <-chan struct{}, deadline <-chan time.Time) {
	if d == nil {
		return nil, nil, nil, nil
	}
	if d.poll != nil {
		poll = d.poll.C
	}
	return poll, d.exits, d.synced, d.deadline.C
}

// pollGroup looks at the harness's group again (exited: because the
// members watched have exited, else the poll): once it is empty the
// telemetry catch-up starts.
func (s *supervisor) pollGroup(exited bool) {
	d := s.drain
	if d == nil {
		return
	}
	if exited {
		d.exits = nil
	}
	if d.pgid == 0 {
		return
	}
	if left, pids := liveMembers(d.pgid); len(left) > 0 {
		d.every = min(2*d.every, groupPollMax)
		d.poll.Reset(d.every)
		d.watch(pids)
		return
	}
	s.groupGone = d.pgid
	d.pgid, d.poll = 0, nil
	s.log.Info("harness's process group gone")
	s.catchUp()
}

// catchUp asks the watcher to read every source to its end; without a
// watcher (or once its channel closed) there is nothing to wait for.
func (s *supervisor) catchUp() {
	d := s.drain
	if s.obs == nil || s.cfg.Telemetry == nil {
		d.caughtUp = s.obs == nil
		s.endDrain(false)
		return
	}
	d.synced = s.cfg.Telemetry.sync()
}

// onSynced takes the moments the watcher read before it answered (they
// are buffered on its channel) and ends the drain.
func (s *supervisor) onSynced() {
	d := s.drain
	d.synced, d.caughtUp = nil, true
	for s.obs != nil {
		select {
		case m, ok := <-s.obs:
			if !ok {
				s.obs = nil
				continue
			}
			s.observed(m)
		default:
			s.endDrain(false)
			return
		}
	}
	s.endDrain(false)
}

// endDrain ends the drain once the group is gone and the watcher has
// caught up (or at once, forced: the bound passed): no hook and no
// transcript line can come any more, so what waits for a hook is
// recorded as it is, and what follows the drain runs.
func (s *supervisor) endDrain(force bool) {
	d := s.drain
	if d == nil || !force && (d.pgid != 0 || !d.caughtUp) {
		return
	}
	if d.poll != nil {
		d.poll.Stop()
	}
	d.deadline.Stop()
	close(d.stop)
	s.drain = nil
	// The transcript has been read to its end: what waits is recorded,
	// and a session-end hook's session.ending that waited for the read
	// follows what was read.
	s.d.Step(stream.Fact{Kind: stream.Drained, Now: s.cfg.Now()})
	if d.then == nil {
		// The session ends: nothing the watcher could still read is
		// recorded any more (the loop stops), so it stops now, beside
		// session.ended's write.
		s.cfg.Telemetry.release()
		s.done = true
		return
	}
	d.then()
}
