// Package watch records a harness lifeloop did not launch from its
// telemetry (`lifeloop watch`, integration mode telemetry_only): the same
// telemetry receipts `lifeloop run` records, in a lifeloop session of
// their own.
package watch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/observe"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/stream"
	"github.com/lifeloop/lifeloop/renewal"
	"github.com/lifeloop/lifeloop/telemetry"
)

// LatestWithin bounds how old a file `watch --latest` may pick.
const LatestWithin = 7 * 24 * time.Hour

// Options are what `lifeloop watch` decided: observe a harness that
// lifeloop did not launch (integration mode telemetry_only).
//
// Which file: Path when set; else, with Latest, the newest transcript or
// session file of Cwd written in the last LatestWithin; else the first file a
// harness creates for Cwd from now on (and newer ones after it: a resumed
// or renewed harness writes a new file). A file that already exists is
// read from its start to learn the harness session id and the pressure
// level; its earlier turns are not reported again.
type Options struct {
	StateDir string
	// Adapter is the adapter id (required; it must have telemetry).
	Adapter string
	// Registry of adapters (required): the command passes the plug-ins.
	Registry *adapters.Registry
	// Path is the file to watch, absolute.
	Path   string
	Latest bool
	// Cwd is the harness's working folder, absolute (required).
	Cwd string
	// Env locates the harness's files (HOME and the harness's own
	// variables).
	Env []string

	Clients       []pipeline.ClientSpec
	ClientEvents  []contract.Event
	ClientTimeout time.Duration
	Events        []string
	Format        sink.Format
	// Durability is the ledger's SyncMode (default group commit).
	Durability ledger.SyncMode

	// UntilIdle ends the watch after this long without new telemetry;
	// 0 watches until ctx is cancelled.
	UntilIdle     time.Duration
	Levels        telemetry.Levels
	NotFoundAfter time.Duration
	Tail          telemetry.TailConfig

	// OnSession, when set, is told the session id and folder.
	OnSession func(id, dir string)

	// Process, when set, is the harness process the watch follows (a
	// background session lifeloop's process wrapper saw start): its
	// session, its parent and its end (process.go).
	Process *Process

	Now func() time.Time
	IDs ids.Source
}

// Result is how a watch ended.
type Result struct {
	SessionID string
	// Reason is "idle" (UntilIdle passed), "interrupted" (ctx ended) or
	// ReasonHarnessExited (Options.Process ended).
	Reason   string
	Receipts int
}

// Run records the receipts of a harness's telemetry into a lifeloop
// session of its own until ctx is cancelled or UntilIdle passes without
// telemetry. The session record says integration_mode telemetry_only and
// goes running → completed; the last receipt is session.ended.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IDs == nil {
		o.IDs = ids.NewULIDSource(o.Now, nil)
	}
	if o.Registry == nil {
		return Result{}, fmt.Errorf("watch: no adapter registry: pass Options.Registry (e.g. adapters/builtin.Default())")
	}
	ad, err := o.Registry.Lookup(o.Adapter)
	if err != nil {
		return Result{}, err
	}
	tel := ad.Telemetry()
	if tel == nil {
		withTelemetry := o.Registry.IDsWith(func(a *adapters.Adapter) bool { return a.Telemetry() != nil })
		return Result{}, fmt.Errorf("adapter %s has no telemetry lifeloop can read; watch supports adapters with transcripts (%s)", ad.ID, strings.Join(withTelemetry, ", "))
	}
	if !filepath.IsAbs(o.Cwd) {
		return Result{}, fmt.Errorf("watch: the harness's folder %q is not absolute", o.Cwd)
	}
	o.Cwd = filepath.Clean(o.Cwd)
	start := o.Now()
	topts := observe.Options{
		Harness: tel, Env: o.Env, Cwd: o.Cwd, LaunchedAt: start,
		Levels: o.Levels, NotFoundAfter: o.NotFoundAfter, Tail: o.Tail, Now: o.Now,
	}
	if o.Process != nil {
		topts.SessionID, topts.HistoryBefore = o.Process.SessionID, o.Process.Since
	}
	switch {
	case o.Path != "":
		topts.Path = o.Path
	case o.Latest:
		p, err := latestFile(topts, start)
		if err != nil {
			return Result{}, err
		}
		topts.Path = p
	default:
		topts.Follow = true
	}
	if topts.Path != "" {
		if !filepath.IsAbs(topts.Path) {
			return Result{}, fmt.Errorf("watch: the file %q is not absolute", topts.Path)
		}
		topts.Path = filepath.Clean(topts.Path)
	}
	cfg, _, err := observe.Config(topts)
	if err != nil {
		return Result{}, err
	}
	if topts.Path != "" {
		// A harness whose sessions are records of a store names one by
		// path; its end is the store's, not a file size.
		p, end, err := telemetry.SourceEnd(cfg.Discoverer, topts.Path)
		if err != nil {
			return Result{}, fmt.Errorf("cannot watch %s: %w", topts.Path, err)
		}
		topts.Path, topts.FromStart, topts.HistoryOffset = p, true, end
	}

	p, err := pipeline.Open(pipeline.Options{
		StateDir: o.StateDir, NewSession: true, Log: true, Adapter: ad, Mode: contract.ModeTelemetryOnly,
		Clients: o.Clients, ClientEvents: o.ClientEvents, ClientTimeout: o.ClientTimeout, ClientEnv: o.Env,
		Events: o.Events, Format: o.Format, Durability: o.Durability, Now: o.Now, IDs: o.IDs,
	})
	if err != nil {
		return Result{}, err
	}
	defer p.Close()
	// Held for the watch's life: a watch killed without recording its
	// end is noticed and sealed (package seal).
	lock, err := statedir.HoldWrapper(o.StateDir, p.ID)
	if err != nil {
		return Result{}, err
	}
	defer lock.Close()
	if o.OnSession != nil {
		o.OnSession(p.ID, p.Dir)
	}
	topts.Log = p.Log
	topts.Claims = &telemetry.FileClaims{Dir: filepath.Join(o.StateDir, observe.ClaimsFolder), Owner: p.ID}

	var last atomic.Int64
	last.Store(o.Now().UnixNano())
	topts.OnObservation = func() { last.Store(o.Now().UnixNano()) }

	rec := statedir.SessionRecord{
		ID: p.ID, AdapterID: ad.ID, IntegrationMode: string(contract.ModeTelemetryOnly),
		Cwd: o.Cwd, State: statedir.StateRunning, StartedAt: &start, WrapperPid: os.Getpid(),
	}
	if topts.Path != "" {
		rec.Argv = []string{topts.Path}
	}
	o.Process.describe(&rec)
	ob := &observer{p: p, rec: rec, stateDir: o.StateDir, now: o.Now}
	ob.s = NewStream(ad.Manifest(), o.Now, func(ctx context.Context, m moment.Moment) (contract.LifecycleReceipt, error) {
		res, err := p.Route(ctx, m)
		if err != nil {
			p.Log.Error("recording receipt failed", "event", m.Event, "err", err)
		}
		return res.Receipt, err
	}, ob.bound)
	ob.save()
	p.Log.Info("watch started", "adapter", ad.ID, "cwd", o.Cwd, "path", topts.Path)

	// The watcher outlives an interrupt until it has caught up (catchUp).
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	w, err := observe.Start(wctx, topts)
	if err != nil {
		return Result{}, err
	}
	defer w.Wait()

	var idleC <-chan time.Time
	if o.UntilIdle > 0 {
		tk := time.NewTicker(min(o.UntilIdle/4, time.Second))
		defer tk.Stop()
		idleC = tk.C
	}
	reason := "interrupted"
	moments := w.Moments()
	exited := o.Process.exited(wctx)
loop:
	for {
		select {
		case <-exited:
			reason = ReasonHarnessExited
			catchUp(w, moments, func(m moment.Moment) { ob.observe(context.Background(), m) })
			break loop
		case m, ok := <-moments:
			if !ok {
				moments = nil
				continue
			}
			last.Store(o.Now().UnixNano())
			ob.observe(context.Background(), m)
		case <-idleC:
			if o.Now().Sub(time.Unix(0, last.Load())) >= o.UntilIdle {
				reason = "idle"
				break loop
			}
		case <-ctx.Done():
			catchUp(w, moments, func(m moment.Moment) { ob.observe(context.Background(), m) })
			break loop
		}
	}
	cancel()
	// Moments already converted are still recorded.
	for m := range w.Moments() {
		ob.observe(context.Background(), m)
	}
	ob.end(reason, start, renewalStopping(p.Dir, o.Process, reason))
	return Result{SessionID: p.ID, Reason: reason, Receipts: ob.s.Count}, nil
}

// catchUpMax bounds the reading an interrupted watch does before it ends.
const catchUpMax = 2 * time.Second

// catchUp reads every followed source to its end (observe.Watcher.Sync)
// and hands what that yields to record, within catchUpMax: what the
// harness wrote before the watch was interrupted (a harness that just
// exited, its last lines' file events not yet taken) is recorded, not
// lost. Once Sync answers, what it read may still wait on moments: that
// is taken too.
func catchUp(w *observe.Watcher, moments <-chan moment.Moment, record func(moment.Moment)) {
	synced := w.Sync()
	bound := time.NewTimer(catchUpMax)
	defer bound.Stop()
	caughtUp := false
	for {
		var m moment.Moment
		ok := true
		if caughtUp {
			select {
			case m, ok = <-moments:
			default:
				return
			}
		} else {
			select {
			case m, ok = <-moments:
			case <-synced:
				caughtUp = true
				continue
			case <-bound.C:
				return
			}
		}
		if !ok {
			return
		}
		record(m)
	}
}

// latestFile returns the newest file the adapter's discoverer lists for
// Cwd within LatestWithin.
func latestFile(o observe.Options, now time.Time) (string, error) {
	o.LaunchedAt = now.Add(-LatestWithin)
	cfg, _, err := observe.Config(o)
	if err != nil {
		return "", err
	}
	cs, err := cfg.Discoverer.Candidates()
	if err != nil {
		return "", err
	}
	if len(cs) == 0 {
		return "", fmt.Errorf("no %s file for %s in the last %s; name the file, or drop --latest to wait for the next one", cfg.Discoverer.SourceKind(), o.Cwd, LatestWithin)
	}
	newest := cs[0]
	for _, c := range cs[1:] {
		if !c.Born.Before(newest.Born) {
			newest = c
		}
	}
	return newest.Path, nil
}

// Stream is the story a watch records from a harness's telemetry,
// through the same driver as `lifeloop run` (internal/stream): a moment
// the stream already tells is dropped, a skipped frame stage the
// manifest declares for telemetry_only is inferred, frame receipts chain
// to their frame.opening and the rest to the binding receipt, every
// receipt carries the harness session id once known, and a newer file's
// session.started opens the next harness session.
type Stream struct {
	d     *stream.Driver[contract.LifecycleReceipt]
	now   func() time.Time
	route func(context.Context, moment.Moment) (contract.LifecycleReceipt, error)
	// ctx is the context of the step being recorded.
	ctx context.Context
	// Count is the number of receipts recorded.
	Count int
}

// NewStream returns the stream of a watched harness whose adapter has
// manifest m: route records one moment, bound (optional) is told each
// harness session id the first time it is seen.
func NewStream(m contract.AdapterManifest, now func() time.Time, route func(context.Context, moment.Moment) (contract.LifecycleReceipt, error), bound func(id string)) *Stream {
	s := &Stream{now: now, route: route}
	s.d = stream.NewDriver(stream.Config{Manifest: m, Mode: contract.ModeTelemetryOnly}, s.record, stream.Callbacks{Bound: bound})
	return s
}

// Observe records a telemetry moment.
func (s *Stream) Observe(ctx context.Context, m moment.Moment) {
	s.ctx = ctx
	s.d.Step(stream.Fact{Kind: stream.Transcript, Moment: m, Now: s.now(), TranscriptOpen: true})
}

// Record records m now, preceded by the frame stages it implies, unless
// the stream already tells it.
func (s *Stream) Record(ctx context.Context, m moment.Moment) {
	s.ctx = ctx
	s.d.Step(stream.Fact{Kind: stream.Direct, Moment: m, Now: s.now()})
}

// record routes one moment the driver made ready.
func (s *Stream) record(m moment.Moment, _ bool) (contract.LifecycleReceipt, string, error) {
	r, err := s.route(s.ctx, m)
	if err != nil {
		return r, "", err
	}
	s.Count++
	return r, r.ReceiptID, nil
}

// observer records the moments of a watch session into its Stream and
// keeps session.json up to date.
type observer struct {
	p        *pipeline.Pipeline
	rec      statedir.SessionRecord
	stateDir string
	now      func() time.Time
	s        *Stream
}

func (w *observer) observe(ctx context.Context, m moment.Moment) { w.s.Observe(ctx, m) }

// bound saves a harness session id new to the session.
func (w *observer) bound(id string) {
	w.rec.HarnessSessionIDs = append(w.rec.HarnessSessionIDs, id)
	w.save()
}

// renewalStopping returns the renewal that is stopping the followed
// process (the session's renewal.json says stopping: a background
// session's renewal writes that before it stops the session through the
// harness's own command), or nil. That file is the one mark between the
// renewal and the watch: the watch alone records the session's end, so
// the session has exactly one, told as the renewal's.
func renewalStopping(dir string, p *Process, reason string) *renewal.Status {
	if p == nil || reason != ReasonHarnessExited {
		return nil
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(dir))
	if err != nil || st.State != renewal.StateStopping || st.Attempt <= 0 {
		return nil
	}
	return &st
}

// end records the session's end: session.ended, preceded, when a renewal
// stopped the harness (renewing non-nil), by that renewal's
// session.ending, as a renewal under `run` records it (reason renewal,
// renewal_attempt, renewal_step ending, resume). Unlike the stop of a
// renewal under `run` (reason renewal, renewal_step ended: the session
// goes on), the end is then the session's final one — the resumed
// conversation is a lifeloop session of its own — so it keeps the
// watch's reason and completed phase, with stopped_by renewal and the
// attempt beside them: a reason renewal would tell every reader (seal,
// OrgLoop's keys, HCP) that the session goes on. Both are recorded after
// the watch read the harness's last lines, so no frame follows the
// session.ending.
func (w *observer) end(reason string, start time.Time, renewing *renewal.Status) {
	now := w.now()
	summary := map[string]any{
		"reason":     "watch_" + reason,
		"phase":      string(contract.PhaseCompleted),
		"outcome":    string(contract.LifecycleSuccess),
		"duration_s": float64(now.Sub(start).Milliseconds()) / 1000,
		"note":       "the watch ended; the harness itself is not supervised in telemetry_only mode",
	}
	exit := statedir.ExitInfo{Code: 0, Outcome: string(contract.LifecycleSuccess), Phase: string(contract.PhaseCompleted), Reason: "watch_" + reason}
	if renewing != nil {
		w.s.Record(context.Background(), moment.Moment{Event: contract.EventSessionEnding, Summary: renewing.StepSummary("ending")})
		summary["renewal_attempt"] = renewing.Attempt
		summary["stopped_by"] = contract.StoppedByRenewal
		summary["note"] = "the renewal stopped the harness through its own command; the conversation continues in the lifeloop session of its resume (renewal.json continued_in)"
	}
	w.s.Record(context.Background(), moment.Moment{Event: contract.EventSessionEnded, Summary: summary})
	w.rec.State = statedir.StateCompleted
	w.rec.EndedAt = &now
	w.rec.Exit = &exit
	w.save()
}

func (w *observer) save() {
	w.rec.UpdatedAt = w.now()
	if err := statedir.WriteSession(w.stateDir, w.rec); err != nil {
		w.p.Log.Error("writing session.json failed", "err", err)
	}
}
