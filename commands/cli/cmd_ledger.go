package cli

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"syscall"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ledgerVerifyOptions are the inputs of `lifeloop ledger verify`.
type ledgerVerifyOptions struct {
	StateDir string
	Session  string
	Latest   bool
}

func ledgerCommand(e *env) *ucli.Command {
	var o ledgerVerifyOptions
	return &ucli.Command{
		Name:  "ledger",
		Usage: "inspect a session's receipt ledger",
		Subcommands: []*ucli.Command{{
			Name:      "verify",
			Usage:     "check a session's ledger and print a JSON report (exit 1 when anything is wrong)",
			ArgsUsage: "SESSION|--latest",
			Description: "Reads the whole ledger (receipts.jsonl) and checks that every line is a valid\n" +
				"receipt, that sequences run 1, 2, 3, ... without gaps or repeats, that receipt ids\n" +
				"are unique and that the file does not end with an incomplete line. Prints a JSON\n" +
				"report (count, first_seq, last_seq, gaps, duplicates, torn_tail, invalid_lines,\n" +
				"problems, warnings, ok) and exits 1 when ok is false. Never modifies the ledger.",
			Flags: []ucli.Flag{
				stateDirFlag(&o.StateDir),
				&ucli.BoolFlag{Name: "latest", Usage: "use the most recent session", Destination: &o.Latest},
			},
			OnUsageError: commandUsageError,
			Action: func(c *ucli.Context) error {
				if c.NArg() > 1 {
					return usageErrorf("ledger verify takes one SESSION (got %d arguments)", c.NArg())
				}
				o.Session = c.Args().First()
				return ledgerVerifyRun(c.Context, e, o)
			},
		}},
	}
}

func ledgerVerifyRun(_ context.Context, e *env, o ledgerVerifyOptions) error {
	root, rec, err := resolveSession(e, controlOptions{StateDir: o.StateDir, Session: o.Session, Latest: o.Latest, ReadOnly: true})
	if err != nil {
		return err
	}
	rep, err := ledger.Verify(statedir.ReceiptsPath(root, rec.ID))
	if errors.Is(err, fs.ErrNotExist) {
		return exitf(exitcode.Failed, "session %s has no ledger yet (%s is missing)", rec.ID, statedir.ReceiptsFile)
	}
	if err != nil {
		return exitf(exitcode.Failed, "verify the ledger of session %s: %v", rec.ID, err)
	}
	if err := writeIndentedJSON(e.Out, rep); err != nil {
		return err
	}
	if !rep.OK {
		var what []string
		if len(rep.Gaps) > 0 {
			what = append(what, "sequence gaps")
		}
		if rep.Duplicates > 0 {
			what = append(what, "duplicates")
		}
		if len(rep.InvalidLines) > 0 {
			what = append(what, "invalid lines")
		}
		if rep.TornTail {
			what = append(what, "a torn last line")
		}
		return exitf(exitcode.Failed, "the ledger of session %s has %s (see the report)", rec.ID, strings.Join(what, ", "))
	}
	return nil
}

// errClosedPipe is the error a write to a closed pipe returns.
func errClosedPipe() error { return syscall.EPIPE }
