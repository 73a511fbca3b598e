package cli

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/handoff"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// handoffOptions are the inputs of `lifeloop handoff`.
type handoffOptions struct {
	StateDir string
	Session  string
	Latest   bool
	MaxBytes int
	// File reads this session file instead of the one the ledger names.
	File string
}

// gitTimeout bounds each git command the note's git section runs.
const gitTimeout = 5 * time.Second

func handoffCommand(e *env) *ucli.Command {
	o := handoffOptions{MaxBytes: handoff.DefaultMaxBytes}
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
			"Exits 1 when the session is unknown, its harness has no handoff reader or no\n" +
			"receipt names its session file, 3 when the session file cannot be read.\n" +
			"See docs/handoff.md.",
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "latest", Usage: "use the most recent session", Destination: &o.Latest},
			&ucli.IntFlag{Name: "max-bytes", Value: handoff.DefaultMaxBytes, Usage: "bound the note to `N` bytes", Destination: &o.MaxBytes},
			&ucli.StringFlag{Name: "session-file", Usage: "read the harness's session file at `PATH` instead of the one the ledger names", Destination: &o.File},
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
	facts := ledgerFacts(root, rec)
	if o.File != "" {
		facts.SessionFile = o.File
	}
	if facts.SessionFile == "" {
		return exitf(exitcode.Failed, "session %s: no receipt names the harness's session file (its telemetry found none); give it with --session-file PATH", rec.ID)
	}
	items, skipped, err := handoff.Collect(reader, facts.SessionFile)
	if err != nil {
		return exitf(exitcode.Unreadable, "session %s: %v", rec.ID, err)
	}
	facts.Skipped = skipped
	note := handoff.Render(handoff.Note{Facts: facts, Items: items, Git: gitState(ctx, rec.Cwd)}, o.MaxBytes)
	_, err = fmt.Fprint(e.Out, note)
	return quietOnClosedOutput(err)
}

// ledgerFacts returns what the session record and ledger say of the
// session: its identity, how many renewals started, and the last session
// file a receipt's provenance names. Lines that are not receipts are
// passed over.
func ledgerFacts(root string, rec statedir.SessionRecord) handoff.Facts {
	f := handoff.Facts{SessionID: rec.ID, Harness: rec.AdapterID, Cwd: rec.Cwd}
	if rec.StartedAt != nil {
		f.Started = rec.StartedAt.UTC().Format(time.RFC3339)
	}
	for en, err := range ledger.ReadSince(statedir.ReceiptsPath(root, rec.ID), 0) {
		if err != nil {
			var le *ledger.LineError
			if errors.As(err, &le) {
				continue
			}
			break
		}
		sum := en.Receipt.TelemetrySummary
		if p, ok := sum["path"].(string); ok && p != "" {
			f.SessionFile = p
		}
		if en.Receipt.Event == contract.EventSessionStarted && sum["reason"] == "renewal" {
			f.Renewals++
		}
	}
	return f
}

// gitState returns the branch and `git status --porcelain` of dir.
func gitState(ctx context.Context, dir string) handoff.Git {
	if dir == "" {
		return handoff.Git{Unavailable: "the session has no working folder"}
	}
	status, err := git(ctx, dir, "status", "--porcelain")
	if err != nil {
		return handoff.Git{Unavailable: err.Error()}
	}
	var changed []string
	for _, l := range strings.Split(status, "\n") {
		if strings.TrimSpace(l) != "" {
			changed = append(changed, l)
		}
	}
	return handoff.Git{Branch: gitBranch(ctx, dir), Changed: changed}
}

// gitBranch names the branch checked out in dir (one without commits
// too), else the commit of a detached HEAD.
func gitBranch(ctx context.Context, dir string) string {
	if b, err := git(ctx, dir, "symbolic-ref", "--short", "-q", "HEAD"); err == nil {
		return strings.TrimSpace(b)
	}
	if c, err := git(ctx, dir, "rev-parse", "--short", "HEAD"); err == nil {
		return "detached at " + strings.TrimSpace(c)
	}
	return ""
}

// git runs one git command in dir and returns its output; its error says
// why in one line (not a git repository, git not installed).
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", errors.New(strings.TrimPrefix(msg, "fatal: "))
	}
	return string(out), nil
}
