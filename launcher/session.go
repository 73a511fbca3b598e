package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/callback"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/router"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/telemetry"
)

// ClientSpec is one `--client` command.
type ClientSpec struct {
	Path string
	Args []string
}

// Options are everything `lifeloop run` decided from its flags.
type Options struct {
	// StateDir is the resolved state root.
	StateDir string
	// Argv is the harness command line as the user typed it.
	Argv []string
	// Adapter forces an adapter id; empty resolves from Argv.
	Adapter string
	// Registry of adapters (default builtin.Default()).
	Registry *adapters.Registry
	// Env is the environment the harness and clients inherit.
	Env []string
	// Dir is the harness's working directory (required).
	Dir string

	In         io.Reader
	Out        io.Writer
	Cols, Rows uint16

	Tick, IdleAfter, Grace, MaxDuration time.Duration

	Clients       []ClientSpec
	ClientEvents  []contract.Event // empty: every event
	ClientTimeout time.Duration
	Events        []string // sink destinations
	Format        sink.Format
	Require       *contract.CapabilityRequest

	// Hooks installs the hook bridge (native hooks forwarded to the
	// supervisor) where the adapter has one.
	Hooks bool
	// Exe is the lifeloop executable the hook bridge calls (default
	// os.Executable()).
	Exe string
	// Payloads are delivered into the new session at PayloadsAt:
	// session.started (default) through the harness's command line where
	// the adapter has a launch placement, else its SessionStart hook;
	// frame.opening through the hook of the first prompt.
	Payloads   []contract.PayloadEnvelope
	PayloadsAt contract.Event

	// NoTelemetry turns the telemetry watcher off; otherwise it runs when
	// the adapter has telemetry (see TelemetryOptions).
	NoTelemetry bool
	// Levels are the context pressure thresholds (default
	// telemetry.DefaultLevels).
	Levels telemetry.Levels
	// TelemetryNotFoundAfter bounds the search for the harness's telemetry
	// file before capability.degraded (default DefaultNotFoundAfter).
	TelemetryNotFoundAfter time.Duration

	// HandleSignals installs the signal policy (true for the CLI).
	HandleSignals bool
	// ContinueSession continues an existing session whose wrapper is gone
	// (e.g. killed during a renewal): same id and ledger; a renewal left
	// in progress is finished first, delivering its payloads once.
	ContinueSession string
	// OnSession, when set, is told the session id and directory as soon as
	// they exist (before launch).
	OnSession func(id, dir string)

	Now func() time.Time
	IDs ids.Source
}

// Launch runs one harness under lifeloop: resolves the adapter, creates the
// session directory, ledger, sinks and clients, negotiates, and supervises
// the harness until it exits. The returned Result's ExitCode is what
// `lifeloop run` exits with.
func Launch(ctx context.Context, o Options) (Result, error) {
	if len(o.Argv) == 0 {
		return Result{}, errors.New("no command to run; usage: lifeloop run [flags] -- CMD [ARGS...]")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IDs == nil {
		o.IDs = ids.NewULIDSource(o.Now, nil)
	}
	if o.Registry == nil {
		o.Registry = builtin.Default()
	}
	if o.Dir == "" {
		return Result{}, errors.New("no working directory for the harness")
	}

	var ad *adapters.Adapter
	if o.Adapter != "" {
		a, err := o.Registry.Lookup(o.Adapter)
		if err != nil {
			return Result{}, err
		}
		ad = a
	} else {
		ad = o.Registry.Resolve(o.Argv)
	}
	argv := ad.PrepareLaunch(slices.Clone(o.Argv))

	id, dir, err := sessionFor(o)
	if err != nil {
		return Result{}, err
	}
	if o.OnSession != nil {
		o.OnSession(id, dir)
	}
	logFile, err := os.OpenFile(statedir.LogPath(o.StateDir, id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return Result{}, fmt.Errorf("session log: %w", err)
	}
	defer logFile.Close()
	log := slog.New(slog.NewJSONHandler(logFile, nil)).With("session", id)

	led, err := ledger.Open(statedir.ReceiptsPath(o.StateDir, id), ledger.Options{Now: o.Now, IDs: o.IDs})
	if err != nil {
		return Result{}, err
	}
	defer func() { _ = led.Close() }()

	var sinks []router.Sink
	var openSinks []*sink.Sink
	for _, dest := range o.Events {
		sk, err := sink.Open(dest, o.Format, sink.Options{SessionID: id, OrgLoopHarness: ad.OrgLoopHarness, Logger: log})
		if err != nil {
			return Result{}, fmt.Errorf("--events %s: %w", dest, err)
		}
		openSinks = append(openSinks, sk)
		sinks = append(sinks, sk)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		for _, sk := range openSinks {
			_ = sk.Close(cctx)
		}
	}()

	var clients []router.Client
	for _, c := range o.Clients {
		inv := &callback.Invoker{
			Path: c.Path, Args: c.Args, Timeout: o.ClientTimeout, Env: o.Env,
			SessionID: id, SessionDir: dir, StateDir: o.StateDir,
		}
		clients = append(clients, filteredClient{inv: inv, events: o.ClientEvents})
	}

	// Every receipt of this run shares one invocation id.
	invocation := o.IDs.New(ids.PrefixInvocation)
	rt, err := router.New(router.Config{
		Manifest:     ad.Manifest(),
		Mode:         contract.ModeLauncherWrapper,
		Require:      o.Require,
		Ledger:       led,
		InvocationID: invocation,
		AsyncClients: clients,
		Sinks:        sinks,
		Now:          o.Now,
		IDs:          o.IDs,
		Logger:       log,
	})
	if err != nil {
		return Result{}, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = rt.Close(cctx)
	}()

	// A second router for hook moments that can still place payloads: the
	// same ledger and sinks, but clients answer synchronously so their
	// payloads reach the harness through the hook's response.
	var hookRT *router.Router
	var bridgeArgs []string
	env := append(slices.Clone(o.Env),
		"LIFELOOP_SESSION_ID="+id,
		"LIFELOOP_SESSION_DIR="+dir,
		"LIFELOOP_STATE_DIR="+o.StateDir,
	)
	if o.Hooks {
		exe := o.Exe
		if exe == "" {
			if exe, err = os.Executable(); err != nil {
				return Result{}, fmt.Errorf("hook bridge: cannot find the lifeloop executable: %w", err)
			}
		}
		extra, err := hookBridgeArgs(ad, argv, dir, env, exe)
		if err != nil {
			return Result{}, err
		}
		bridgeArgs = extra
		if extra != nil {
			argv = adapters.InsertArgs(argv, extra)
			hookRT, err = router.New(router.Config{
				Manifest:     ad.Manifest(),
				Mode:         contract.ModeLauncherWrapper,
				Require:      o.Require,
				Ledger:       led,
				Clients:      clients,
				Sinks:        sinks,
				InvocationID: invocation,
				Now:          o.Now,
				IDs:          o.IDs,
				Logger:       log,
			})
			if err != nil {
				return Result{}, err
			}
		}
	}

	startPayloads, hookPayloads := o.Payloads, []contract.PayloadEnvelope(nil)
	if o.PayloadsAt == contract.EventFrameOpening {
		startPayloads, hookPayloads = nil, o.Payloads
	}
	if len(startPayloads) > 0 {
		var rest []contract.PayloadEnvelope
		argv, startPayloads, rest = placeAtLaunch(ad, argv, startPayloads)
		hookPayloads = append(hookPayloads, rest...)
	}
	files := &placementFiles{dir: dir}
	defer files.remove()
	if argv, err = ad.ExternalizePlacement(argv, files.write); err != nil {
		return Result{}, err
	}
	if len(hookPayloads) > 0 && hookRT == nil {
		return Result{}, fmt.Errorf("--payload: adapter %s cannot take payload %s in this launch: no launch placement fits it and no hook bridge is installed", ad.ID, hookPayloads[0].PayloadID)
	}

	var observations <-chan Moment
	var tel *telemetryRunner
	var pinned string
	if t := ad.Telemetry(); t != nil && !o.NoTelemetry {
		argv, pinned = ad.PinSession(argv)
		tel = &telemetryRunner{ctx: ctx, log: log, ad: ad, opts: TelemetryOptions{
			Harness: t, Env: env, Cwd: o.Dir, Levels: o.Levels, NotFoundAfter: o.TelemetryNotFoundAfter,
			Claims: &telemetry.FileClaims{Dir: filepath.Join(o.StateDir, ClaimsFolder), Owner: id},
			Now:    o.Now, Log: log,
		}}
		defer tel.stop()
		observations = tel.start(pinned, o.Now())
	}

	rec := statedir.SessionRecord{
		ID: id, AdapterID: ad.ID, IntegrationMode: string(contract.ModeLauncherWrapper),
		Argv: adapters.RedactPlacement(argv), Cwd: o.Dir,
	}
	var prior []contract.LifecycleReceipt
	if o.ContinueSession != "" {
		if prev, err := statedir.ReadSession(o.StateDir, id); err == nil {
			rec.HarnessSessionIDs = prev.HarnessSessionIDs
		}
		for e, err := range ledger.ReadSince(statedir.ReceiptsPath(o.StateDir, id), 0) {
			if err == nil {
				prior = append(prior, e.Receipt)
			}
		}
	}
	recorder := &routerRecorder{rt: rt}

	if n := rt.Negotiation(); n != nil && !n.Verdict.Proceed {
		return rejected(o, rec, recorder, n)
	}

	cfg := Config{
		StateDir:        o.StateDir,
		Record:          rec,
		Spec:            ptyio.ChildSpec{Path: argv[0], Args: argv[1:], Env: env, Dir: o.Dir},
		Terminal:        ptyio.TerminalConfig{In: o.In, Out: o.Out, Cols: o.Cols, Rows: o.Rows, Logger: log},
		Tick:            o.Tick,
		IdleAfter:       o.IdleAfter,
		Grace:           o.Grace,
		MaxDuration:     o.MaxDuration,
		PinnedSessionID: pinned,
		Recorder:        recorder,
		Observations:    observations,
		Telemetry:       tel,
		Files:           files,
		StartPayloads:   startPayloads,
		Adapter:         ad,
		Registry:        o.Registry,
		Recover:         o.ContinueSession != "",
		Prior:           prior,
		UserArgv:        o.Argv,
		BridgeArgs:      bridgeArgs,
		HandleSignals:   o.HandleSignals,
		ControlSocket:   controlSocketPath(o.StateDir, id),
		Log:             log,
		Now:             o.Now,
	}
	if hookRT != nil {
		cfg.HookRecorder = &routerRecorder{rt: hookRT}
		cfg.HookPayloads = hookPayloads
		cfg.HookPayloadsAt = o.PayloadsAt
	}
	return Run(ctx, cfg)
}

// rejected records a refused negotiation: a failed session.starting,
// state rejected, exit 125.
func rejected(o Options, rec statedir.SessionRecord, r *routerRecorder, n *contract.NegotiationResult) (Result, error) {
	// The router fails every Route when negotiation refused; this records
	// the refusal as the session's only receipt.
	_, _ = r.Record(context.Background(), Moment{Event: contract.EventSessionStarting})
	rec.State = statedir.StateRejected
	now := o.Now()
	rec.EndedAt = &now
	rec.UpdatedAt = now
	_ = statedir.WriteSession(o.StateDir, rec)
	fc := "capability_unsupported"
	if n.Verdict.FailureClass != nil {
		fc = string(*n.Verdict.FailureClass)
	}
	reason := strings.Join(n.Verdict.Reasons, "; ")
	return Result{
		ExitCode:  exitcode.LaunchFailed,
		State:     statedir.StateRejected,
		LaunchErr: fmt.Errorf("negotiation refused (%s): %s; see `lifeloop negotiate --adapter %s`", fc, reason, rec.AdapterID),
	}, nil
}

// sessionFor returns the session this launch records into: a new one, or
// the one to continue, which must exist and have no live wrapper.
func sessionFor(o Options) (id, dir string, err error) {
	if o.ContinueSession == "" {
		id = o.IDs.New(ids.PrefixSession)
		dir, err = statedir.CreateSessionDir(o.StateDir, id)
		return id, dir, err
	}
	id = o.ContinueSession
	if _, err := statedir.ReadSession(o.StateDir, id); err != nil {
		return "", "", fmt.Errorf("--continue-session: unknown session %q; see `lifeloop sessions`", id)
	}
	dir = statedir.SessionDir(o.StateDir, id)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := Call(ctx, ControlSocketFor(o.StateDir, id), OpStatus, nil, nil); err == nil {
		return "", "", fmt.Errorf("--continue-session: session %s still has a live wrapper; use `lifeloop renew %s`", id, id)
	}
	return id, dir, nil
}

// placeAtLaunch puts the payloads whose placement resolves to pre_session
// into the harness's command line (the adapter's launch placement) and
// returns the new argv, the payloads placed, and the rest.
func placeAtLaunch(ad *adapters.Adapter, argv []string, payloads []contract.PayloadEnvelope) ([]string, []contract.PayloadEnvelope, []contract.PayloadEnvelope) {
	m := ad.Manifest()
	routes := contract.PlacementRoutes(contract.EventSessionStarting)
	var fit, rest []contract.PayloadEnvelope
	for _, p := range payloads {
		d := contract.ResolvePlacement(m, p, routes)
		if d.Target != nil && *d.Target == contract.ManifestPreSession &&
			(d.Outcome == contract.PlacementOutcomeDelivered || d.Outcome == contract.PlacementOutcomeDegraded) {
			fit = append(fit, p)
		} else {
			rest = append(rest, p)
		}
	}
	if len(fit) == 0 {
		return argv, nil, rest
	}
	text, err := contract.RenderTransport(fit)
	if err != nil {
		return argv, nil, payloads
	}
	out, target, ok := ad.PlaceAtLaunch(argv, string(text))
	if !ok || target != contract.ManifestPreSession {
		return argv, nil, payloads
	}
	return out, fit, rest
}

// controlSocketPath is the control socket of session id under root.
func controlSocketPath(root, id string) string {
	return ControlSocketIn(statedir.SessionDir(root, id))
}

// ControlSocketFor returns where the control socket of session id lives.
func ControlSocketFor(root, id string) string { return controlSocketPath(root, id) }

// ControlSocketIn returns the control socket of the session whose folder
// is dir: dir/control.sock, or — unix socket paths are limited to 108
// bytes — a socket under the temporary folder named after the session
// when that path would be too long.
func ControlSocketIn(dir string) string {
	p := filepath.Join(dir, statedir.ControlSocket)
	if len(p) < 100 {
		return p
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("lifeloop-%d-%s.sock", os.Getuid(), filepath.Base(dir)))
}

// routerRecorder adapts the router to the supervisor's Recorder.
type routerRecorder struct{ rt *router.Router }

func (r *routerRecorder) Record(ctx context.Context, m Moment) (contract.LifecycleReceipt, error) {
	res, err := r.rt.Route(ctx, InputOf(m))
	return res.Receipt, err
}

// RecordSync records m with the router's synchronous clients.
func (r *routerRecorder) RecordSync(ctx context.Context, m Moment) (SyncResult, error) {
	res, err := r.rt.Route(ctx, InputOf(m))
	return SyncResult{Receipt: res.Receipt, Placements: res.Placements, ClientPayloads: res.ClientPayloads}, err
}

// InputOf is the router input that records m.
func InputOf(m Moment) router.Input {
	in := router.Input{
		Event:            m.Event,
		EventID:          m.EventID,
		HarnessSessionID: m.HarnessSessionID,
		FrameContext:     m.Frame,
		Payloads:         m.Payloads,
		PayloadReceipts:  m.PayloadReceipts,
		ParentReceiptID:  m.Parent,
		TelemetrySummary: m.Summary,
		Degradations:     m.Degradations,
		Warnings:         m.Warnings,
		Failure:          m.Failure,
		IdempotencyKey:   m.IdempotencyKey,
	}
	if m.Status != "" && m.Status != contract.StatusFailed {
		st := m.Status
		in.Status = &st
	}
	return in
}

// filteredClient skips dispatches whose event is not in events.
type filteredClient struct {
	inv    *callback.Invoker
	events []contract.Event
}

func (f filteredClient) Invoke(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
	if len(f.events) > 0 && !slices.Contains(f.events, env.Request.Event) {
		return contract.CallbackResponse{SchemaVersion: contract.Version, Status: contract.StatusSkipped}, nil
	}
	return f.inv.Invoke(ctx, env)
}
