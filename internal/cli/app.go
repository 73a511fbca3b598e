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
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ids"
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
func Main(args []string, s Streams) int {
	if s.Getenv == nil {
		s.Getenv = getenvIn(s.Environ)
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.IDs == nil {
		s.IDs = ids.NewULIDSource(s.Now, nil)
	}
	e := &env{Streams: s, ctx: context.Background()}
	app := newApp(e)
	err := app.RunContext(e.ctx, hoistFlags(app, args))
	code, msg := codeOf(err)
	if msg != "" {
		fmt.Fprintf(s.Err, "lifeloop: %s\n", strings.TrimSpace(msg))
	}
	return code
}

// newApp builds the command tree. Every command lives in its own file as
// a constructor taking the env.
func newApp(e *env) *ucli.App {
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
		Commands: []*ucli.Command{
			versionCommand(e),
			runCommand(e),
			watchCommand(e),
			statusCommand(e),
			abortCommand(e),
			pauseCommand(e),
			resumeCommand(e),
			adaptersCommand(e),
			manifestCommand(e),
			eventsCommand(e),
			negotiateCommand(e),
			conformanceCommand(e),
			eventCommand(e),
			emitCommand(e),
			sessionsCommand(e),
			receiptsCommand(e),
			ledgerCommand(e),
			hostHookCommand(e),
			hostCommand(e),
			renewCommand(e),
			renewalCommand(e),
			continuationCommand(e),
			publishCommand(e),
			consumeCommand(e),
			topCommand(e),
		},
	}
	for _, c := range app.Commands {
		withPlainNames(c)
		if c.Name != "host-hook" { // it always answers its harness and exits 0
			refuseNegativeDurations(c)
		}
	}
	return app
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
