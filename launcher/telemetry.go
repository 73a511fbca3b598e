package launcher

import (
	"context"
	"log/slog"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/observe"
)

// telemetryRunner runs a wrapped session's telemetry watcher, and starts
// it again when a renewal relaunches a pinned harness into a new session:
// the first watcher is pinned to the first session's file.
type telemetryRunner struct {
	ctx    context.Context
	log    *slog.Logger
	ad     *adapters.Adapter
	opts   observe.Options
	cancel context.CancelFunc
	w      *observe.Watcher
	starts int
	// resumed: the launch's command line continues an earlier harness
	// session (resumedID, "" for the harness's latest), followed from
	// its current end by the first watcher.
	resumed   bool
	resumedID string
	// att, when set, also maps each line the watcher reads to attention
	// facts (attention_sources.go).
	att *attentionSources
	// usage, when set, counts the model calls of the files the watcher
	// reads (usage_meter.go).
	usage *usageMeter
}

// start stops the running watcher, if any, and starts one for a harness
// launched now (pinned to sessionID when the launch fixed it). The
// channel is closed when the watcher stops; a watcher that cannot start
// yields the capability.degraded that says why.
func (r *telemetryRunner) start(sessionID string, launched time.Time) <-chan Moment {
	r.stop()
	o := r.opts
	o.LaunchedAt, o.HistoryBefore = launched, launched.Truncate(time.Millisecond)
	o.SessionID, o.Follow = sessionID, sessionID == ""
	// A watcher started again follows a renewal's new conversation: its
	// first reading replaces the pressure the earlier one left.
	o.ReportFirstPressure = r.starts > 0
	if r.resumed && r.starts == 0 {
		if ro, ok, err := observe.Resumed(o, r.resumedID); err != nil {
			r.log.Warn("telemetry: the resumed session cannot be read; following new sessions", "err", err)
		} else if ok {
			o = ro
		}
	}
	r.starts++
	ctx, cancel := context.WithCancel(r.ctx)
	// The usage meter wraps the harness's own parsers (it reads files
	// again, off the loop, with fresh ones), attention wraps outside it: a
	// parser the meter makes must never hand a fact to the loop that is
	// running it.
	if r.usage != nil {
		r.usage.launched(launched)
		o.Harness = r.usage.telemetry(o.Harness)
	}
	o.Harness = r.att.telemetry(ctx, o.Harness, launched)
	w, err := observe.Start(ctx, o)
	if err != nil {
		cancel()
		r.log.Warn("telemetry unavailable", "err", err)
		return observe.Unavailable(o, err)
	}
	r.cancel, r.w = cancel, w
	return w.Moments()
}

// meter is the usage meter, nil without one (or without a runner).
func (r *telemetryRunner) meter() *usageMeter {
	if r == nil {
		return nil
	}
	return r.usage
}

// sync asks the running watcher to catch up (observe.Watcher.Sync);
// without one the channel is closed at once.
func (r *telemetryRunner) sync() <-chan struct{} {
	if r.w == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return r.w.Sync()
}

// release stops the running watcher without waiting for it, once the
// session's last telemetry is in: closing its file watches makes the
// kernel wait for a grace period (14–19 ms seen on a 2-core machine,
// docs/benchmarks.md), which then runs beside the session's last writes
// instead of after them. stop still waits for it.
func (r *telemetryRunner) release() {
	if r != nil && r.cancel != nil {
		r.cancel()
	}
}

// stop stops the running watcher and waits for it.
func (r *telemetryRunner) stop() {
	if r.cancel != nil {
		r.cancel()
		r.w.Wait()
		r.cancel, r.w = nil, nil
	}
}

// clone returns a shallow copy of m.
func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
