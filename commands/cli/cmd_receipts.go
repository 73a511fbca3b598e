package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/outbox"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// receiptsOptions are the inputs of `lifeloop receipts`.
type receiptsOptions struct {
	StateDir string
	Session  string
	Latest   bool
	Follow   bool
	Since    uint64
	Format   string
	// JSON keeps the NDJSON output on a terminal.
	JSON bool
	// Source is the OrgLoop source id of --format orgloop events.
	Source string
	// Webhook, when set, delivers the session's OrgLoop webhook posts
	// still owed instead of printing.
	Webhook string
}

// Output formats of `lifeloop receipts`.
const (
	formatLifeloop = "lifeloop"
	formatOrgLoop  = "orgloop"
	formatHCP      = "hcp"
)

func receiptsCommand(e *env) *ucli.Command {
	var o receiptsOptions
	return &ucli.Command{
		Name:      "receipts",
		Usage:     "print a session's receipts from its ledger (NDJSON; one line each for a person on a terminal)",
		ArgsUsage: "SESSION|--latest",
		Description: "Prints the receipts recorded in a session's ledger (receipts.jsonl), one JSON\n" +
			"object per line, in sequence order.\n\n" +
			"--since N prints only receipts with a sequence above N (a consumer that has\n" +
			"processed up to N resumes there). --follow keeps printing new receipts as they are\n" +
			"appended until interrupted (Ctrl-C or SIGTERM); it waits on file-change\n" +
			"notifications, not a busy loop.\n\n" +
			"A line that is not a receipt is skipped with a warning on stderr; so is a torn last line\n" +
			"(an interrupted write), judged when the reading ends under the ledger's lock, so that a\n" +
			"receipt a live wrapper is appending is not one.\n\n" +
			"On a terminal each receipt is one aligned line for a person: time, sequence, event,\n" +
			"status, source (process, hook, transcript, inferred, operator) and what matters for\n" +
			"the event (exit, pressure, frame, payload placement); colour unless NO_COLOR is set.\n" +
			"--json, or any output that is not a terminal, prints the NDJSON below.\n\n" +
			"--format lifeloop (default) prints each receipt exactly as stored; --format hcp prints\n" +
			"the HCP L2 events of the receipts (docs/contract.md), numbered from the session's start;\n" +
			"--format orgloop\n" +
			"prints the OrgLoop lifecycle event of each receipt that has one (others are left out),\n" +
			"with source --orgloop-source (default: the harness's name in OrgLoop's vocabulary); see docs/orgloop.md.\n\n" +
			"--orgloop-webhook URL prints nothing of the sort: it posts the session's start and stop\n" +
			"to OrgLoop's coding-agent webhook, those not yet delivered there (by `run` or an\n" +
			"earlier call), retrying until the receiver takes them, then prints one JSON line\n" +
			"{session_id, delivered, undeliverable, through}: what this call delivered and what the\n" +
			"receiver refused for good in it; with --follow it goes on until interrupted. It exits 1\n" +
			"when any post of the session stays undeliverable. The secret comes from $" + orgLoopSecretEnv + ".",
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "latest", Usage: "use the most recent session", Destination: &o.Latest},
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing receipts as they are appended", Destination: &o.Follow},
			&ucli.Uint64Flag{Name: "since", Usage: "print only receipts with a sequence above `N`", Destination: &o.Since},
			&ucli.BoolFlag{Name: "json", Usage: "print NDJSON on a terminal too", Destination: &o.JSON},
			&ucli.StringFlag{Name: "format", Value: formatLifeloop, Usage: "output `FORMAT`: lifeloop, orgloop or hcp", Destination: &o.Format},
			&ucli.StringFlag{Name: "orgloop-source", Usage: "OrgLoop source `ID` of --format orgloop events (default: the harness)", Destination: &o.Source},
			orgLoopWebhookFlag(&o.Webhook),
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("receipts takes one SESSION (got %d arguments)", c.NArg())
			}
			o.Session = c.Args().First()
			ctx := c.Context
			if o.Follow || o.Webhook != "" {
				var stop context.CancelFunc
				ctx, stop = signalContext(ctx)
				defer stop()
			}
			return receiptsRun(ctx, e, o)
		},
	}
}

// receiptsRun prints the receipts; with o.Follow it returns when ctx is
// cancelled.
func receiptsRun(ctx context.Context, e *env, o receiptsOptions) error {
	if o.Format != formatLifeloop && o.Format != formatOrgLoop && o.Format != formatHCP {
		return usageErrorf("unknown --format %q; use lifeloop, orgloop or hcp", o.Format)
	}
	root, rec, err := resolveSession(e, controlOptions{StateDir: o.StateDir, Session: o.Session, Latest: o.Latest})
	if err != nil {
		return err
	}
	if o.Webhook != "" {
		return deliverOrgLoop(ctx, e, root, rec, o)
	}
	path := statedir.ReceiptsPath(root, rec.ID)
	write := receiptWriter(e.Out, o.Format, contract.OrgLoopOptions{SessionID: rec.ID, Source: o.Source, Cwd: rec.Cwd}, e.Registry())
	since := o.Since
	if o.Format == formatHCP {
		// The HCP sequence counts from the session's first receipt: read
		// them all, print those after --since.
		write, since = hcpWriter(e.Out, rec.ID, hcp.MachineName(e.Getenv), o.Since), 0
	} else if e.human() && !o.JSON && o.Format == formatLifeloop {
		paint := e.painter()
		write = func(en ledger.Entry) error {
			_, err := fmt.Fprintln(e.Out, receiptLine(en.Receipt, paint))
			return err
		}
	}
	if o.Follow {
		err := ledger.Follow(ctx, path, since, write)
		return quietOnClosedOutput(err)
	}
	for entry, err := range ledger.ReadSince(path, since) {
		var le *ledger.LineError
		if errors.As(err, &le) {
			fmt.Fprintf(e.Err, "lifeloop: warning: skipped a line that is not a receipt: %v (run `lifeloop ledger verify %s`)\n", le, rec.ID)
			continue
		}
		if err != nil {
			return exitf(exitcode.Failed, "read the ledger of session %s: %v", rec.ID, err)
		}
		if err := write(entry); err != nil {
			return quietOnClosedOutput(err)
		}
	}
	warnTornTail(e, path, rec.ID)
	return nil
}

// tornTailWait bounds how long `receipts` waits for a writer that holds
// the ledger's lock before it judges the last line.
const tornTailWait = time.Second

// warnTornTail says on stderr when the ledger ends with a torn line: the
// interrupted write of a writer that crashed, which the reading skipped.
// A line being appended is not one: it is judged under the ledger's lock
// (ledger.TornTail), and nothing is said while a writer holds it.
func warnTornTail(e *env, path, id string) {
	off, n, err := ledger.TornTail(path, tornTailWait)
	if err != nil || n == 0 {
		return
	}
	fmt.Fprintf(e.Err, "lifeloop: warning: the ledger ends with %d bytes that are not a complete receipt (byte %d on, an interrupted write), skipped; the next receipt recorded moves them aside (run `lifeloop ledger verify %s`)\n", n, off, id)
}

// receiptWriter returns the function that prints one ledger entry.
func receiptWriter(w io.Writer, format string, base contract.OrgLoopOptions, reg *adapters.Registry) func(ledger.Entry) error {
	if format == formatOrgLoop {
		return func(en ledger.Entry) error {
			opts := base
			if a, err := reg.Lookup(en.Receipt.AdapterID); err == nil {
				opts.Harness = a.OrgLoopHarness
			}
			ev, err := contract.ProjectOrgLoop(en.Receipt, opts)
			if errors.Is(err, contract.ErrNoOrgLoopPhase) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("project receipt %d to OrgLoop: %w", en.Sequence, err)
			}
			b, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			_, err = w.Write(append(b, '\n'))
			return err
		}
	}
	return func(en ledger.Entry) error {
		_, err := w.Write(append(en.Raw, '\n'))
		return err
	}
}

// hcpWriter prints the HCP L2 events of the receipts after since, each
// numbered as in the projection of the whole ledger, on machine.
func hcpWriter(w io.Writer, sessionID, machine string, since uint64) func(ledger.Entry) error {
	p := hcp.NewProjector(sessionID)
	p.SetMachine(machine)
	return func(en ledger.Entry) error {
		evs := p.Project(en.Receipt)
		if en.Sequence <= since {
			return nil
		}
		for _, ev := range evs {
			b, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(b, '\n')); err != nil {
				return err
			}
		}
		return nil
	}
}

// quietOnClosedOutput turns a write error on a closed stdout (a pipe to
// `head`) into a quiet failure exit; other errors keep their message.
func quietOnClosedOutput(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, errClosedPipe()) {
		return silentExit(exitcode.Failed)
	}
	return exitf(exitcode.Failed, "%v", err)
}

// deliverOrgLoop posts the session's OrgLoop webhook posts still owed and
// prints the cursor's counts.
func deliverOrgLoop(ctx context.Context, e *env, root string, rec statedir.SessionRecord, o receiptsOptions) error {
	t, err := newOrgLoopTarget(e, o.Webhook)
	if err != nil {
		return err
	}
	ob, err := t.open(e, root, rec.ID, rec.Cwd, nil)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	defer func() { _ = ob.Close() }()
	if !o.Follow {
		ob.Finish()
	}
	before := ob.State()
	runErr := ob.Run(ctx)
	st := ob.State()
	out, _ := json.Marshal(map[string]any{"session_id": rec.ID, "delivered": st.Delivered - before.Delivered,
		"undeliverable": len(st.Undeliverable) - len(before.Undeliverable), "through": st.Through})
	fmt.Fprintln(e.Out, string(out))
	if runErr != nil && (!o.Follow || !errors.Is(runErr, context.Canceled)) {
		return exitf(exitcode.Failed, "OrgLoop webhook delivery of session %s stopped before the end of its ledger: %v; run the command again to go on", rec.ID, runErr)
	}
	return undeliverableExit(rec.ID, st.Undeliverable, ob.StatePath())
}

// undeliverableExit is the failure of a delivery command when posts or
// events of session id stay undeliverable (refused for good, never
// retried): nil when none do.
func undeliverableExit(id string, u []outbox.Undeliverable, statePath string) error {
	if len(u) == 0 {
		return nil
	}
	return exitf(exitcode.Failed, "%d of session %s's deliveries stay undeliverable (last: %s); see %s", len(u), id, u[len(u)-1].Error, statePath)
}
