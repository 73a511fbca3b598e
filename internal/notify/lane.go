package notify

import (
	"context"
	"sync"
)

// queueMax bounds a lane's queue; a notification past it is dropped.
const queueMax = 16

// job is one notification's work; its error is the notifier's failure.
type job func(ctx context.Context) error

// item is a queued job and the episode it announces.
type item struct {
	e    Episode
	work job
}

// lane is one notifier's queue and its worker: at most one goroutine,
// started by push when the queue was idle and gone when it is empty, so
// notifications run one at a time and in order, and a lane with nothing
// to do holds no goroutine.
type lane struct {
	name string
	n    *Notifier

	mu      sync.Mutex
	queue   []item
	running bool

	// Each lane tells the log once of each trouble.
	failOnce, dropOnce, stopOnce sync.Once
}

// push queues work on l (nil: that notifier is not configured). It never
// blocks: a full queue drops the notification, and after Wait nothing is
// queued.
func (n *Notifier) push(l *lane, e Episode, work job) {
	if l == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.queue) >= queueMax {
		l.dropOnce.Do(func() {
			n.log.Warn("notify: too many notifications under way; dropped (further drops are not logged)",
				"notifier", l.name, "session", e.Session, "episode", e.ID)
		})
		return
	}
	l.queue = append(l.queue, item{e, work})
	if !l.running {
		l.running = true
		n.busy.Add(1) // under n.mu while not stopped: never concurrent with Wait's busy.Wait
		go l.work()
	}
}

// work runs l's queue until it is empty. After Wait stopped the notifier,
// what is left is dropped.
func (l *lane) work() {
	defer l.n.busy.Done()
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.running = false
			l.mu.Unlock()
			return
		}
		next := l.queue[0]
		l.queue[0] = item{}
		l.queue = l.queue[1:]
		l.mu.Unlock()
		ctx := l.n.ctx
		if ctx.Err() != nil {
			l.stopped()
			continue
		}
		err := next.work(ctx)
		switch {
		case ctx.Err() != nil:
			l.stopped()
		case err != nil:
			l.failOnce.Do(func() {
				l.n.log.Warn("notify: notifier failed (further failures of this notifier are not logged)",
					"notifier", l.name, "session", next.e.Session, "episode", next.e.ID, "err", err)
			})
		}
	}
}

// stopped logs once that the session's end cut l's work short.
func (l *lane) stopped() {
	l.stopOnce.Do(func() {
		l.n.log.Warn("notify: notification still under way at the session's end; stopped", "notifier", l.name)
	})
}
