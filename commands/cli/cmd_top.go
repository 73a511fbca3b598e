package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/seal"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// `lifeloop top --once` and `--json` print the sessions from lifeloop
// itself (commands/topview links no terminal UI). The live view is the
// lifeloop-top program's: lifeloop parses the flags (its help is
// lifeloop's) and hands over to lifeloop-top, which links the terminal
// UI and runs the same command with it (MainWithTop).

const (
	// topProgramEnv names the lifeloop-top program to run, when it is
	// neither beside lifeloop nor on PATH.
	topProgramEnv = "LIFELOOP_TOP_PROGRAM"
	topProgram    = "lifeloop-top"
)

// topOptions are the inputs of `lifeloop top`.
type topOptions struct {
	StateDir string
	Once     bool
	JSON     bool
	// Totals prints --json as an object: the rows and their totals.
	Totals bool
	All    bool
	Width  int
	Fleet  fleetOptions
	// External lists the sessions harnesses run of their own accord that
	// lifeloop did not start (topview.ListExternal).
	External bool
}

func topCommand(e *env) *ucli.Command {
	var o topOptions
	return &ucli.Command{
		Name:  "top",
		Usage: "every session at a glance, live; renew, abort, pause at a key",
		Description: "A full-screen view of the sessions in the state directory, one row each: short id,\n" +
			"harness, state, uptime, idle/active and the time since the last output, frames, the\n" +
			"context-pressure gauge (percent of the window, coloured by level), the last event and\n" +
			"how long ago, and the latest renewal. Sessions that ended in the last hour are shown\n" +
			"dimmed (--all: every one). It updates as the sessions' files change (file-change\n" +
			"notifications on the state directory, ledgers read from where they were), never by\n" +
			"polling.\n\n" +
			"Sessions that wait for a person come first (a permission dialog, a question, an error,\n" +
			"then a finished turn; the longest waiting first), with the kind and for how long.\n\n" +
			"Keys: ↑↓ or j k move; n goes to the next session that waits for a person; o prints the\n" +
			"command that reaches its terminal (tmux, screen, else its device); enter shows the\n" +
			"selected session's receipts, following; r renews\n" +
			"it (asks for a payload file or none, then fresh or resumed); a aborts it (asks first);\n" +
			"p pauses or resumes it; / filters by harness, folder or state; q quits. The actions\n" +
			"are those of `lifeloop renew`, `abort`, `pause` and `resume`, with the same receipts.\n\n" +
			"--once prints the table once and exits (for scripts; colour only on a terminal that\n" +
			"has it, NO_COLOR honoured); --json prints the same rows as a JSON array, each with\n" +
			"\"attention\" (the block of the latest tick, the waiting in seconds, and for_seconds: how\n" +
			"long the state has held) and \"terminal\" (where it runs) when known; with --totals, an\n" +
			"object {\"sessions\": [rows], \"totals\": {…}}: the sessions' tokens and cost together,\n" +
			"the cost's provenance joined and the sessions whose cost is not (wholly) priced counted\n" +
			"(docs/usage.md). Once a session has usage, the table has a COST column and a TOTAL line\n" +
			"under the rows: the cost of every session shown, its provenance, how many are unpriced.\n" +
			"--once and --json are lifeloop's own; the live view runs the lifeloop-top program\n" +
			"(beside lifeloop, on PATH or named by $LIFELOOP_TOP_PROGRAM).\n\n" +
			"Background sessions a harness runs of its own accord that lifeloop did not start are\n" +
			"listed too, read-only, as the harness reports them (its own id, state, pid, folder,\n" +
			"what it waits for; \"external\" in --json says where from), asked for at most 5 s,\n" +
			"live again when the harness's files change (looked at every 2 s) and at least every\n" +
			"minute; a session lifeloop records is listed once. The keys do not act on them.\n" +
			"--external=false leaves them out (README, \"lifeloop top\").\n\n" +
			"--fleet URL --queue QUEUE shows the sessions of every machine that publishes its HCP\n" +
			"events to that broker (`run --events amqp://…`, `publish`) instead of this state\n" +
			"directory: machine, session, harness, seed 001 state, attention and cost where the\n" +
			"stream carries them, the last event, stale machines (nothing published for --stale)\n" +
			"and missing events. QUEUE is this view's own durable queue (bind it to the exchange:\n" +
			"amqp://host/EXCHANGE?routing_key=#); what it took is kept under <state-dir>/fleet, so\n" +
			"the view is rebuilt when started again. Live, it redraws as events come (a broker that\n" +
			"does not answer is said in the title, the rows kept), and its keys a, p and r send\n" +
			"abort, pause/resume and renew (with a note file) to the session's machine as fleet\n" +
			"commands signed with the fleet secret ($" + envFleetSecret + " or --secret-file),\n" +
			"showing the machine's answer. --once and --json stop once the broker says the queue\n" +
			"is read, or after --wait (docs/fleet.md).",
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "once", Usage: "print the table once and exit", Destination: &o.Once},
			&ucli.BoolFlag{Name: "json", Usage: "print the rows once as a JSON array", Destination: &o.JSON},
			&ucli.BoolFlag{Name: "totals", Usage: "with --json, print an object: the rows as \"sessions\" and their tokens and cost together as \"totals\"", Destination: &o.Totals},
			&ucli.BoolFlag{Name: "all", Usage: "show every ended session, not only those of the last hour", Destination: &o.All},
			&ucli.IntFlag{Name: "width", Usage: "table width in `COLUMNS` for --once (default: the terminal's, else $COLUMNS, else 120)", Destination: &o.Width},
			&ucli.BoolFlag{Name: "external", Value: true, Usage: "also list, read-only, the background sessions harnesses run that lifeloop did not start (--external=false: not)", Destination: &o.External},
			&ucli.StringFlag{Name: "fleet", Usage: "show every machine's sessions from the broker at `URL` (amqp://...) instead of the state directory's", Destination: &o.Fleet.URL},
			&ucli.StringFlag{Name: "queue", Usage: "the fleet view's durable `QUEUE`", Destination: &o.Fleet.Queue},
			&ucli.DurationFlag{Name: "stale", Usage: "a machine that published nothing for `DURATION` is shown stale (0: never)", Value: 10 * time.Minute, Destination: &o.Fleet.Stale},
			&ucli.DurationFlag{Name: "wait", Usage: "with --fleet --once or --json, read the queue for at most `DURATION` before printing (less once the broker says the queue is read)", Value: 3 * time.Second, Destination: &o.Fleet.Wait},
			&ucli.StringFlag{Name: "secret-file", Usage: "with --fleet, the fleet secret's `FILE` the keys sign their commands with (else $" + envFleetSecret + ")", Destination: &o.Fleet.SecretFile},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("top takes no arguments (got %q)", c.Args().First())
			}
			if o.Width < 0 {
				return usageErrorf("--width must be positive")
			}
			if o.Totals && !o.JSON {
				return usageErrorf("--totals goes with --json: the table shows its total line itself")
			}
			if o.Fleet.URL != "" {
				if o.Fleet.Queue == "" {
					return usageErrorf("--fleet needs --queue QUEUE: the durable queue of this view, bound to the exchange the machines publish to")
				}
				if o.Fleet.Wait <= 0 {
					return usageErrorf("--wait must be positive")
				}
				if !o.Once && !o.JSON && e.topUI == nil {
					return execTop(e)
				}
				ctx, stop := signalContext(c.Context)
				defer stop()
				if !o.Once && !o.JSON {
					return topFleetRun(ctx, e, o)
				}
				return topFleetPrint(ctx, e, o)
			}
			if o.Fleet.Queue != "" {
				return usageErrorf("--queue goes with --fleet URL")
			}
			if o.Fleet.SecretFile != "" {
				return usageErrorf("--secret-file goes with --fleet URL (a local top's keys need no secret)")
			}
			if o.Once || o.JSON {
				return topPrint(e, o)
			}
			if e.topUI == nil {
				return execTop(e)
			}
			ctx, stop := signalContext(c.Context)
			defer stop()
			return topRun(ctx, e, o)
		},
	}
}

// TopUI opens the terminal UI of `lifeloop top` (package topcmd, over
// commands/top). The lifeloop program links none of it: lifeloop-top
// passes one to MainWithTop, and lifeloop hands the live view over to
// that program (execTop).
type TopUI func(TopParams) (TopView, error)

// TopParams are what `lifeloop top` resolved for its UI.
type TopParams struct {
	Root string
	// Home is written ~ at the start of folders.
	Home string
	Now  func() time.Time
	// All shows every ended session, not only those of the last hour.
	All bool
	// Sealer seals a session whose wrapper died (shown lost).
	Sealer func(statedir.SessionRecord) statedir.SessionRecord
	// Actions are the keys' operations: those of `lifeloop abort`,
	// `pause`, `resume` and `renew`.
	Actions TopActions
	// ReceiptLine is a receipt as `lifeloop receipts` prints it on a
	// terminal.
	ReceiptLine func(contract.LifecycleReceipt) string
	// Environ says whether and how the terminal takes colour.
	Environ []string
	// Rows, when set, are the rows shown instead of Root's sessions (the
	// fleet view), and Where what the title names after the counts.
	Rows  TopRows
	Where func() string
	// External, when set, lists the sessions harnesses run of their own
	// accord that lifeloop did not start, shown beside Root's
	// (topview.WithExternal).
	External topview.ExternalLister
}

// TopRows is a source of rows other than the state directory (the
// interface top.RowSource).
type TopRows interface {
	Rows() []topview.Row
	Watch(ctx context.Context, coalesce time.Duration, changed func()) error
}

// TopActions are the operations top performs on a session (the
// interface top.Actions).
type TopActions interface {
	Control(ctx context.Context, id, op string) (string, error)
	Renew(ctx context.Context, id string, payloadFiles []string, resume bool) (string, error)
}

// TopView is the sessions the live top shows, read once and kept
// current.
type TopView interface {
	// Problems are what kept sessions from being read, by session id.
	Problems() map[string]string
	// Interactive runs the full-screen top on the terminal until the user
	// quits or ctx ends.
	Interactive(ctx context.Context, in, out *os.File) error
}

func topRun(ctx context.Context, e *env, o topOptions) error {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	// Sessions whose wrapper died are sealed (and shown lost), at start
	// and whenever a wrapper dies while top runs; a session that cannot
	// be sealed yet (a full disk) is shown as it is.
	_, _ = seal.Unlisted(root, e.sealOptions())
	paint := e.painter()
	view, err := e.topUI(TopParams{
		Root: root, Home: e.Getenv("HOME"), Now: e.Now, All: o.All,
		Sealer:      topSealer(e, root),
		Actions:     topActions{e: e, root: root},
		ReceiptLine: func(r contract.LifecycleReceipt) string { return receiptLine(r, paint) },
		Environ:     e.Environ,
		External:    topExternal(e, o),
	})
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	warnTopProblems(e, view.Problems())
	in, inOK := e.In.(*os.File)
	out, outOK := e.Out.(*os.File)
	if !inOK || !outOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return usageErrorf("top needs a terminal on standard input and output; use --once or --json in scripts")
	}
	if err := view.Interactive(ctx, in, out); err != nil {
		return exitf(exitcode.Failed, "top: %v", err)
	}
	return nil
}

// topPrint prints the rows once: the table (--once) or a JSON array
// (--json), an ended session only within topview.DefaultRecent unless
// --all, as the live view would list them.
func topPrint(e *env, o topOptions) error {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	_, _ = seal.Unlisted(root, e.sealOptions())
	now := e.Now()
	var since time.Time
	if !o.All {
		since = now.Add(-topview.DefaultRecent)
	}
	src, err := topview.OpenWith(root, since, topSealer(e, root))
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	warnTopProblems(e, src.Problems())
	all := src.Rows()
	if o.External {
		ext, errs := topview.ExternalSource{Registry: e.Registry(), Env: e.Environ}.List(context.Background())
		for _, err := range errs {
			fmt.Fprintf(e.Err, "lifeloop: warning: %v\n", err)
		}
		all = topview.MergeExternal(all, ext)
	}
	rows := []topview.Row{}
	for _, r := range all {
		if r.Shown(now, o.All, topview.DefaultRecent) {
			rows = append(rows, r)
		}
	}
	if o.JSON && o.Totals {
		out := struct {
			Sessions []topview.Row  `json:"sessions"`
			Totals   topview.Totals `json:"totals"`
		}{topview.Stamp(rows, now), topview.TotalsOf(rows)}
		return quietOnClosedOutput(writeIndentedJSON(e.Out, out))
	}
	if o.JSON {
		return quietOnClosedOutput(writeIndentedJSON(e.Out, topview.Stamp(rows, now)))
	}
	table := topview.Once(rows, now, onceWidth(e, o.Width), root, e.Getenv("HOME"), topview.ColourFor(e.OutTerminal, e.Getenv))
	_, err = io.WriteString(e.Out, table)
	return quietOnClosedOutput(err)
}

// topExternal lists, for the live view, the sessions harnesses run of
// their own accord (nil with --external=false).
func topExternal(e *env, o topOptions) topview.ExternalLister {
	if !o.External {
		return nil
	}
	return topview.ExternalSource{Registry: e.Registry(), Env: e.Environ}
}

// topSealer seals a session whose wrapper died (shown lost); a session
// that cannot be sealed yet (a full disk) is shown as it is.
func topSealer(e *env, root string) func(statedir.SessionRecord) statedir.SessionRecord {
	return func(rec statedir.SessionRecord) statedir.SessionRecord {
		out, _ := seal.Check(root, rec, e.sealOptions())
		return out
	}
}

// warnTopProblems says which sessions could not be read, and why.
func warnTopProblems(e *env, problems map[string]string) {
	for _, id := range slices.Sorted(maps.Keys(problems)) {
		fmt.Fprintf(e.Err, "lifeloop: warning: session %s: %s\n", id, problems[id])
	}
}

// execTop replaces lifeloop with the lifeloop-top program, same command
// line and environment, so the terminal, the signals and the exit code
// are lifeloop-top's. Nothing is caught through os/signal yet (Main
// catches signals only for run, top's signal context starts after this);
// the runtime's own handlers return to the default on exec, ignored
// signals stay ignored and no signal is blocked that was not when
// lifeloop started: lifeloop-top starts as if it had been run directly.
func execTop(e *env) error {
	prog, err := findProgram(e, topProgram, topProgramEnv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	err = syscall.Exec(path, e.args, e.Environ)
	return exitf(exitcode.Failed, "%s: %v", path, err)
}

// onceWidth is the width of the --once table.
func onceWidth(e *env, flag int) int {
	if flag > 0 {
		return flag
	}
	if f, ok := e.Out.(*os.File); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(e.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 120
}

// topActions performs top's keys with the functions of the abort, pause,
// resume and renew commands.
type topActions struct {
	e    *env
	root string
}

func (a topActions) Control(ctx context.Context, id, op string) (string, error) {
	rec, err := statedir.ReadSession(a.root, id)
	if err != nil {
		return "", err
	}
	res, err := controlSession(ctx, a.root, rec, op, op)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: %s → %v", id, op, res["state"]), nil
}

func (a topActions) Renew(ctx context.Context, id string, files []string, resume bool) (string, error) {
	rec, err := statedir.ReadSession(a.root, id)
	if err != nil {
		return "", err
	}
	o := renewOptions{Resume: resume}
	for _, f := range files {
		if f == "-" {
			return "", errors.New("top reads notes and payloads from files, not standard input")
		}
		p, err := a.e.abs(f)
		if err != nil {
			return "", err
		}
		// A payload envelope goes as --payload, anything else (text,
		// markdown) as --note.
		switch {
		case isPayloadEnvelope(p):
			o.Payloads = append(o.Payloads, p)
		case o.Note == "":
			o.Note = p
		default:
			return "", errors.New("top takes one note per renewal")
		}
	}
	out, err := renewSession(ctx, a.e, a.root, rec, o)
	if err != nil {
		return "", err
	}
	line := renewOutcomeLine(id, out)
	if out.State != renewal.StateDelivered {
		return "", errors.New(line)
	}
	return line, nil
}

// isPayloadEnvelope reports whether file holds a JSON object with a
// payload_id: a payload envelope, not a note.
func isPayloadEnvelope(file string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, ok := m["payload_id"]
	return ok
}
