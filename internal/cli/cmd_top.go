package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/charmbracelet/colorprofile"
	ucli "github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/seal"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/top"
	"github.com/lifeloop/lifeloop/renewal"
)

// topOptions are the inputs of `lifeloop top`.
type topOptions struct {
	StateDir string
	Once     bool
	JSON     bool
	All      bool
	Width    int
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
			"Keys: ↑↓ or j k move; enter shows the selected session's receipts, following; r renews\n" +
			"it (asks for a payload file or none, then fresh or resumed); a aborts it (asks first);\n" +
			"p pauses or resumes it; / filters by harness, folder or state; q quits. The actions\n" +
			"are those of `lifeloop renew`, `abort`, `pause` and `resume`, with the same receipts.\n\n" +
			"--once prints the table once and exits (for scripts; colour only on a terminal that\n" +
			"has it, NO_COLOR honoured); --json prints the same rows as a JSON array.",
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "once", Usage: "print the table once and exit", Destination: &o.Once},
			&ucli.BoolFlag{Name: "json", Usage: "print the rows once as a JSON array", Destination: &o.JSON},
			&ucli.BoolFlag{Name: "all", Usage: "show every ended session, not only those of the last hour", Destination: &o.All},
			&ucli.IntFlag{Name: "width", Usage: "table width in `COLUMNS` for --once (default: the terminal's, else $COLUMNS, else 120)", Destination: &o.Width},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("top takes no arguments (got %q)", c.Args().First())
			}
			if o.Width < 0 {
				return usageErrorf("--width must be positive")
			}
			ctx, stop := signalContext(c.Context)
			defer stop()
			return topRun(ctx, e, o)
		},
	}
}

func topRun(ctx context.Context, e *env, o topOptions) error {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	// Sessions that ended before the window top shows are not read.
	var since time.Time
	if !o.All {
		since = e.Now().Add(-top.DefaultRecent)
	}
	// Sessions whose wrapper died are sealed (and shown lost), at start
	// and whenever a wrapper dies while top runs; a session that cannot
	// be sealed yet (a full disk) is shown as it is.
	_, _ = seal.Unlisted(root, e.sealOptions())
	sealer := func(rec statedir.SessionRecord) statedir.SessionRecord {
		out, _ := seal.Check(root, rec, e.sealOptions())
		return out
	}
	src, err := top.OpenWith(root, since, sealer)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	for id, p := range src.Problems() {
		fmt.Fprintf(e.Err, "lifeloop: warning: session %s: %s\n", id, p)
	}
	paint := e.painter()
	cfg := top.Config{
		Root: root, Home: e.Getenv("HOME"), Now: e.Now, All: o.All, Clock: time.Second, Actions: topActions{e: e, root: root},
		ReceiptLine: func(r contract.LifecycleReceipt) string { return receiptLine(r, paint) },
	}
	if o.JSON || o.Once {
		rows := top.NewModel(cfg, src.Rows()).Rows()
		if o.JSON {
			if rows == nil {
				rows = []top.Row{}
			}
			return quietOnClosedOutput(writeIndentedJSON(e.Out, rows))
		}
		w := colorprofile.NewWriter(e.Out, e.Environ)
		_, err := w.WriteString(top.Once(rows, e.Now(), onceWidth(e, o.Width), root, cfg.Home))
		return quietOnClosedOutput(err)
	}
	in, inOK := e.In.(*os.File)
	out, outOK := e.Out.(*os.File)
	if !inOK || !outOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return usageErrorf("top needs a terminal on standard input and output; use --once or --json in scripts")
	}
	if err := top.Interactive(ctx, src, cfg, in, out, e.Environ); err != nil {
		return exitf(exitcode.Failed, "top: %v", err)
	}
	return nil
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
