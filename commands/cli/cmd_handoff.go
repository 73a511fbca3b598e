package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/handoff"
)

// handoffOptions are the inputs of `lifeloop handoff`.
type handoffOptions struct {
	StateDir string
	Session  string
	Latest   bool
	MaxBytes int
	// File reads this session file instead of the one the ledger names.
	File string
	// Cmd writes the note instead (handoff.Command), bounded by CmdTimeout.
	Cmd        string
	CmdTimeout time.Duration
}

func handoffCommand(e *env) *ucli.Command {
	o := handoffOptions{MaxBytes: handoff.DefaultMaxBytes, CmdTimeout: handoff.DefaultCommandTimeout}
	return &ucli.Command{
		Name:      "handoff",
		Usage:     "print a handoff note of a session, written from its own records (markdown)",
		ArgsUsage: "SESSION|--latest",
		Description: "Prints a markdown note a fresh session can start from, written from the session's\n" +
			"own records without asking any model and without typing into the harness: the\n" +
			"task as the person stated it (the first prompts), the latest prompts, the last\n" +
			"assistant message, the open todo or plan items where the harness keeps them, the\n" +
			"files read and edited and the commands run (tool calls), and the working folder's\n" +
			"git branch and changed files (`git status --porcelain`).\n\n" +
			"The harness's session file is the one the ledger's receipts name (the file its\n" +
			"telemetry followed; the latest, after a renewal); --session-file reads another.\n" +
			"The note has fixed sections in a fixed order and is at most --max-bytes bytes\n" +
			"(default " + fmt.Sprint(handoff.DefaultMaxBytes) + ", at least " + fmt.Sprint(handoff.MinMaxBytes) + "): long prompts, messages and lists are cut with a\n" +
			"marker saying what was left out. The same records give the same note. Lines of\n" +
			"the session file that cannot be read are skipped and counted in the note.\n\n" +
			"--cmd CMD writes the note with a command of your own instead: `sh -c CMD` in the\n" +
			"session's working folder, with LIFELOOP_SESSION_ID, LIFELOOP_HARNESS, LIFELOOP_CWD,\n" +
			"LIFELOOP_SESSION_FILE, LIFELOOP_RENEWALS and LIFELOOP_HANDOFF_MAX_BYTES in its\n" +
			"environment; its standard output is printed as is. When it fails, runs past\n" +
			"--cmd-timeout (default 30s; its process group is killed), prints nothing or more\n" +
			"than --max-bytes, a warning on stderr says so and the built-in note is printed.\n\n" +
			"Exits 1 when the session is unknown, its harness has no handoff reader or no\n" +
			"receipt names its session file, 3 when the session file cannot be read.\n" +
			"See docs/handoff.md.",
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "latest", Usage: "use the most recent session", Destination: &o.Latest},
			&ucli.IntFlag{Name: "max-bytes", Value: handoff.DefaultMaxBytes, Usage: "bound the note to `N` bytes", Destination: &o.MaxBytes},
			&ucli.StringFlag{Name: "session-file", Usage: "read the harness's session file at `PATH` instead of the one the ledger names", Destination: &o.File},
			&ucli.StringFlag{Name: "cmd", Usage: "write the note with the shell command `CMD` instead (see above)", Destination: &o.Cmd},
			&ucli.DurationFlag{Name: "cmd-timeout", Value: handoff.DefaultCommandTimeout, Usage: "bound --cmd's run to `D`", Destination: &o.CmdTimeout},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("handoff takes one SESSION (got %d arguments)", c.NArg())
			}
			o.Session = c.Args().First()
			return handoffRun(c.Context, e, o)
		},
	}
}

// handoffRun prints the note of one session.
func handoffRun(ctx context.Context, e *env, o handoffOptions) error {
	if o.MaxBytes < handoff.MinMaxBytes {
		return usageErrorf("--max-bytes %d is too small; give at least %d", o.MaxBytes, handoff.MinMaxBytes)
	}
	root, rec, err := resolveSession(e, controlOptions{StateDir: o.StateDir, Session: o.Session, Latest: o.Latest, ReadOnly: true})
	if err != nil {
		return err
	}
	a, err := e.Registry().Lookup(rec.AdapterID)
	if err != nil {
		return exitf(exitcode.Failed, "session %s: harness %q is not one this lifeloop knows; see `lifeloop adapters`", rec.ID, rec.AdapterID)
	}
	reader := a.HandoffReader()
	if reader == nil {
		return exitf(exitcode.Failed, "session %s: lifeloop cannot read the session files of harness %s into a note", rec.ID, rec.AdapterID)
	}
	opts := handoff.Options{MaxBytes: o.MaxBytes, SessionFile: o.File}
	if o.Cmd != "" {
		opts.Command = &handoff.Command{Script: o.Cmd, Env: e.Environ, Timeout: o.CmdTimeout}
	}
	w, err := handoff.SessionNote(ctx, root, rec, reader, opts)
	if w.CommandFailed != nil {
		fmt.Fprintf(e.Err, "lifeloop: warning: %v; the built-in note is printed instead\n", w.CommandFailed)
	}
	switch {
	case errors.Is(err, handoff.ErrNoSessionFile):
		return exitf(exitcode.Failed, "session %s: %v (its telemetry found none); give it with --session-file PATH", rec.ID, err)
	case err != nil:
		return exitf(exitcode.Unreadable, "session %s: %v", rec.ID, err)
	}
	_, err = fmt.Fprint(e.Out, w.Note)
	return quietOnClosedOutput(err)
}
