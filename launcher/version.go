package launcher

import (
	"context"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/stream"
	"github.com/lifeloop/lifeloop/ptyio"
)

// versionReader reads the version of the harness a launch starts: the npm
// package.json above its executable before the loop starts (a PATH lookup
// and up to eight folders' package.json), else its --version beside the
// loop, which nothing waits for (adapters.PackageVersion,
// adapters.ReadVersion). session.started
// carries it (telemetry_summary.harness_version) when it is known by
// then; a version newer than the newest one the harness's tests proved
// is reported once per session as capability.degraded.
//
// It also holds the facts the harness's argv methods are handed
// (adapters.Facts): the version, and --help where the adapter needs it,
// each read at most once per session, with the harness's environment.
type versionReader struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	v      string
	src    adapters.VersionSource
	name   string
	warned bool
	// started: a session.started was recorded (unproven was asked), so
	// a version read that ends later reports itself (supervisor.versionRead).
	started bool
	// What the facts are read from, and the facts once read.
	ad        *adapters.Adapter
	argv, env []string
	path      string
	facts     *adapters.Facts
}

// startVersionRead starts reading the version of the harness spec
// starts; nil when the adapter knows no version source. known, when set,
// are the facts the launch already read (the version is not read again).
// read, when set, is called by a read that runs the harness (its
// --version, beside the loop) once it has ended.
func startVersionRead(ctx context.Context, ad *adapters.Adapter, spec ptyio.ChildSpec, known *adapters.Facts, read func(context.Context, *versionReader)) *versionReader {
	if ad == nil {
		return nil
	}
	src, ok := ad.VersionSource()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	argv := append([]string{spec.Path}, spec.Args...)
	r := &versionReader{cancel: cancel, src: src, name: ad.DisplayName, ad: ad, argv: argv, env: spec.Env, path: adapters.EnvValue(spec.Env, "PATH"), facts: known}
	if known != nil {
		r.v = known.Version
		return r
	}
	path := r.path
	if r.v = adapters.PackageVersion(argv, path, src); r.v != "" {
		return r
	}
	r.wg.Add(1)
	go func() { // ends with the read, bounded by adapters.DefaultVersionTimeout and ctx
		defer r.wg.Done()
		v := adapters.ReadVersion(ctx, argv, spec.Env, path, src)
		r.mu.Lock()
		r.v = v
		r.mu.Unlock()
		if read != nil {
			read(ctx, r)
		}
	}()
	return r
}

// versionRead records, on the loop, the capability.degraded of a version
// read that ended after session.started was recorded (a harness with no
// package.json above it, asked its --version): at session.started the
// version was not known yet, and an unproven one would go unreported.
// It returns at once when the loop or the read has ended.
func (s *supervisor) versionRead(ctx context.Context, r *versionReader) {
	report := func() {
		if s.version != r || !r.started {
			return
		}
		if m, ok := r.unproven(s.cfg.Now()); ok {
			s.d.Step(stream.Fact{Kind: stream.Own, Moment: m})
		}
	}
	select {
	case s.calls <- report:
	case <-ctx.Done():
	case <-s.loopDone:
	}
}

// harnessFacts returns the facts for the harness's argv methods, read
// the first time they are asked for (after the version read ends) and
// kept for the session. It runs on a renewal's goroutine, never the
// loop's.
func (r *versionReader) harnessFacts(ctx context.Context) adapters.Facts {
	if r == nil {
		return adapters.Facts{}
	}
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.facts == nil {
		f := adapters.Facts{Version: r.v}
		if r.ad.NeedsHelp(f.Version) {
			f.Help = adapters.ReadHelp(ctx, r.argv, r.env, r.path)
		}
		r.facts = &f
	}
	return *r.facts
}

// stop ends the read and waits for it.
func (r *versionReader) stop() {
	if r != nil {
		r.cancel()
		r.wg.Wait()
	}
}

// version is the harness version read so far, or "".
func (r *versionReader) version() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v
}

// stamp adds the harness version, when known, to a session.started
// moment.
func (r *versionReader) stamp(m Moment) Moment {
	if m.Event != contract.EventSessionStarted {
		return m
	}
	if v := r.version(); v != "" {
		m.Summary = clone(m.Summary)
		m.Summary["harness_version"] = v
	}
	return m
}

// rereadVersion reads the version of a relaunched harness again: the
// harness may have updated itself since the last start. Later
// session.started receipts carry what it reads, and a version newer than
// the newest proven one is reported again, at once when the version is
// already known, unless it is the version already reported.
func (s *supervisor) rereadVersion(spec ptyio.ChildSpec) {
	reported := ""
	if r := s.version; r != nil {
		if r.warned {
			reported = r.version()
		}
		r.stop()
	}
	s.version = startVersionRead(s.ctx, s.cfg.Adapter, spec, nil, s.versionRead) // and the facts with it, for the next relaunch
	if s.version == nil {
		return
	}
	if v := s.version.version(); v != "" && v == reported {
		s.version.warned = true
	}
	if m, ok := s.version.unproven(s.cfg.Now()); ok {
		s.d.Step(stream.Fact{Kind: stream.Own, Moment: m})
	}
}

// unproven is, once per session and harness version and after its
// session.started, the capability.degraded to record when the harness
// runs a version newer than the newest one its tests proved. It runs on
// the loop, when session.started is recorded and when a later read ends.
func (r *versionReader) unproven(at time.Time) (Moment, bool) {
	if r == nil {
		return Moment{}, false
	}
	r.started = true
	if r.warned {
		return Moment{}, false
	}
	evidence := adapters.UnprovenVersion(r.name, r.version(), r.src)
	if evidence == "" {
		return Moment{}, false
	}
	r.warned = true
	now := at.Unix()
	rc := contract.RetryAfterReread
	return Moment{
		Event:   contract.EventCapabilityDegraded,
		Status:  contract.StatusDegraded,
		Summary: map[string]any{"reason": "harness_version_unproven", "harness_version": r.version(), "newest_proven": r.src.NewestProven},
		Degradations: []contract.CapabilityDegradation{{
			Capability: "telemetry", PreviousSupport: contract.SupportSynthesized, CurrentSupport: contract.SupportPartial,
			ObservedAtEpochS: &now, Evidence: &evidence, RetryClass: &rc,
		}},
	}, true
}
