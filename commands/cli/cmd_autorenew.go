package cli

import (
	"context"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/handoff"
)

// The rules' defaults as the flags show them: autorenew.Defaults' values
// (a test holds them equal) and the machine's renewals at once.
const (
	defaultRenewSettle       = 2 * time.Second
	defaultRenewFutileMargin = 10
	defaultRenewPerHour      = 3
	defaultRenewWaitMax      = 30 * time.Minute
	defaultRenewAtOnce       = 2
)

// autorenewOptions are the flags of `lifeloop autorenew`.
type autorenewOptions struct {
	StateDir string
	Session  string
	Latest   bool
	All      bool
	// Attached is `run --renew-at`'s companion: SESSION is required and
	// the client exits 0 when the session ends.
	Attached bool
	JSON     bool

	RenewAt        string
	Resume         bool
	PerHour        int
	AtOnce         int
	Settle         time.Duration
	FutileMargin   float64
	WaitMax        time.Duration
	HandoffCmd     string
	HandoffTimeout time.Duration
	MaxNoteBytes   int
}

func autorenewCommand(e *env) *ucli.Command {
	o := autorenewOptions{}
	return &ucli.Command{
		Name:      "autorenew",
		Usage:     "renew sessions' harnesses at a context threshold, between turns, with a handoff note",
		ArgsUsage: "SESSION|--latest|--all --renew-at 70%",
		Description: "A renewal policy client: it follows each session's receipts (from the ledger's first\n" +
			"line, so renewals asked before a restart still count) and, when the context pressure\n" +
			"crossed --renew-at, asks the session's `lifeloop run` for a renewal the way `lifeloop\n" +
			"renew` does, at a safe moment only: the last frame ended, none is open, --settle has\n" +
			"passed, and no key was typed at the terminal since the latest turn began (the wrapper\n" +
			"refuses otherwise and the policy waits for the next turn's end). Fresh renewals (the default)\n" +
			"carry a handoff note written from the session's own records (`lifeloop handoff`), or by\n" +
			"--handoff-cmd; a command that fails falls back to the built-in note, and a receipt says so.\n\n" +
			"It gives up, saying why in a capability.degraded receipt and in `lifeloop status`: when the\n" +
			"new conversation starts within --futile-margin points of the threshold (futile), after\n" +
			"--per-hour renewals of the session in an hour, when no safe moment or machine slot\n" +
			"(--at-once renewals at once on the machine) came within --wait-max, or when the renewal\n" +
			"was refused or failed (not asked again for that crossing).\n\n" +
			"--all follows every running session of the state folder and each new one (looked for\n" +
			"every second). One line per decision; --json prints them as NDJSON.\n" +
			"`lifeloop run --renew-at 70% -- CMD` starts it beside the session. See docs/autorenew.md.\n\n" +
			"Exits 0 when the sessions it follows end, 1 when a session is unknown, already ended or\n" +
			"followed by another living policy client, 2 on a usage error.",
		OnUsageError: commandUsageError,
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "latest", Usage: "follow the most recent session", Destination: &o.Latest},
			&ucli.BoolFlag{Name: "all", Usage: "follow every running session of the state folder, and each new one", Destination: &o.All},
			&ucli.BoolFlag{Name: "attached", Hidden: true, Destination: &o.Attached},
			&ucli.BoolFlag{Name: "json", Usage: "print the decisions as NDJSON", Destination: &o.JSON},
			&ucli.StringFlag{Name: "renew-at", Usage: "renew when the context pressure reaches `THRESHOLD`: a percentage of the window (70%) or tokens (150000, 150k)", Destination: &o.RenewAt},
			&ucli.BoolFlag{Name: "resume", Usage: "renew by resuming the harness conversation instead of starting a fresh one", Destination: &o.Resume},
			&ucli.IntFlag{Name: "per-hour", Value: defaultRenewPerHour, Usage: "at most `N` policy renewals per session in any hour", Destination: &o.PerHour},
			&ucli.IntFlag{Name: "at-once", Value: defaultRenewAtOnce, Usage: "at most `M` policy renewals at once on the machine (all sessions of the state folder)", Destination: &o.AtOnce},
			&ucli.DurationFlag{Name: "settle", Value: defaultRenewSettle, Usage: "renew only after the session has been between turns for `D`", Destination: &o.Settle},
			&ucli.Float64Flag{Name: "futile-margin", Value: defaultRenewFutileMargin, Usage: "stop renewing a session whose new conversation starts within `P` points of the threshold", Destination: &o.FutileMargin},
			&ucli.DurationFlag{Name: "wait-max", Value: defaultRenewWaitMax, Usage: "give up a crossing when no safe moment or machine slot came within `D`", Destination: &o.WaitMax},
			&ucli.StringFlag{Name: "handoff-cmd", Usage: "write the handoff note with the shell command `CMD` (as `lifeloop handoff --cmd`)", Destination: &o.HandoffCmd},
			&ucli.DurationFlag{Name: "handoff-timeout", Value: handoff.DefaultCommandTimeout, Usage: "bound --handoff-cmd's run to `D`", Destination: &o.HandoffTimeout},
			&ucli.IntFlag{Name: "max-note-bytes", Value: handoff.DefaultMaxBytes, Usage: "bound the handoff note to `N` bytes", Destination: &o.MaxNoteBytes},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("autorenew takes one SESSION (got %d arguments); --all follows every session", c.NArg())
			}
			o.Session = c.Args().First()
			cfg, err := o.config()
			if err != nil {
				return err
			}
			ctx, stop := signalContext(c.Context)
			defer stop()
			return autorenewRun(ctx, e, o, cfg)
		},
	}
}

// config checks o and returns the policy's rules; every problem is a
// usage error naming its flag.
func (o autorenewOptions) config() (autorenew.Config, error) {
	picked := 0
	for _, on := range []bool{o.Session != "", o.Latest, o.All} {
		if on {
			picked++
		}
	}
	switch {
	case o.Attached && o.Session == "":
		return autorenew.Config{}, usageErrorf("--attached needs the SESSION it runs beside")
	case picked == 0:
		return autorenew.Config{}, usageErrorf("which sessions? give a SESSION (see `lifeloop sessions`), --latest or --all")
	case picked > 1:
		return autorenew.Config{}, usageErrorf("give one of SESSION, --latest or --all")
	case o.RenewAt == "":
		return autorenew.Config{}, usageErrorf("--renew-at is required: a percentage of the context window (70%%) or a token count (150000)")
	case o.AtOnce < 1:
		return autorenew.Config{}, usageErrorf("--at-once %d: give at least 1", o.AtOnce)
	case o.FutileMargin < 0 || o.FutileMargin >= 100:
		return autorenew.Config{}, usageErrorf("--futile-margin %v: give points from 0 to below 100", o.FutileMargin)
	case o.WaitMax == 0:
		return autorenew.Config{}, usageErrorf("--wait-max 0s: give a duration above 0 (default %s)", defaultRenewWaitMax)
	case o.MaxNoteBytes < handoff.MinMaxBytes:
		return autorenew.Config{}, usageErrorf("--max-note-bytes %d is too small; give at least %d", o.MaxNoteBytes, handoff.MinMaxBytes)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--settle", o.Settle}, {"--wait-max", o.WaitMax}, {"--handoff-timeout", o.HandoffTimeout}} {
		if d.v < 0 {
			return autorenew.Config{}, usageErrorf("%s %s is negative; give a duration of 0 or more", d.name, d.v)
		}
	}
	cfg, err := renewConfig(o.RenewAt, "--renew-at", o.PerHour, "--per-hour", func(c *autorenew.Config) {
		c.Resume, c.Settle, c.FutileMargin, c.WaitMax = o.Resume, o.Settle, o.FutileMargin, o.WaitMax
	})
	if err == nil {
		if verr := cfg.Validate(); verr != nil {
			err = usageErrorf("%v", verr)
		}
	}
	return cfg, err
}

// renewConfig checks the threshold and the per-hour limit (the two
// rules `run` takes too, under its own flag names) and returns the
// rules with set applied.
func renewConfig(at, atFlag string, perHour int, perHourFlag string, set func(*autorenew.Config)) (autorenew.Config, error) {
	if perHour < 1 {
		return autorenew.Config{}, usageErrorf("%s %d: give at least 1", perHourFlag, perHour)
	}
	t, err := autorenew.ParseThreshold(at)
	if err != nil {
		return autorenew.Config{}, usageErrorf("%s: %v", atFlag, err)
	}
	cfg := autorenew.Defaults(t)
	cfg.PerHour = perHour
	set(&cfg)
	return cfg, nil
}

// autorenewRun follows the sessions o names until they end or ctx is
// cancelled.
func autorenewRun(ctx context.Context, e *env, o autorenewOptions, cfg autorenew.Config) error {
	out := newDecisionPrinter(e, o.JSON)
	if o.All {
		return followAllSessions(ctx, e, o, cfg, out)
	}
	root, rec, err := resolveSession(e, controlOptions{StateDir: o.StateDir, Session: o.Session, Latest: o.Latest})
	if err != nil {
		return err
	}
	if rec.State.IsTerminal() {
		if o.Attached {
			return nil
		}
		return exitf(exitcode.Failed, "session %s already ended (%s); autorenew follows running sessions", rec.ID, rec.State)
	}
	if pid, ok := followedElsewhere(root, rec.ID); ok {
		if o.Attached {
			return exitf(exitcode.Failed, "session %s is already followed by the renewal policy of process %d", rec.ID, pid)
		}
		return exitf(exitcode.Failed, "session %s is already followed by the renewal policy of process %d (`run --renew-at` or another `autorenew`); stop that one first", rec.ID, pid)
	}
	r := newPolicyRunner(e, root, rec, o, cfg, out)
	return r.runGuarded(ctx)
}
