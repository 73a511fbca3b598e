package telemetry

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

type atomicString struct{ v atomic.Pointer[string] }

func (a *atomicString) Store(s string) { a.v.Store(&s) }

func (a *atomicString) Load() string {
	if p := a.v.Load(); p != nil {
		return *p
	}
	return ""
}

// WatchConfig configures [Watch].
type WatchConfig struct {
	// Path is a file named by a hook or by the operator. When set, no
	// discovery runs and Discoverer is only used for Follow.
	Path string
	// Discoverer finds the file when Path is empty (and newer files when
	// Follow is set).
	Discoverer Discoverer
	// Claims, when set, keeps this watcher off files other sessions follow.
	Claims Claims
	// Within bounds the first discovery (default 30s). When it passes,
	// Watch emits ObsSourceNotFound once and keeps looking.
	Within time.Duration
	// Follow switches to a newer matching file when one appears (a renewed
	// or resumed harness writes a new file). Enable it only where a newer
	// file in the same place belongs to this session (the supervisor knows:
	// it renewed, or a hook named the new file); Claims keep sessions that
	// claimed first safe either way.
	Follow bool
	// NewParser returns a fresh parser for each file followed. Required.
	NewParser func() Parser
	// Levels are the pressure thresholds (default DefaultLevels).
	Levels Levels
	// ReportFirstPressure reports the first usage reading of the first
	// file followed as a pressure change even when it is low: the watcher
	// follows a renewal's new conversation, whose level replaces the one
	// the session's earlier conversation left. A file switched to later
	// (a new conversation) always reports it.
	ReportFirstPressure bool
	// Syncs, when set, asks for a catch-up (TailConfig.Syncs): on each
	// value the watcher looks for a newer file (with Follow) or for the
	// first one, reads what the followed file holds so far at once, hands
	// every observation to the sink, and then calls the value, from the
	// sink's goroutine.
	Syncs <-chan func()
	// Tail carries MaxLine, Poll, SafetyPoll and ForcePoll for the tailer
	// and the folder watcher; Path and Syncs are ignored. Discovered files are always
	// read from the start; Tail.FromStart applies to an explicit Path.
	Tail TailConfig
}

// Watch follows one harness's telemetry and hands every observation to
// sink, from the calling goroutine, until ctx is cancelled (then it
// returns nil). Pressure changes are delivered as ObsPressure right after
// the usage or compaction that caused them. Lines the parser cannot use
// and over-long lines are counted and attached, as Evidence, to the next
// observation delivered.
//
// A discoverer that is a [RecordSource] follows its sessions itself (they
// are records in a store, not lines in a file); everything else is the
// same.
//
// Goroutines: one per followed file (the tailer; it exits when its file
// is switched away from or ctx ends, and Watch waits for it) and, with
// Follow, one folder watcher (exits with ctx, awaited). Discovery runs in
// the calling goroutine.
func Watch(ctx context.Context, cfg WatchConfig, sink func(Observation)) error {
	if cfg.NewParser == nil {
		return errors.New("telemetry: watch needs a parser (NewParser)")
	}
	if cfg.Path == "" && cfg.Discoverer == nil {
		return errors.New("telemetry: watch needs a file path or a discoverer")
	}
	if cfg.Levels == (Levels{}) {
		cfg.Levels = DefaultLevels
	}
	if err := cfg.Levels.Validate(); err != nil {
		return err
	}
	w := &watcher{cfg: cfg, sink: sink}
	return w.run(ctx)
}

// tailMsg is one event (a RecordSource's follower) or one batch of them
// (the file tailer).
type tailMsg struct {
	gen   int
	ev    TailEvent
	batch *tailBatch
	// synced says the tailer has caught up for the syncs in flight.
	synced bool
}

type watcher struct {
	cfg      WatchConfig
	sink     func(Observation)
	kind     SourceKind
	parser   Parser
	pressure *PressureTracker
	files    int // files followed so far
	evidence Evidence
	cur      Candidate
	curPath  atomicString // cur.Path, read by the folder watcher goroutine
	obs      []Observation

	gen    int
	msgs   chan tailMsg
	cancel context.CancelFunc
	done   chan struct{}
	// tailSync asks the current tailer to catch up (buffered, one request
	// in flight at most); syncsInFlight wait for its answer and
	// syncsQueued for the next request.
	tailSync      chan func()
	tailCtx       context.Context
	syncsInFlight []func()
	syncsQueued   []func()
}

func (w *watcher) run(ctx context.Context) error {
	w.msgs = make(chan tailMsg, 64)
	defer w.stopTail()

	if w.cfg.Path != "" {
		w.kind = SourceTranscript
		if w.cfg.Discoverer != nil {
			w.kind = w.cfg.Discoverer.SourceKind()
		} else if k := w.cfg.NewParser().SourceKind(); k != "" {
			w.kind = k
		}
		born, _ := BornAt(w.cfg.Path)
		w.cur = Candidate{Path: w.cfg.Path, Born: born}
		w.curPath.Store(w.cfg.Path)
		if w.cfg.Claims != nil {
			w.cfg.Claims.Claim(w.cfg.Path)
		}
		w.emit(Observation{Kind: ObsSourceFound, Source: Provenance{Path: w.cfg.Path, Kind: w.kind}})
		w.startTail(ctx, w.cfg.Path, w.cfg.Tail.FromStart)
	} else {
		w.kind = w.cfg.Discoverer.SourceKind()
		if !w.discover(ctx) {
			return nil
		}
	}
	if w.cfg.Claims != nil {
		defer func() { w.cfg.Claims.Release(w.cur.Path) }()
	}

	var notes chan struct{}
	if w.cfg.Follow && w.cfg.Discoverer != nil {
		notes = make(chan struct{}, 1)
		dctx, dcancel := context.WithCancel(ctx)
		ddone := make(chan struct{})
		defer func() { dcancel(); <-ddone }()
		dw := &DirWatcher{Roots: w.cfg.Discoverer.Roots(), Skip: skipperOf(w.cfg.Discoverer), Flat: isFlat(w.cfg.Discoverer), Poll: w.cfg.Tail.Poll, SafetyPoll: w.cfg.Tail.SafetyPoll, ForcePoll: w.cfg.Tail.ForcePoll}
		go func() {
			defer close(ddone)
			_ = dw.Run(dctx, func(TailMode, error) {}, func(path string) {
				if path != "" && path == w.curPath.Load() {
					return // our own file grew: nothing new to discover
				}
				select {
				case notes <- struct{}{}:
				default: // a rescan is already pending
				}
			})
		}()
	}

	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-w.msgs:
			switch {
			case m.gen != w.gen:
			case m.synced:
				w.synced()
			case m.batch != nil:
				for i := range m.batch.events {
					w.handle(m.batch.events[i])
				}
				m.batch.release()
			default:
				w.handle(m.ev)
			}
		case <-notes:
			w.lookForNewer(ctx)
		case done := <-w.cfg.Syncs:
			if w.cfg.Follow && w.cfg.Discoverer != nil {
				w.lookForNewer(ctx)
			}
			w.syncsQueued = append(w.syncsQueued, done)
			w.requestSync()
		}
	}
}

// lookForNewer switches to a newer file, if one appeared (Follow).
func (w *watcher) lookForNewer(ctx context.Context) {
	if c, ok, _ := pick(w.cfg.Discoverer, w.cfg.Claims, w.cur.Born, true); ok && c.Path != w.cur.Path {
		w.switchTo(ctx, c)
	}
}

// requestSync asks the tailer to catch up for the queued syncs, unless a
// request is already in flight (its answer asks again).
func (w *watcher) requestSync() {
	if len(w.syncsInFlight) > 0 || len(w.syncsQueued) == 0 || w.tailSync == nil {
		return
	}
	w.syncsInFlight, w.syncsQueued = w.syncsQueued, nil
	gen, msgs, tctx := w.gen, w.msgs, w.tailCtx
	w.tailSync <- func() {
		select {
		case msgs <- tailMsg{gen: gen, synced: true}:
		case <-tctx.Done():
		}
	}
}

// synced answers the syncs the tailer has caught up for: everything it
// read before has been handled.
func (w *watcher) synced() {
	for _, done := range w.syncsInFlight {
		done()
	}
	w.syncsInFlight = nil
	w.requestSync()
}

// discover blocks until a file is found (emitting ObsSourceNotFound once
// when the bound passes) or ctx ends; it reports whether a file was found.
func (w *watcher) discover(ctx context.Context) bool {
	within := w.cfg.Within
	reported := false
	for {
		c, pending, err := discover(ctx, DiscoverConfig{Discoverer: w.cfg.Discoverer, Claims: w.cfg.Claims, Within: within, Poll: w.cfg.Tail.Poll, ForcePoll: w.cfg.Tail.ForcePoll}, w.cfg.Syncs)
		if err == nil {
			w.switchTo(ctx, c)
			w.syncsQueued = append(w.syncsQueued, pending...)
			w.requestSync()
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if errors.Is(err, ErrNotFound) && !reported {
			reported = true
			w.emit(Observation{Kind: ObsSourceNotFound, Detail: err.Error(), Source: Provenance{Kind: w.kind}})
		}
		within = time.Minute
	}
}

func (w *watcher) switchTo(ctx context.Context, c Candidate) {
	w.stopTail()
	if w.cfg.Claims != nil && w.cur.Path != "" && w.cur.Path != c.Path {
		w.cfg.Claims.Release(w.cur.Path)
	}
	w.cur = c
	w.curPath.Store(c.Path)
	w.emit(Observation{Kind: ObsSourceFound, HarnessSessionID: c.SessionID, Source: Provenance{Path: c.Path, Kind: w.kind}})
	w.startTail(ctx, c.Path, true)
}

func (w *watcher) startTail(ctx context.Context, path string, fromStart bool) {
	w.gen++
	w.parser = w.cfg.NewParser()
	w.pressure = NewPressureTracker(w.cfg.Levels)
	if w.cfg.ReportFirstPressure || w.files > 0 {
		w.pressure.ReportFirstReading()
	}
	w.files++
	tctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	w.cancel, w.done = cancel, done
	tc := w.cfg.Tail
	tc.Path, tc.FromStart = path, fromStart
	tc.SkipValidate = true // the parser rejects invalid lines; handle counts them
	// Syncs in flight to the tailer stopped go to this one.
	w.tailSync, w.tailCtx = make(chan func(), 1), tctx
	tc.Syncs = w.tailSync
	w.syncsQueued = append(w.syncsInFlight, w.syncsQueued...)
	w.syncsInFlight = nil
	defer w.requestSync()
	gen, msgs := w.gen, w.msgs
	if rs, ok := w.cfg.Discoverer.(RecordSource); ok {
		go func() {
			defer close(done)
			_ = rs.Follow(tctx, tc, func(ev TailEvent) {
				select {
				case msgs <- tailMsg{gen: gen, ev: ev}:
				case <-tctx.Done():
				}
			})
		}()
		return
	}
	go func() {
		defer close(done)
		b := newBatcher(tctx, func(batch *tailBatch) {
			select {
			case msgs <- tailMsg{gen: gen, batch: batch}:
			case <-tctx.Done():
			}
		})
		_ = tail(tctx, tc, b.event, b.keep, b.flush)
	}()
}

// stopTail cancels the current tailer and waits for it to exit.
func (w *watcher) stopTail() {
	if w.cancel == nil {
		return
	}
	w.cancel()
	<-w.done
	w.cancel, w.done = nil, nil
}

func (w *watcher) prov(ev TailEvent) Provenance {
	return Provenance{Path: w.cur.Path, Line: ev.LineNo, Offset: ev.Offset, Kind: w.kind}
}

func (w *watcher) handle(ev TailEvent) {
	switch ev.Kind {
	case EventLine:
		var err error
		w.obs, err = w.parser.Parse(w.obs[:0], ev.Line, w.prov(ev))
		if err != nil {
			w.evidence.InvalidLines++
		}
		for _, o := range w.obs {
			w.emit(o)
			if p, ok := w.pressure.Observe(o); ok {
				w.emit(p)
			}
		}
	case EventInvalid:
		w.evidence.InvalidLines++
	case EventOverlong:
		w.evidence.OverlongLines++
	case EventMode:
		o := Observation{Kind: ObsSourceMode, Trigger: string(ev.Mode), Source: w.prov(ev)}
		if ev.Err != nil {
			o.Detail = ev.Err.Error()
		}
		w.emit(o)
	case EventTruncated:
		w.emit(Observation{Kind: ObsSourceTruncated, Source: w.prov(ev)})
	case EventReplaced:
		w.emit(Observation{Kind: ObsSourceReplaced, Source: w.prov(ev)})
	case EventDeleted:
		w.emit(Observation{Kind: ObsSourceDeleted, Source: w.prov(ev)})
	case EventAppeared:
		w.emit(Observation{Kind: ObsSourceAppeared, Source: w.prov(ev)})
	case EventError:
		w.emit(Observation{Kind: ObsSourceError, Detail: ev.Err.Error(), Source: w.prov(ev)})
	}
}

func (w *watcher) emit(o Observation) {
	o.Evidence = w.evidence
	w.evidence = Evidence{}
	w.sink(o)
}
