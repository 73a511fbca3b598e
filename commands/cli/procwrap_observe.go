package cli

import (
	"context"
	"os/signal"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/observe"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/watch"
)

const (
	// claimPoll is how often the observer of a pre-started process looks
	// whether it has been handed its session.
	claimPoll = 200 * time.Millisecond
	// claimSettle is how long a claim that names no launching session is
	// read again before it is taken as started by none: the harness may
	// record who asked for the session a moment after naming it.
	claimSettle = time.Second
)

// procwrapObserve is the detached observer procwrap starts for a
// harness's background session: it waits, for a pre-started process, until
// the harness's records name its session (and who asked for it: a
// pre-started process's own environment names no launcher), then records
// it as `lifeloop watch` would (telemetry_only), linked to the session
// that started it, following the process until it ends. A process that
// ends before it serves a session leaves nothing behind.
func procwrapObserve(e *env, o procwrapOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	ad, err := e.Registry().Lookup(o.Adapter)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	pw := ad.ProcessWrapped()
	if pw == nil {
		return exitf(exitcode.Failed, "procwrap: adapter %s starts no background sessions through a process wrapper", ad.ID)
	}
	cwd, err := e.workDir()
	if err != nil {
		return err
	}
	// A session named on its command line was asked for when procwrap
	// ran, before the harness did (--since): what its transcript holds
	// from before is history (a resumed conversation's earlier turns).
	session, launchedBy, since := o.Session, o.LaunchedBy, o.Since
	if session == "" {
		tk := time.NewTicker(claimPoll)
		defer tk.Stop()
		var settle time.Time // when a claim naming no launcher is taken as such
		for {
			c, ok := pw.WrappedSession(e.Environ, o.Observe)
			if ok && settle.IsZero() {
				settle = e.Now().Add(claimSettle)
			}
			if ok && (len(c.LaunchedBy) > 0 || !e.Now().Before(settle)) {
				session, cwd, launchedBy, since = c.ID, c.Cwd, c.LaunchedBy, c.Since
				break
			}
			if !watch.Alive(o.Observe) {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-tk.C:
			}
		}
	}
	root, err := statedir.Resolve("", e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	dur, err := durability("", e.Getenv)
	if err != nil {
		return err
	}
	_, err = watch.Run(ctx, watch.Options{
		StateDir: root, Adapter: ad.ID, Registry: e.Registry(), Cwd: cwd, Env: e.Environ,
		Levels: telemetry.DefaultLevels, NotFoundAfter: observe.DefaultNotFoundAfter, Durability: dur,
		Process: &watch.Process{Pid: o.Observe, SessionID: session, LaunchedBy: launchedBy, StateDir: root, Since: since},
		Now:     e.Now, IDs: e.IDs,
	})
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	return nil
}
