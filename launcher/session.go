package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/notify"
	"github.com/lifeloop/lifeloop/internal/observe"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/router"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/telemetry"
)

// Options are everything `lifeloop run` decided from its flags.
type Options struct {
	// StateDir is the resolved state root.
	StateDir string
	// Argv is the harness command line as the user typed it.
	Argv []string
	// Adapter forces an adapter id; empty resolves from Argv.
	Adapter string
	// Registry of adapters (required): the command line passes the
	// plug-ins it was built with (adapters/builtin).
	Registry *adapters.Registry
	// Env is the environment the harness and clients inherit.
	Env []string
	// Dir is the harness's working directory (required).
	Dir string

	// In, Out and Err are lifeloop's own standard descriptors. The
	// harness gets a PTY where they are terminals; each that is a plain
	// file or pipe it gets as it is, unless AlwaysPTY (see
	// ptyio.TerminalConfig.PassThrough).
	In         io.Reader
	Out, Err   io.Writer
	AlwaysPTY  bool
	Cols, Rows uint16

	Tick, IdleAfter, Grace, MaxDuration time.Duration

	Clients       []pipeline.ClientSpec
	ClientEvents  []contract.Event // empty: every event
	ClientTimeout time.Duration
	Events        []string // sink destinations
	Format        sink.Format
	Require       *contract.CapabilityRequest

	// Hooks installs the hook bridge (native hooks forwarded to the
	// supervisor) where the adapter has one.
	Hooks bool
	// Exe is the program the hook bridge calls (default
	// os.Executable()); the command line passes the lean hook program,
	// lifeloop-hook, when it is beside lifeloop (internal/hookcall).
	Exe string
	// Payloads are delivered into the new session at PayloadsAt:
	// session.started (default) through the harness's command line where
	// the adapter has a launch placement, else its SessionStart hook;
	// frame.opening through the hook of the first prompt.
	Payloads   []contract.PayloadEnvelope
	PayloadsAt contract.Event
	// PayloadArgvOK lets a launch placement (at start and at every
	// renewal) leave a payload body in the harness's argv where the
	// adapter has no private channel for it (adapters.WithArgvPayloads);
	// without it such a placement is refused.
	PayloadArgvOK bool

	// NoTelemetry turns the telemetry watcher off; otherwise it runs when
	// the adapter has telemetry (see observe.Options).
	NoTelemetry bool
	// Levels are the context pressure thresholds (default
	// telemetry.DefaultLevels).
	Levels telemetry.Levels
	// TelemetryNotFoundAfter bounds the search for the harness's telemetry
	// file before capability.degraded (default observe.DefaultNotFoundAfter).
	TelemetryNotFoundAfter time.Duration

	// HandleSignals installs the signal policy (true for the CLI).
	HandleSignals bool
	// Signals, when set with HandleSignals, are the policy's signals the
	// caller already catches (CatchSignals) and releases; without
	// HandleSignals they are not used.
	Signals *SignalCatch
	// ContinueSession continues an existing session whose wrapper is gone
	// (e.g. killed during a renewal): same id and ledger; a renewal left
	// in progress is finished first, delivering its payloads once.
	ContinueSession string

	// OnSession, when set, is told the session id and folder as soon as
	// they exist (before launch).
	OnSession func(id, dir string)
	// SessionEnv, when set, gives variables to add to the environment of
	// session id's harness process numbered process (1 at the launch, one
	// more at each relaunch; processenv.go); each relaunch gets them again
	// with its number.
	SessionEnv func(id string, process int) []string
	// ProcessWrapper, when set, is lifeloop's process-wrapper prefix for
	// adapter, chaining chain (the person's own wrapper, may be nil): a
	// harness that starts background sessions through a wrapper
	// (adapters.ProcessWrapped) is given it, so each becomes a session.
	ProcessWrapper func(adapter string, chain []string) []string

	// Companion, when set, is the command line of a client that runs
	// beside session id for as long as it does (the renewal policy `run
	// --renew-at` attaches: `lifeloop autorenew --attached ID`): started
	// once the session's control socket listens and its harness started,
	// with Env and the session's LIFELOOP_* variables, in its own session
	// and process group, without the terminal, its output appended to the
	// session folder's companion.log (0600); after session.ended it gets
	// 1 s to exit, then SIGTERM, then SIGKILL 1 s later. One that exits while the session
	// runs is recorded once as capability.degraded (capability
	// "companion"), and the session goes on without it.
	Companion func(id string) []string

	// Notify says which notifiers announce each episode of waiting
	// (internal/notify; launcher/attention.go runs them).
	Notify notify.Config

	// Durability is the ledger's SyncMode; the harness's hook processes
	// inherit it through $LIFELOOP_DURABILITY.
	Durability ledger.SyncMode

	Now func() time.Time
	IDs ids.Source
}

// Launch runs one harness under lifeloop and supervises it until it
// exits. The returned Result's ExitCode is what `lifeloop run` exits
// with. Its stages, in order: resolve the adapter, open the session's
// pipeline, bridge the harness's hooks, place the payloads, follow the
// telemetry, then negotiate and Run.
func Launch(ctx context.Context, o Options) (Result, error) {
	o, err := o.withDefaults()
	if err != nil {
		return Result{}, err
	}
	go warmJSON()
	// Catching signals takes a round trip per signal to the runtime's
	// signal thread; it runs while the session opens.
	var sigs *SignalCatch
	if o.HandleSignals {
		if sigs = o.Signals; sigs == nil {
			sigs = CatchSignals()
			defer sigs.Release()
		}
	}
	ad, err := resolveAdapter(o)
	if err != nil {
		return Result{}, err
	}
	if o.PayloadArgvOK {
		ad = ad.WithArgvPayloads()
	}
	// The command line as the plan starts it (launchRecipe.plan), which
	// the hook bridge and the harness's facts are read for.
	argv := ad.PrepareLaunch(slices.Clone(o.Argv))

	p, err := openSession(o, ad)
	if err != nil {
		return Result{}, err
	}
	defer p.Close()
	// Held until this process ends, however it ends: a session whose lock
	// is free and whose end is not recorded lost its wrapper (package
	// seal).
	lock, err := statedir.HoldWrapper(o.StateDir, p.ID)
	if err != nil {
		return Result{}, err
	}
	defer lock.Close()
	if o.OnSession != nil {
		o.OnSession(p.ID, p.Dir)
	}
	env := append(slices.Clone(o.Env),
		"LIFELOOP_SESSION_ID="+p.ID,
		"LIFELOOP_SESSION_DIR="+p.Dir,
		"LIFELOOP_STATE_DIR="+o.StateDir,
		control.SocketEnv+"="+control.SocketIn(p.Dir),
		ledger.DurabilityEnv+"="+o.Durability.String(),
	)
	if o.SessionEnv != nil {
		env = append(env, o.SessionEnv(p.ID, 1)...)
	}
	env = withProcessWrapper(o, ad, env, p.Log)

	bridge, err := bridgeHooks(o, ad, p, argv, env)
	if bridge.door != nil {
		defer bridge.door.close()
	}
	if err != nil {
		return Result{}, err
	}
	// The bridge's variables replace the harness's own entries for them
	// (the adapter kept their values inside its own), for this launch
	// and every relaunch.
	env = replaceEnv(env, bridge.env)

	if o.ContinueSession != "" {
		// Payload bodies the gone wrapper's launch files still hold.
		_ = RemovePlacementFiles(p.Dir)
	}
	files := &placementFiles{dir: p.Dir}
	defer files.remove()
	// A launch placement whose command line depends on facts about the
	// harness (its version, its --help) is handed them, read once for
	// the session with the harness's environment.
	var facts *adapters.Facts
	if ad.TakesFacts() && len(o.Payloads) > 0 && o.PayloadsAt != contract.EventFrameOpening {
		f := ad.ReadFacts(ctx, argv, env)
		facts, ad = &f, ad.WithFacts(f)
	}
	tel := followTelemetry(ctx, o, ad, p, env)
	att := newAttentionSources(ad)
	if tel != nil {
		tel.att = att
	}
	recipe := launchRecipe{ad: ad, bridge: bridge.args, bridgeAt: bridge.at, pin: tel != nil, files: files, env: env}
	plan, err := recipe.plan(launchInput{kind: adapters.LaunchFirst, argv: o.Argv, payloads: launchPayloads(o)})
	if err != nil {
		return Result{}, fmt.Errorf("--payload: %w", err)
	}
	atHook, err := hookPayloads(o, ad, plan.placement, bridge.recorder != nil)
	if err != nil {
		return Result{}, err
	}
	argv, startEnv, pinned := plan.argv, plan.env, plan.pinned
	var observations <-chan Moment
	if tel != nil {
		// A command line that continues an earlier harness session: that
		// session is followed from its current end.
		tel.resumedID, tel.resumed = ad.ResumedSession(argv)
		defer tel.stop()
		observations = tel.start(pinned, o.Now())
	}
	if bridge.unavailable != nil {
		fwd, stop := context.WithCancel(ctx)
		defer stop()
		observations = withBridgeUnavailable(fwd, observations, bridge.unavailable, o.Now())
	}

	rec, prior := sessionRecord(o, p.ID, ad, argv)
	recorder := &routerRecorder{rt: p.Router()}
	if n := p.Router().Negotiation(); n != nil && !n.Verdict.Proceed {
		return rejected(o, rec, recorder, n)
	}

	cfg := Config{
		StateDir:        o.StateDir,
		Record:          rec,
		Spec:            ptyio.ChildSpec{Path: argv[0], Args: argv[1:], Env: startEnv, Dir: o.Dir, Screen: att.screenWatch()},
		Terminal:        ptyio.TerminalConfig{In: o.In, Out: o.Out, Err: o.Err, PassThrough: !o.AlwaysPTY, Cols: o.Cols, Rows: o.Rows, Logger: p.Log},
		Tick:            o.Tick,
		IdleAfter:       o.IdleAfter,
		Grace:           o.Grace,
		MaxDuration:     o.MaxDuration,
		PinnedSessionID: pinned,
		Recorder:        recorder,
		Observations:    observations,
		Telemetry:       tel,
		Recipe:          recipe,
		ProcessEnv:      processEnvOf(o, p.ID),
		StartPayloads:   plan.placement.Placed,
		Facts:           facts,
		Adapter:         ad,
		Registry:        o.Registry,
		Recover:         o.ContinueSession != "",
		Prior:           prior,
		UserArgv:        o.Argv,
		BridgeArgs:      bridge.args,
		BridgeEnv:       bridge.env,
		BridgeHooks:     bridge.hooks,
		BridgeFrames:    bridge.frames,
		HandleSignals:   o.HandleSignals,
		signals:         sigs,
		ControlSocket:   control.SocketFor(o.StateDir, p.ID),
		Log:             p.Log,
		Now:             o.Now,
	}
	cfg.Notify = o.Notify
	cfg.attention = att
	if o.Companion != nil {
		cfg.Companion = o.Companion(p.ID)
		cfg.CompanionEnv = append(slices.Clone(o.Env),
			"LIFELOOP_SESSION_ID="+p.ID,
			"LIFELOOP_SESSION_DIR="+p.Dir,
			"LIFELOOP_STATE_DIR="+o.StateDir,
			control.SocketEnv+"="+control.SocketIn(p.Dir),
		)
	}
	if bridge.recorder != nil {
		cfg.HookRecorder = bridge.recorder
		cfg.hookDoor = bridge.door
		cfg.HookPayloads = atHook
		cfg.HookPayloadsAt = o.PayloadsAt
	}
	res, err := Run(ctx, cfg)
	// Closing the pipeline is the ledger's last attempt at receipts held
	// from a storage outage; what still failed is told to the user.
	p.Close()
	res.SessionID = p.ID
	res.Unrecorded, res.UnrecordedCause = p.Unrecorded()
	return res, err
}

// warmJSON has encoding/json build its encoders for the two types every
// session writes, on the second core while the session opens: built on
// first use they cost the start-up path about 0.15 ms of reflection.
func warmJSON() {
	_ = json.NewEncoder(io.Discard).Encode(contract.LifecycleReceipt{})
	_ = json.NewEncoder(io.Discard).Encode(statedir.SessionRecord{})
}

// withDefaults checks o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if len(o.Argv) == 0 {
		return o, errors.New("no command to run; usage: lifeloop run [flags] -- CMD [ARGS...]")
	}
	if o.Dir == "" {
		return o, errors.New("no working directory for the harness")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IDs == nil {
		o.IDs = ids.NewULIDSource(o.Now, nil)
	}
	if o.Registry == nil {
		return o, errors.New("no adapter registry: pass Options.Registry (e.g. adapters/builtin.Default())")
	}
	return o, nil
}

// resolveAdapter returns the adapter o names, or the one its command line
// resolves to.
func resolveAdapter(o Options) (*adapters.Adapter, error) {
	if o.Adapter != "" {
		return o.Registry.Lookup(o.Adapter)
	}
	return o.Registry.Resolve(o.Argv), nil
}

// openSession opens the pipeline of the session this launch records
// into: a new one, or the one to continue, which must exist and have no
// live wrapper. Its clients run off the supervisor's path.
func openSession(o Options, ad *adapters.Adapter) (*pipeline.Pipeline, error) {
	po := pipeline.Options{
		StateDir: o.StateDir, NewSession: o.ContinueSession == "", Log: true,
		Adapter: ad, Mode: contract.ModeLauncherWrapper, Require: o.Require,
		Clients: o.Clients, ClientEvents: o.ClientEvents, ClientTimeout: o.ClientTimeout, ClientEnv: o.Env,
		Events: o.Events, Format: o.Format, Durability: o.Durability, Now: o.Now, IDs: o.IDs,
	}
	if o.ContinueSession != "" {
		if err := continuable(o.StateDir, o.ContinueSession); err != nil {
			return nil, err
		}
		po.Session = o.ContinueSession
	}
	return pipeline.Open(po)
}

// continuable says why session id cannot be continued, or nil.
func continuable(root, id string) error {
	if _, err := statedir.ReadSession(root, id); err != nil {
		return fmt.Errorf("--continue-session: unknown session %q; see `lifeloop sessions`", id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := control.Call(ctx, control.SocketFor(root, id), control.OpStatus, nil, nil); err == nil {
		return fmt.Errorf("--continue-session: session %s still has a live wrapper; use `lifeloop renew %s`", id, id)
	}
	return nil
}

// hookBridge is what installing the hook bridge adds: launch arguments
// and the recorder for hook moments.
type hookBridge struct {
	// args are the bridge's launch arguments (the launch recipe adds
	// them); env the variables it sets in the harness's environment.
	args []string
	env  []string
	// recorder records hook moments whose clients answer synchronously,
	// so their payloads reach the harness through the hook's response;
	// nil without a bridge.
	recorder *routerRecorder
	// door takes the hook calls the harness posts over HTTP; nil when its
	// hooks run as programs.
	door *hookDoor
	// hooks are the hooks installed, frames the frame events they report
	// natively (adapters.Adapter.LaunchHooks).
	hooks  *hooks.Spec
	frames []contract.Event
	// unavailable says why the bridge was asked for and not installed;
	// nil when it was installed or not asked for.
	unavailable *adapters.BridgeUnavailable
	// at checks the bridge again for a relaunch's command line and
	// returns its arguments (launchRecipe.bridgeAt).
	at func(argv []string) ([]string, error)
}

// bridgeHooks points the harness's native hooks at `lifeloop host-hook`
// for this launch, when o asks for it and the adapter can.
func bridgeHooks(o Options, ad *adapters.Adapter, p *pipeline.Pipeline, argv, env []string) (hookBridge, error) {
	var b hookBridge
	if !o.Hooks {
		return b, nil
	}
	exe := o.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return b, fmt.Errorf("hook bridge: cannot find the lifeloop executable: %w", err)
		}
	}
	var door lazyHookDoor
	t := adapters.BridgeTarget{Argv: argv, SessionDir: p.Dir, Env: env, HookCommand: []string{exe}, HookHTTP: door.open,
		SharedDir: filepath.Join(o.StateDir, BridgesFolder),
		Telemetry: ad.Telemetry() != nil && !o.NoTelemetry, Places: len(o.Clients) > 0 || len(o.Payloads) > 0}
	extra, vars, spec, frames, err := hookBridgeArgs(ad, t)
	b.door = door.door
	if unavailable := (*adapters.BridgeUnavailable)(nil); errors.As(err, &unavailable) {
		p.Log.Warn("hook bridge not installed; the harness runs without it", "reason", unavailable.Reason)
		b.unavailable = unavailable
		return b, nil
	}
	if err != nil || (extra == nil && vars == nil) {
		return b, err
	}
	rt, err := p.SyncRouter()
	if err != nil {
		return b, err
	}
	b.args, b.env, b.hooks, b.frames, b.recorder = extra, vars, spec, frames, &routerRecorder{rt: rt}
	b.at = func(argv []string) ([]string, error) {
		again := t
		again.Argv = argv
		return ad.HookBridge().BridgeArgs(again)
	}
	return b, nil
}

// launchPayloads are the payloads the first launch's command line may
// carry: those for session.started (those for the first prompt wait for
// its hook).
func launchPayloads(o Options) []contract.PayloadEnvelope {
	if o.PayloadsAt == contract.EventFrameOpening {
		return nil
	}
	return o.Payloads
}

// hookPayloads are the payloads the first launch's command line did not
// carry (placed, its plan's placement): they wait for the hook of
// PayloadsAt, which the hook bridge must then have installed (bridged),
// with a hook that places payloads at that moment.
func hookPayloads(o Options, ad *adapters.Adapter, placed adapters.LaunchPlacement, bridged bool) ([]contract.PayloadEnvelope, error) {
	atHook := placed.Rest
	if o.PayloadsAt == contract.EventFrameOpening {
		atHook = o.Payloads
	}
	if len(atHook) > 0 && (!bridged || !bridgePlaces(ad, o.PayloadsAt)) {
		msg := "no launch placement fits it and no hook bridge that places payloads at the session's start is installed"
		if o.PayloadsAt == contract.EventFrameOpening {
			msg = "no hook bridge that places payloads at the first prompt is installed"
		} else if bridged && bridgePlaces(ad, contract.EventFrameOpening) {
			msg += " (--payload-at frame places it at the first prompt)"
		}
		return nil, fmt.Errorf("--payload: adapter %s cannot take payload %s in this launch: %s", ad.ID, atHook[0].PayloadID, msg)
	}
	return atHook, nil
}

// followTelemetry prepares the telemetry watcher when the adapter has
// telemetry and o wants it (the launch recipe then pins the session id
// where the harness lets a launch choose it). It returns nil otherwise.
func followTelemetry(ctx context.Context, o Options, ad *adapters.Adapter, p *pipeline.Pipeline, env []string) *telemetryRunner {
	t := ad.Telemetry()
	if t == nil || o.NoTelemetry {
		return nil
	}
	return &telemetryRunner{ctx: ctx, log: p.Log, ad: ad, opts: observe.Options{
		Harness: t, Env: env, Cwd: o.Dir, Levels: o.Levels, NotFoundAfter: o.TelemetryNotFoundAfter,
		Claims: &telemetry.FileClaims{Dir: filepath.Join(o.StateDir, observe.ClaimsFolder), Owner: p.ID},
		Now:    o.Now, Log: p.Log,
	}, usage: newUsageMeter(ad, env, p.Log)}
}

// sessionRecord is the session.json the launch starts from, and, for a
// continued session, the receipts its ledger already holds.
func sessionRecord(o Options, id string, ad *adapters.Adapter, argv []string) (statedir.SessionRecord, []contract.LifecycleReceipt) {
	rec := statedir.SessionRecord{
		Schema: statedir.SessionSchemaV1, ID: id, AdapterID: ad.ID, IntegrationMode: string(contract.ModeLauncherWrapper),
		Argv: adapters.RedactPlacement(argv), Cwd: o.Dir, WrapperPid: os.Getpid(), Terminal: terminalOf(o.In, o.Out, o.Env),
	}
	if o.ContinueSession == "" {
		return rec, nil
	}
	if prev, err := statedir.ReadSession(o.StateDir, id); err == nil {
		rec.HarnessSessionIDs = prev.HarnessSessionIDs
	}
	var prior []contract.LifecycleReceipt
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(o.StateDir, id), 0) {
		if err == nil {
			prior = append(prior, e.Receipt)
		}
	}
	return rec, prior
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

// routerRecorder adapts the router to the supervisor's Recorder.
type routerRecorder struct{ rt *router.Router }

func (r *routerRecorder) Record(ctx context.Context, m Moment) (contract.LifecycleReceipt, error) {
	res, err := r.rt.Route(ctx, m)
	return res.Receipt, err
}

// RecordSync records m with the router's synchronous clients.
func (r *routerRecorder) RecordSync(ctx context.Context, m Moment) (SyncResult, error) {
	res, err := r.rt.Route(ctx, m)
	return SyncResult{Receipt: res.Receipt, Placements: res.Placements, ClientPayloads: res.ClientPayloads}, err
}
