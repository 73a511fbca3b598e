// Package cli is lifeloop's command tree. Main builds the urfave/cli app,
// runs it, and maps every error to an exit code in one place (codeOf), so
// deferred cleanup always runs and library packages never call os.Exit.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/launcher"
)

// Version is lifeloop's own version; set at build time with -ldflags.
var Version = "0.1.0-dev"

// Streams are what lifeloop takes from its process: standard streams,
// environment, working directory, clock and id source. They are read once,
// in main, and passed down, so commands can run in-process in tests.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// OutTerminal is true when Out is a terminal: the reading commands
	// then print for a person (tables, coloured unless NO_COLOR) instead
	// of JSON.
	OutTerminal bool
	// Environ is the environment as os.Environ returns it; the harness and
	// client commands inherit it.
	Environ []string
	// Getenv reads one variable (default: a lookup in Environ).
	Getenv func(string) string
	// Dir is the working directory; "" when it cannot be read.
	Dir string
	Now func() time.Time
	// IDs mints session, invocation, receipt and event ids (default a
	// ULID source on Now).
	IDs ids.Source
}

// OSStreams returns the real process streams and environment.
func OSStreams() Streams {
	dir, _ := os.Getwd()
	return Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr, OutTerminal: stdoutIsTerminal(),
		Environ: os.Environ(), Getenv: os.Getenv, Dir: dir, Now: time.Now,
	}
}

// getenvIn returns a Getenv that reads environ.
func getenvIn(environ []string) func(string) string {
	return func(key string) string {
		for _, kv := range environ {
			if k, v, ok := strings.Cut(kv, "="); ok && k == key {
				return v
			}
		}
		return ""
	}
}

// workDir returns the working directory, or an error saying it is unknown.
func (e *env) workDir() (string, error) {
	if e.Dir == "" {
		return "", exitf(exitcode.Failed, "cannot read the working directory")
	}
	return e.Dir, nil
}

// abs returns path made absolute against the working directory.
func (e *env) abs(path string) (string, error) {
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	dir, err := e.workDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path), nil
}

// env is what every command's Run function receives besides its options.
type env struct {
	Streams
	ctx      context.Context
	registry *adapters.Registry
	// signals are the signals `run` forwards, caught since Main started.
	signals *launcher.SignalCatch
	// args is the command line Main was given (args[0] the program name).
	args []string
	// topUI is top's terminal UI; nil in lifeloop, which hands `top` to
	// the lifeloop-top program.
	topUI TopUI
}

// Registry returns the harness registry (built on first use).
func (e *env) Registry() *adapters.Registry {
	if e.registry == nil {
		e.registry = builtin.Default()
	}
	return e.registry
}

// Main runs lifeloop with args (args[0] is the program name) and returns the
// process exit code.
func Main(args []string, s Streams) int { return MainWithTop(args, s, nil) }

// MainWithTop is Main with top's terminal UI linked in: the lifeloop-top
// program.
func MainWithTop(args []string, s Streams, ui TopUI) int {
	if s.Getenv == nil {
		s.Getenv = getenvIn(s.Environ)
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.IDs == nil {
		s.IDs = ids.NewULIDSource(s.Now, nil)
	}
	e := &env{Streams: s, ctx: context.Background(), args: args, topUI: ui}
	var app *ucli.App
	if name := commandNamed(args); name != "" {
		if name == "run" {
			// Catching the signals `run` forwards takes a round trip per
			// signal to the runtime's signal thread: started now, it
			// overlaps the flags' parsing and the session's opening.
			e.signals = launcher.CatchSignals()
			defer e.signals.Release()
		}
		app = newApp(e, name)
	} else {
		app = newApp(e)
	}
	err := app.RunContext(e.ctx, hoistFlags(app, args))
	code, msg := codeOf(err)
	if msg != "" {
		fmt.Fprintf(s.Err, "lifeloop: %s\n", strings.TrimSpace(msg))
	}
	return code
}

// commands are lifeloop's commands in help order, by name. Every command
// lives in its own file as a constructor taking the env.
var commands = []struct {
	name  string
	build func(*env) *ucli.Command
}{
	{"version", versionCommand},
	{"run", runCommand},
	{"watch", watchCommand},
	{"status", statusCommand},
	{"abort", abortCommand},
	{"pause", pauseCommand},
	{"resume", resumeCommand},
	{"adapters", adaptersCommand},
	{"manifest", manifestCommand},
	{"events", eventsCommand},
	{"negotiate", negotiateCommand},
	{"conformance", conformanceCommand},
	{"event", eventCommand},
	{"emit", emitCommand},
	{"sessions", sessionsCommand},
	{"receipts", receiptsCommand},
	{"ledger", ledgerCommand},
	{"host-hook", hostHookCommand},
	{"host", hostCommand},
	{"renew", renewCommand},
	{"renewal", renewalCommand},
	{"handoff", handoffCommand},
	{"autorenew", autorenewCommand},
	{"continuation", continuationCommand},
	{"publish", publishCommand},
	{"export", exportCommand},
	{"consume", consumeCommand},
	{"serve", serveCommand},
	{"top", topCommand},
	{"usage", usageCommand},
}

// newApp builds the command tree: every command, or with only set just
// that one, so a command line that names a command builds no other
// (constructing all 25 with their flags was 3 % of a `lifeloop run --
// true`).
func newApp(e *env, only ...string) *ucli.App {
	app := &ucli.App{
		Name:      "lifeloop",
		Usage:     "normalize the lifecycle of AI coding harnesses into one receipt stream",
		Version:   Version,
		Reader:    e.In,
		Writer:    e.Out,
		ErrWriter: e.Err,
		// Errors are mapped to exit codes by Main, never by urfave (which
		// would call os.Exit and skip deferred cleanup).
		ExitErrHandler:  func(*ucli.Context, error) {},
		HideHelpCommand: true,
		OnUsageError: func(_ *ucli.Context, err error, _ bool) error {
			return usageErrorf("%v (see --help)", err)
		},
	}
	for _, c := range commands {
		if len(only) > 0 && !slices.Contains(only, c.name) {
			continue
		}
		cmd := c.build(e)
		withPlainNames(cmd)
		if cmd.Name != "host-hook" { // it always answers its harness and exits 0
			refuseNegativeDurations(cmd)
		}
		app.Commands = append(app.Commands, cmd)
	}
	return app
}

// commandNamed is the command args (args[0] is the program name) run,
// when the first argument names one; "" for anything else (global flags,
// help, an unknown name), which needs the whole tree.
func commandNamed(args []string) string {
	if len(args) < 2 {
		return ""
	}
	for _, c := range commands {
		if c.name == args[1] {
			return c.name
		}
	}
	return ""
}

// refuseNegativeDurations makes a negative value of any duration flag of c
// (and of its subcommands) a usage error, before the command runs: no
// duration lifeloop takes means anything below zero.
func refuseNegativeDurations(c *ucli.Command) {
	before := c.Before
	c.Before = func(ctx *ucli.Context) error {
		for _, f := range c.Flags {
			df := durationOf(f)
			if df == nil {
				continue
			}
			if v := ctx.Duration(df.Name); v < 0 {
				return usageErrorf("--%s %v: a duration must not be negative (0 turns it off where the help says so)", df.Name, v)
			}
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
	for _, sub := range c.Subcommands {
		refuseNegativeDurations(sub)
	}
}

// signalContext returns a context cancelled on SIGINT or SIGTERM; the stop
// function releases the signal handler.
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
}
