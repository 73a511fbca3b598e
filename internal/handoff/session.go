package handoff

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ErrNoSessionFile says no receipt of the session's ledger names the
// harness's session file (its telemetry found none).
var ErrNoSessionFile = errors.New("no receipt names the harness's session file")

// ErrNoReader says the harness has no HandoffReader: lifeloop cannot
// write a built-in note of its session files.
var ErrNoReader = errors.New("lifeloop cannot read this harness's session files into a note")

// GitTimeout bounds each git command GitState runs.
const GitTimeout = 5 * time.Second

// Options are the choices of a session's note.
type Options struct {
	// MaxBytes bounds the note (0: DefaultMaxBytes).
	MaxBytes int
	// SessionFile, when set, is read instead of the file the ledger names.
	SessionFile string
	// Git returns the working folder's git state; nil runs GitState.
	Git func(ctx context.Context, dir string) Git
	// Command, when set, writes the note in lifeloop's place; when it
	// fails the built-in note is written (Written.CommandFailed says why).
	Command *Command
}

// Written is a session's note and where it came from.
type Written struct {
	Note string
	// CommandFailed says why the note is the built-in one although a
	// command was given; nil when the command's note is used or none was
	// given.
	CommandFailed error
}

// SessionNote returns the note of session rec of the state folder root:
// o.Command's, else (or when it fails) the built-in one, its session file
// read through r (nil: the harness has none; only the command can write
// the note, and ErrNoReader says so when it cannot). The error wraps ErrNoSessionFile when the ledger names
// no file (and o gives none), and adapters.ErrHandoffUnreadable when the
// file cannot be read.
func SessionNote(ctx context.Context, root string, rec statedir.SessionRecord, r adapters.HandoffReader, o Options) (Written, error) {
	facts := LedgerFacts(root, rec)
	if o.SessionFile != "" {
		facts.SessionFile = o.SessionFile
	}
	var w Written
	if o.Command != nil {
		c := *o.Command
		if c.MaxBytes == 0 {
			c.MaxBytes = o.MaxBytes
		}
		note, err := c.Run(ctx, facts)
		if err == nil {
			return Written{Note: note}, nil
		}
		w.CommandFailed = err
	}
	if r == nil {
		return w, ErrNoReader
	}
	if facts.SessionFile == "" {
		return w, ErrNoSessionFile
	}
	items, skipped, err := Collect(r, facts.SessionFile)
	if err != nil {
		return w, err
	}
	facts.Skipped = skipped
	git := o.Git
	if git == nil {
		git = GitState
	}
	w.Note = Render(Note{Facts: facts, Items: items, Git: git(ctx, rec.Cwd)}, o.MaxBytes)
	return w, nil
}

// LedgerFacts returns what the session record and ledger say of the
// session: its identity, how many renewals started (session.started of
// reason "renewal"), and the last session file a receipt's provenance
// names (telemetry_summary.path: after a renewal, the new
// conversation's). Lines that are not receipts are passed over.
func LedgerFacts(root string, rec statedir.SessionRecord) Facts {
	f := Facts{SessionID: rec.ID, Harness: rec.AdapterID, Cwd: rec.Cwd}
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

// GitState returns the branch and `git status --porcelain` of dir, or
// why there are none in one line (not a repository, git missing).
func GitState(ctx context.Context, dir string) Git {
	if dir == "" {
		return Git{Unavailable: "the session has no working folder"}
	}
	status, err := git(ctx, dir, "status", "--porcelain")
	if err != nil {
		return Git{Unavailable: err.Error()}
	}
	var changed []string
	for _, l := range strings.Split(status, "\n") {
		if strings.TrimSpace(l) != "" {
			changed = append(changed, l)
		}
	}
	return Git{Branch: gitBranch(ctx, dir), Changed: changed}
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

// git runs one git command in dir, bounded by GitTimeout, and returns
// its output; its error is git's first line of complaint.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, GitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg == "" {
			msg = err.Error()
		}
		return "", errors.New(strings.TrimPrefix(msg, "fatal: "))
	}
	return string(out), nil
}
