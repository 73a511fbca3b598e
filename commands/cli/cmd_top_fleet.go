package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/oklog/ulid/v2"
	"golang.org/x/term"

	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/fleet"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// fleetOptions are `lifeloop top --fleet`'s own inputs.
type fleetOptions struct {
	URL, Queue  string
	Stale, Wait time.Duration
	// SecretFile holds the fleet secret the live view's keys sign their
	// commands with (else $LIFELOOP_FLEET_SECRET).
	SecretFile string
}

// fleetQuiet is how long `top --fleet --once` waits for another batch
// before it asks the broker whether the queue is read.
const fleetQuiet = 300 * time.Millisecond

// topFleetPrint prints the fleet view once (--once, --json): the rows the
// view's folder already holds, then what the queue delivers until the
// view is caught up (caughtUp) or --wait is spent — a broker that does
// not answer delays the print by --wait at most.
func topFleetPrint(ctx context.Context, e *env, o topOptions) error {
	f, err := openFleet(e, o)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	rctx, cancel := context.WithTimeout(ctx, o.Fleet.Wait)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(rctx) }()
	quiet := time.NewTimer(fleetQuiet)
	defer quiet.Stop()
	idle := 0 // quiet periods in a row with the queue read
wait:
	for {
		select {
		case <-f.Batches():
			idle = 0
			quiet.Reset(fleetQuiet)
		case <-quiet.C:
			if caughtUp(rctx, f) {
				idle++
			} else {
				idle = 0
			}
			if idle == 2 {
				break wait
			}
			quiet.Reset(fleetQuiet)
		case <-rctx.Done():
			break wait
		}
	}
	cancel()
	<-done
	rows := f.Rows(e.Now(), o.Fleet.Stale)
	if o.JSON && o.Totals {
		out := struct {
			Sessions []fleet.Row    `json:"sessions"`
			Totals   topview.Totals `json:"totals"`
		}{rows, topview.TotalsOf(topview.FromFleetRows(rows))}
		return quietOnClosedOutput(writeIndentedJSON(e.Out, out))
	}
	if o.JSON {
		return quietOnClosedOutput(writeIndentedJSON(e.Out, rows))
	}
	return quietOnClosedOutput(writeFleetTable(e.Out, rows, e.Now()))
}

// caughtUp reports whether the view has read its queue: the broker has
// no message of it ready and the view's consumer is attached. Messages
// delivered and still being written, or held for reordering (at most
// amqpsink.ReorderWait), are not counted by the broker: taking two quiet
// periods in a row with no batch leaves the first to land; the held
// ones are the next run's.
func caughtUp(ctx context.Context, f *fleet.Follower) bool {
	b, err := f.Backlog(ctx)
	return err == nil && b.Ready == 0 && b.Consumers > 0
}

// openFleet opens the fleet view's folder for o (its consumer and the
// rows it kept).
func openFleet(e *env, o topOptions) (*fleet.Follower, error) {
	t, err := parseAMQP("--fleet", o.Fleet.URL)
	if err != nil {
		return nil, err
	}
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return nil, exitf(exitcode.Failed, "%v", err)
	}
	f, err := fleet.Open(fleet.Config{
		Target: t, Queue: o.Fleet.Queue,
		Dir:    fleetDir(root, o.Fleet.Queue),
		Logger: slog.New(slog.NewTextHandler(e.Err, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, exitf(exitcode.Failed, "%v", err)
	}
	return f, nil
}

// writeFleetTable prints the rows as a plain table.
func writeFleetTable(w io.Writer, rows []fleet.Row, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tSESSION\tHARNESS\tSTATE\tATTENTION\tCOST\tLAST EVENT\tNOTE")
	for _, r := range rows {
		var note []string
		if r.Stale {
			note = append(note, "stale")
		}
		if r.Gaps > 0 {
			note = append(note, fmt.Sprintf("%d missing", r.Gaps))
		}
		state := r.State
		if r.Reason != "" {
			state += " (" + r.Reason + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s ago\t%s\n", r.Machine, r.Session, dash(r.Harness), state,
			dash(fleetAttention(r.Attention)), dash(fleetCost(r.Usage)), now.Sub(r.LastEventAt).Round(time.Second), strings.Join(note, ", "))
	}
	if line, ok := fleetTotal(rows); ok {
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// fleetTotal is the table's last line when a session's stream carried
// usage: how many sessions it sums and how many of them have a cost not
// (wholly) priced, their tokens, and the priced part of their cost with
// the provenances together under COST (topview.TotalsOf: never a dollar
// figure for an unknown cost).
func fleetTotal(rows []fleet.Row) (string, bool) {
	t := topview.TotalsOf(topview.FromFleetRows(rows))
	if t.WithUsage == 0 {
		return "", false
	}
	what := fmt.Sprintf("%d %s · %s tokens", t.Sessions, map[bool]string{true: "session", false: "sessions"}[t.Sessions == 1], topview.Tokens(t.Total))
	if t.UnknownCost > 0 {
		what += fmt.Sprintf(" · %d unpriced", t.UnknownCost)
	}
	cost := t.CostText()
	if cost == "" {
		cost = "-"
	}
	return fmt.Sprintf("TOTAL\t%s\t\t\t\t%s %s\t\t", what, cost, t.Provenance), true
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fleetAttention is the attention block's state, "" while working or
// unknown.
func fleetAttention(a map[string]any) string {
	s, _ := a["state"].(string)
	if s == "working" {
		return ""
	}
	return s
}

// fleetCost is the usage block's cost with its provenance ("" when the
// stream carried none).
func fleetCost(u map[string]any) string {
	c, _ := u["cost"].(map[string]any)
	if c == nil {
		return ""
	}
	prov, _ := c["provenance"].(string)
	usd, ok := c["usd"].(float64)
	if !ok || prov == "unknown" {
		return "unknown"
	}
	if usd < 1 {
		return fmt.Sprintf("$%.4f %s", usd, prov)
	}
	return fmt.Sprintf("$%.2f %s", usd, prov)
}

// topFleetRun is the live fleet view (lifeloop-top): the rows the view
// kept, then every event the queue delivers, redrawn as they come; the
// keys send fleet commands to the session's machine.
func topFleetRun(ctx context.Context, e *env, o topOptions) error {
	t, err := parseAMQP("--fleet", o.Fleet.URL)
	if err != nil {
		return err
	}
	secret, err := fleetSecret(e, o.Fleet.SecretFile)
	if err != nil {
		return err
	}
	in, inOK := e.In.(*os.File)
	out, outOK := e.Out.(*os.File)
	if !inOK || !outOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return usageErrorf("top needs a terminal on standard input and output; use --once or --json in scripts")
	}
	f, logFile, err := openFleetLive(e, o)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close(); _ = logFile.Close() }()
	src := &fleetRows{f: f, now: e.Now, stale: o.Fleet.Stale, where: fmt.Sprintf("fleet %s · queue %s", t.Redacted(), o.Fleet.Queue)}
	paint := e.painter()
	view, err := e.topUI(TopParams{
		Home: e.Getenv("HOME"), Now: e.Now, All: o.All,
		Actions:     fleetActions{e: e, t: t, secret: secret, rows: src},
		ReceiptLine: func(r contract.LifecycleReceipt) string { return receiptLine(r, paint) },
		Environ:     e.Environ,
		Rows:        src,
		Where:       src.Where,
	})
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	if err := view.Interactive(ctx, in, out); err != nil {
		return exitf(exitcode.Failed, "top: %v", err)
	}
	return nil
}

// openFleetLive opens the view's folder for the live view, its log (the
// consumer's warnings: dead letters, gaps, outages) going to view.log
// there, never to the terminal the view draws on.
func openFleetLive(e *env, o topOptions) (*fleet.Follower, *os.File, error) {
	t, err := parseAMQP("--fleet", o.Fleet.URL)
	if err != nil {
		return nil, nil, err
	}
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return nil, nil, exitf(exitcode.Failed, "%v", err)
	}
	dir := fleetDir(root, o.Fleet.Queue)
	if err := os.MkdirAll(dir, statedir.DirPerm); err != nil {
		return nil, nil, exitf(exitcode.Failed, "fleet view folder: %v", err)
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "view.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, statedir.FilePerm)
	if err != nil {
		return nil, nil, exitf(exitcode.Failed, "%v", err)
	}
	f, err := fleet.Open(fleet.Config{
		Target: t, Queue: o.Fleet.Queue, Dir: dir,
		Logger: slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})
	if err != nil {
		_ = logFile.Close()
		return nil, nil, exitf(exitcode.Failed, "%v", err)
	}
	return f, logFile, nil
}

// fleetDir is the folder of the fleet view of queue.
func fleetDir(root, queue string) string {
	return filepath.Join(root, "fleet", strings.NewReplacer("/", "_", "..", "_").Replace(queue))
}

// fleetProbeEvery is how often the live view asks the broker about its
// queue (whether it answers; how many messages wait).
const fleetProbeEvery = 2 * time.Second

// fleetRefresh is how often the live view recomputes its rows without
// an event: machines turn stale with time.
const fleetRefresh = 5 * time.Second

// fleetRows are the live view's rows (cli.TopRows): the follower's, as
// top shows them, with the broker's state for the title.
type fleetRows struct {
	f     *fleet.Follower
	now   func() time.Time
	stale time.Duration
	where string

	mu      sync.Mutex
	byID    map[string]string // session → machine, of the rows last given
	probed  bool
	backlog fleet.Backlog
	downAt  time.Time // the broker stopped answering (zero: it answers)
	downErr string
}

func (s *fleetRows) Rows() []topview.Row {
	rows := s.f.Rows(s.now(), s.stale)
	byID := make(map[string]string, len(rows))
	for _, r := range rows {
		byID[r.Session] = r.Machine
	}
	s.mu.Lock()
	s.byID = byID
	s.mu.Unlock()
	return topview.FromFleetRows(rows)
}

// machine is the machine of session id as the rows last said it.
func (s *fleetRows) machine(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.byID[id]
	return m, ok
}

// Where is the title's end: the broker, the queue, and whether the
// broker answers (a broker away leaves the rows as they were read).
func (s *fleetRows) Where() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.downAt.IsZero():
		return fmt.Sprintf("%s · broker not answering for %s (%s); rows as last read", s.where, topview.Dur(s.now().Sub(s.downAt)), s.downErr)
	case !s.probed:
		return s.where + " · connecting"
	case s.backlog.Ready > 0:
		return fmt.Sprintf("%s · %d waiting", s.where, s.backlog.Ready)
	}
	return s.where + " · caught up"
}

// Watch reads the queue (the consumer, reconnecting while the broker is
// away), probes the broker and says when the rows changed: after each
// burst of batches (at most once per coalesce) and every fleetRefresh.
// It returns nil when ctx ends, or the consumer's error that retrying
// cannot fix.
func (s *fleetRows) Watch(ctx context.Context, coalesce time.Duration, changed func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- s.f.Run(ctx) }() // ends with ctx
	probed := make(chan struct{}, 1)
	go func() { // ends with ctx
		for {
			s.probe(ctx)
			select {
			case probed <- struct{}{}:
			default:
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(fleetProbeEvery):
			}
		}
	}()
	changed()
	refresh := time.NewTicker(fleetRefresh)
	defer refresh.Stop()
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			<-runErr
			return nil
		case err := <-runErr:
			return err
		case <-s.f.Batches():
			if fire == nil {
				fire = time.After(coalesce)
			}
		case <-fire:
			fire = nil
			changed()
		case <-probed:
			changed()
		case <-refresh.C:
			changed()
		}
	}
}

// probe asks the broker about the view's queue and keeps the answer.
func (s *fleetRows) probe(ctx context.Context) {
	b, err := s.f.Backlog(ctx)
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probed = true
	if err != nil {
		if s.downAt.IsZero() {
			s.downAt = s.now()
		}
		s.downErr = shortErr(err)
		return
	}
	s.downAt, s.downErr, s.backlog = time.Time{}, "", b
}

// shortErr keeps an error's last part, short enough for the title.
func shortErr(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	if len(msg) > 40 {
		msg = msg[:40] + "…"
	}
	return msg
}

// fleetActions are the fleet view's keys: fleet commands (the `lifeloop
// abort|pause|resume|renew --fleet` path) to the session's machine,
// signed with the fleet secret.
type fleetActions struct {
	e      *env
	t      amqpsink.Target
	secret []byte
	rows   *fleetRows
}

func (a fleetActions) Control(ctx context.Context, id, op string) (string, error) {
	return a.send(ctx, id, fleet.Command{Op: op}, 10*time.Second)
}

func (a fleetActions) Renew(ctx context.Context, id string, files []string, resume bool) (string, error) {
	var note []byte
	switch len(files) {
	case 0:
	case 1:
		p, err := a.e.abs(files[0])
		if err != nil {
			return "", err
		}
		if isPayloadEnvelope(p) {
			return "", errors.New("a fleet renewal takes a note (text or markdown), not a payload envelope")
		}
		if note, err = os.ReadFile(p); err != nil {
			return "", err
		}
		if len(note) > fleet.MaxNote {
			return "", fmt.Errorf("a fleet renewal's note is %d bytes at most", fleet.MaxNote)
		}
	default:
		return "", errors.New("a fleet renewal takes one note")
	}
	return a.send(ctx, id, fleet.Command{Op: "renew", Note: string(note), Resume: resume}, renewTimeout)
}

// send completes cmd for session id on its machine, sends it and says
// the answer in one line; refused and failed are errors.
func (a fleetActions) send(ctx context.Context, id string, cmd fleet.Command, wait time.Duration) (string, error) {
	machine, ok := a.rows.machine(id)
	if !ok || machine == "" || machine == "unknown" {
		return "", errors.New("its machine is not known (its session_created was not read): use lifeloop " + cmd.Op + " --fleet URL --machine M")
	}
	if len(a.secret) == 0 {
		return "", errors.New("no fleet secret: set " + envFleetSecret + " or --secret-file to command the fleet")
	}
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl))
	}
	cmd.ID, cmd.Machine, cmd.Session = "cmd_"+ulid.Make().String(), machine, id
	cmd.Caller, cmd.IssuedAt = fleet.MachineName(a.e.Getenv), a.e.Now().UTC()
	res, err := fleet.Send(ctx, a.t, cmd, a.secret, wait)
	if err != nil {
		return "", err
	}
	if res.Status != fleet.ResultDone {
		return "", fmt.Errorf("%s on %s %s: %s", cmd.Op, machine, res.Status, res.Message)
	}
	return fmt.Sprintf("%s on %s: %s → %s (command %s)", topview.ShortID(id), machine, cmd.Op, res.State, res.CommandID), nil
}
