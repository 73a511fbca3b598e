package cli

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/hookcall"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/launcher"
)

// runOptions are the flags of `lifeloop run`.
type runOptions struct {
	StateDir      string
	Adapter       string
	Clients       []string
	ClientEvents  []string
	ClientTimeout time.Duration
	Events        []string
	Format        string
	OrgLoopHook   string
	OrgLoopWait   time.Duration
	EventsWait    time.Duration
	Require       string
	Tick          time.Duration
	IdleAfter     time.Duration
	Grace         time.Duration
	MaxDuration   time.Duration
	Cols, Rows    int
	PTY           string
	NoHooks       bool
	Continue      string
	NoTelemetry   bool
	Levels        string
	Payloads      []string
	PayloadAt     string
	Durability    string
	PayloadArgvOK bool
	OTLP          string
	OTLPHarness   bool
	Argv          []string
	// RenewAt, when set, attaches the renewal policy (`lifeloop
	// autorenew --attached`) to the session, with RenewResume,
	// RenewPerHour and HandoffCmd.
	RenewAt      string
	RenewResume  bool
	RenewPerHour int
	HandoffCmd   string
	// Notify are the --notify flags.
	Notify notifyOptions
}

func runCommand(e *env) *ucli.Command {
	var o runOptions
	var clients, events, payloads listValue
	return &ucli.Command{
		Name:      "run",
		Usage:     "run a harness under a PTY and record its lifecycle",
		ArgsUsage: "[flags] -- CMD [ARGS...]",
		Description: `Starts CMD under a pseudo-terminal and stays invisible: the harness owns
the terminal, keys and screen are exactly as without lifeloop. Where
lifeloop's stdin, stdout or stderr is a pipe or a file rather than a
terminal, the harness gets that descriptor as it is (--pty auto): a script's
'echo hi | lifeloop run -- CMD > out' feeds and captures the harness
byte for byte, and with no terminal at all there is no PTY. Lifecycle
receipts (session.starting/started/ending/ended, supervisor.tick, ...) go to
the session's ledger (see 'lifeloop receipts --latest'), to --events
destinations and to --client commands, never to the terminal.

lifeloop exits with the harness's exit code (128+N when it died of signal
N). Before the harness starts: 125 lifeloop refused or failed (e.g. a
required capability is unsupported), 126 the command is not executable,
127 the command was not found.

Signals sent to lifeloop (INT, TERM, HUP, QUIT, USR1, USR2) are forwarded to
the harness's process group; a second INT/TERM or --grace after the first
kills the group.`,
		Flags: append([]ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.StringFlag{Name: "adapter", Usage: "adapter id (default: resolved from the command)", Destination: &o.Adapter, EnvVars: []string{"LIFELOOP_ADAPTER"}},
			&ucli.GenericFlag{Name: "client", Usage: "client `CMD` (a shell command line) receiving every receipt's dispatch envelope on stdin (repeatable)", Value: &clients},
			&ucli.StringSliceFlag{Name: "client-events", Usage: "only dispatch these `EVENTS` to clients (comma-separated)"},
			&ucli.DurationFlag{Name: "client-timeout", Usage: "per-dispatch client timeout", Value: 5 * time.Second, Destination: &o.ClientTimeout},
			&ucli.GenericFlag{Name: "events", Usage: "also write receipts to `DEST`: a file path (NDJSON, appended), fd:N, or amqp://... (HCP events published from the ledger with confirms; see `lifeloop publish --help`; the session also takes the machine's fleet commands while no other process does, see `lifeloop serve --help`) (repeatable)", Value: &events},
			&ucli.StringFlag{Name: "format", Usage: "format of --events files: lifeloop, orgloop or hcp (amqp:// destinations always carry hcp)", Value: "lifeloop", Destination: &o.Format},
			orgLoopWebhookFlag(&o.OrgLoopHook),
			orgLoopWaitFlag(&o.OrgLoopWait),
			&ucli.DurationFlag{Name: "events-wait", Usage: "after the session, wait this long for amqp:// events the broker has not confirmed (the rest: `lifeloop publish`)", Value: amqpDrain, Destination: &o.EventsWait},
			&ucli.StringFlag{Name: "require", Usage: "negotiate this capability request `FILE` before launch (- for stdin); refused → exit 125", Destination: &o.Require},
			&ucli.DurationFlag{Name: "tick", Usage: "supervisor.tick interval (0 = off)", Value: launcher.DefaultTick, Destination: &o.Tick},
			&ucli.DurationFlag{Name: "idle-after", Usage: "no output for this long makes the harness idle", Value: launcher.DefaultIdleAfter, Destination: &o.IdleAfter},
			&ucli.DurationFlag{Name: "grace", Usage: "time a stopped harness gets before SIGKILL", Value: launcher.DefaultGrace, Destination: &o.Grace},
			&ucli.DurationFlag{Name: "max-duration", Usage: "stop the harness after this long (state failed, reason timeout)", Destination: &o.MaxDuration},
			&ucli.BoolFlag{Name: "no-telemetry", Usage: "do not follow the harness's session file (no telemetry receipts: frames, pressure, compaction)", Destination: &o.NoTelemetry},
			levelsFlag(&o.Levels),
			&ucli.StringFlag{Name: "continue-session", Usage: "continue `SESSION` whose wrapper is gone (same id and ledger); a renewal it left unfinished is completed, its payloads delivered once", Destination: &o.Continue},
			&ucli.BoolFlag{Name: "no-hooks", Usage: "do not install the hook bridge (the harness's own hooks pointed at lifeloop) for this launch", Destination: &o.NoHooks},
			&ucli.GenericFlag{Name: "payload", Usage: "deliver the payload envelope in `FILE` into the new session (repeatable)", Value: &payloads},
			&ucli.StringFlag{Name: "payload-at", Usage: "where --payload goes: session (pre_session: the command line, else the SessionStart hook) or frame (pre_frame_leading: the first prompt's hook)", Value: "session", Destination: &o.PayloadAt},
			durabilityFlag(&o.Durability),
			&ucli.BoolFlag{Name: "payload-argv-ok", Usage: "let a payload placed at launch (and at every renewal) travel on the harness's command line, readable by every local user through ps, where the adapter has no private channel for it; without it such a placement is refused", Destination: &o.PayloadArgvOK},
			otlpFlag(&o.OTLP),
			otlpHarnessEnvFlag(&o.OTLPHarness),
			&ucli.StringFlag{Name: "pty", Usage: "where the harness gets a pseudo-terminal, `MODE`: auto (where lifeloop has a terminal; pipes and files as they are) or always (stdin, stdout and stderr, e.g. to drive a TUI from a pipe)", Value: "auto", Destination: &o.PTY},
			&ucli.IntFlag{Name: "cols", Usage: "PTY width when lifeloop has no terminal to take it from (with --pty always)", Value: 120, Destination: &o.Cols},
			&ucli.IntFlag{Name: "rows", Usage: "PTY height when lifeloop has no terminal to take it from (with --pty always)", Value: 40, Destination: &o.Rows},
			&ucli.StringFlag{Name: "renew-at", Usage: "renew the harness, between turns and with a handoff note, when its context pressure reaches `THRESHOLD` (70% of the window, or tokens: 150000, 150k); see `lifeloop autorenew --help`", Destination: &o.RenewAt},
			&ucli.BoolFlag{Name: "renew-resume", Usage: "with --renew-at: resume the harness conversation instead of starting a fresh one", Destination: &o.RenewResume},
			&ucli.IntFlag{Name: "renew-per-hour", Usage: "with --renew-at: at most `N` renewals per hour", Value: defaultRenewPerHour, Destination: &o.RenewPerHour},
			&ucli.StringFlag{Name: "handoff-cmd", Usage: "with --renew-at: write the handoff note with the shell command `CMD` (see `lifeloop handoff --help`)", Destination: &o.HandoffCmd},
		}, notifyFlags(&o.Notify)...),
		Action: func(c *ucli.Context) error {
			o.Clients = clients.items
			o.ClientEvents = splitCommas(c.StringSlice("client-events"))
			o.Events = events.items
			o.Payloads = payloads.items
			o.Argv = c.Args().Slice()
			if len(o.Argv) == 0 {
				return usageErrorf("run needs a command: lifeloop run [flags] -- CMD [ARGS...]")
			}
			return runRun(c.Context, e, o)
		},
	}
}

func runRun(ctx context.Context, e *env, o runOptions) error {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.LaunchFailed, "%v", err)
	}
	format, err := sink.ParseFormat(o.Format)
	if err != nil {
		return usageErrorf("--format: %v", err)
	}
	if o.PTY != "auto" && o.PTY != "always" {
		return usageErrorf("--pty must be auto or always, not %q", o.PTY)
	}
	if o.Cols <= 0 || o.Rows <= 0 || o.Cols > 65535 || o.Rows > 65535 {
		return usageErrorf("--cols and --rows must be between 1 and 65535")
	}
	notifyCfg, err := o.Notify.config(e.Environ)
	if err != nil {
		return err
	}
	var events []contract.Event
	for _, name := range o.ClientEvents {
		ev := contract.Event(name)
		if !ev.Valid() {
			return usageErrorf("--client-events: unknown event %q; see `lifeloop events`", name)
		}
		events = append(events, ev)
	}
	var clients []pipeline.ClientSpec
	for _, c := range o.Clients {
		if strings.TrimSpace(c) == "" {
			return usageErrorf("--client: empty command")
		}
		// A client is a shell command line, like a git hook or an ssh
		// ProxyCommand: quoting and arguments work as in sh.
		clients = append(clients, pipeline.ClientSpec{Path: "/bin/sh", Args: []string{"-c", c}})
	}
	var req *contract.CapabilityRequest
	if o.Require != "" {
		data, err := readInput(o.Require, e.In)
		if err != nil {
			return exitf(exitcode.LaunchFailed, "--require: %v", err)
		}
		if why := notJSON(data); why != "" {
			return exitf(exitcode.LaunchFailed, "--require %s %s; give a capability request object (see `lifeloop negotiate --help`)", o.Require, why)
		}
		r, err := contract.DecodeCapabilityRequest(data)
		if err != nil {
			return exitf(exitcode.LaunchFailed, "--require %s: %v", o.Require, err)
		}
		req = &r
	}
	var at contract.Event
	switch o.PayloadAt {
	case "session":
		at = contract.EventSessionStarted
	case "frame":
		at = contract.EventFrameOpening
	default:
		return usageErrorf("--payload-at %q: use session or frame", o.PayloadAt)
	}
	var pls []contract.PayloadEnvelope
	for _, f := range o.Payloads {
		data, err := readInput(f, e.In)
		if err != nil {
			return exitf(exitcode.LaunchFailed, "--payload: %v", err)
		}
		if why := notJSON(data); why != "" {
			return exitf(exitcode.LaunchFailed, "--payload %s %s; give a payload envelope file", f, why)
		}
		p, err := contract.DecodePayloadEnvelope(data)
		if err == nil {
			err = p.Check(e.Now())
		}
		if err != nil {
			return exitf(exitcode.LaunchFailed, "--payload %s: %v", f, err)
		}
		pls = append(pls, p)
	}
	companion, err := o.companion(root)
	if err != nil {
		return err
	}
	levels, err := parseLevels(o.Levels)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if o.RenewAt != "" {
		// The wrapper records a pressure reading when its level changes:
		// a boundary on the threshold lets the policy see it crossed.
		t, _ := autorenew.ParseThreshold(o.RenewAt) // checked by companion
		levels = autorenew.LevelsFor(t, levels)
	}
	dur, err := durability(o.Durability, e.Getenv)
	if err != nil {
		return err
	}
	dir, err := e.workDir()
	if err != nil {
		return exitf(exitcode.LaunchFailed, "%v", err)
	}
	fileEvents, amqpTargets, err := splitEvents(o.Events)
	if err != nil {
		return err
	}
	live, err := newLiveOrgLoop(e, o.OrgLoopHook, root, "")
	if err != nil {
		return err
	}
	defer live.finish(o.OrgLoopWait)
	amqpLive := newLiveAMQP(e, amqpTargets, root)
	defer amqpLive.finish(o.EventsWait)
	listener := newSessionListener(e, amqpTargets, root)
	defer listener.finish()
	otlpLive, err := newLiveOTLP(e, o.OTLP, root)
	if err != nil {
		return err
	}
	defer otlpLive.finish()
	childEnv := withoutFleetSecret(withoutNotifySecret(e.Environ))
	var sessionEnv func(string, int) []string
	if otlpLive != nil {
		childEnv, sessionEnv = harnessOTelEnv(childEnv, o.OTLPHarness)
	}
	// Sessions of this state folder whose wrapper died are sealed while
	// the harness runs (after its start, off its path); a run that ends
	// first leaves them to the next command that looks.
	if o.Continue != "" && statedir.ValidateSessionID(o.Continue) == nil {
		if err := e.prepareContinuation(root, o.Continue); err != nil {
			return exitf(exitcode.LaunchFailed, "%v", err)
		}
	}
	stopSweep := e.sweepLostLater(root, sweepDelay)
	defer stopSweep()
	res, err := launcher.Launch(ctx, launcher.Options{
		StateDir:        root,
		Argv:            o.Argv,
		Adapter:         o.Adapter,
		Registry:        e.Registry(), // one registry per process, shared with the sweep
		Exe:             hookProgram(),
		Env:             childEnv,
		SessionEnv:      sessionEnv,
		ProcessWrapper:  processWrapperOrNone,
		Dir:             dir,
		In:              e.In,
		Out:             e.Out,
		Err:             e.Err,
		AlwaysPTY:       o.PTY == "always",
		Cols:            uint16(o.Cols),
		Rows:            uint16(o.Rows),
		Tick:            o.Tick,
		IdleAfter:       o.IdleAfter,
		Grace:           o.Grace,
		MaxDuration:     o.MaxDuration,
		Clients:         clients,
		ClientEvents:    events,
		ClientTimeout:   o.ClientTimeout,
		Events:          fileEvents,
		Format:          format,
		Require:         req,
		Hooks:           !o.NoHooks,
		NoTelemetry:     o.NoTelemetry,
		Levels:          levels,
		ContinueSession: o.Continue,
		Payloads:        pls,
		PayloadsAt:      at,
		PayloadArgvOK:   o.PayloadArgvOK,
		Companion:       companion,
		Notify:          notifyCfg,
		HandleSignals:   true,
		Signals:         e.signals,
		OnSession:       chainHooks(live.hook(), amqpLive.hook(), otlpLive.hook(), listener.hook()),
		Durability:      dur,
		Now:             e.Now,
		IDs:             e.IDs,
	})
	if err != nil {
		return exitf(exitcode.LaunchFailed, "%v", err)
	}
	if res.LaunchErr != nil {
		return exitf(res.ExitCode, "%v", res.LaunchErr)
	}
	if res.Unrecorded > 0 {
		// The harness is gone and the terminal is the user's again: say
		// what the ledger lacks, and keep the harness's exit code.
		return exitf(res.ExitCode, "session %s: %d receipts were not recorded in its ledger (%s); free space, then `lifeloop sessions` seals it",
			res.SessionID, res.Unrecorded, ledger.CauseText(res.UnrecordedCause))
	}
	return silentExit(res.ExitCode)
}

// companion checks the --renew-at flags (usage errors, before anything
// starts) and returns the command line of the policy client that runs
// beside the session: lifeloop's own `autorenew --attached`; nil without
// --renew-at.
func (o runOptions) companion(root string) (func(id string) []string, error) {
	if o.RenewAt == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{{"--renew-resume", o.RenewResume}, {"--renew-per-hour", o.RenewPerHour != defaultRenewPerHour}, {"--handoff-cmd", o.HandoffCmd != ""}} {
			if f.set {
				return nil, usageErrorf("%s goes with --renew-at (e.g. --renew-at 70%%)", f.name)
			}
		}
		return nil, nil
	}
	if _, err := renewConfig(o.RenewAt, "--renew-at", o.RenewPerHour, "--renew-per-hour", func(*autorenew.Config) {}); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, exitf(exitcode.LaunchFailed, "--renew-at: cannot find lifeloop's own program to run the renewal policy: %v", err)
	}
	args := []string{exe, "autorenew", "--attached", "--state-dir", root, "--renew-at", o.RenewAt, "--per-hour", strconv.Itoa(o.RenewPerHour)}
	if o.RenewResume {
		args = append(args, "--resume")
	}
	if o.HandoffCmd != "" {
		args = append(args, "--handoff-cmd", o.HandoffCmd)
	}
	return func(id string) []string { return append(slices.Clone(args), "--", id) }, nil
}

func splitCommas(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// hookProgram is the program the harness's hooks call: the lean hook
// program beside lifeloop when it is there (it starts in a fraction of
// lifeloop's time, which each hook the harness runs as a program pays),
// else lifeloop itself ("" when it cannot be found: the launcher says so
// if the bridge needs it).
func hookProgram() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if lean, ok := hookcall.Beside(exe); ok {
		return lean
	}
	return exe
}
