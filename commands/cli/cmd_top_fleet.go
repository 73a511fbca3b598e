package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/fleet"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// fleetOptions are `lifeloop top --fleet`'s own inputs.
type fleetOptions struct {
	URL, Queue  string
	Stale, Wait time.Duration
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
		Dir:    filepath.Join(root, "fleet", strings.NewReplacer("/", "_", "..", "_").Replace(o.Fleet.Queue)),
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
	return tw.Flush()
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
