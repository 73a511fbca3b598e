package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/fleet"
	"github.com/lifeloop/lifeloop/internal/outbox"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// amqpDrain is how long run waits by default, after the session ended,
// for events the broker has not confirmed yet; the rest is left for
// `lifeloop publish`.
const amqpDrain = 10 * time.Second

const amqpURLHelp = "amqp://USER:PASS@HOST:PORT/VHOST?exchange=X&routing_key=K&queue=Q: exchange (default: the\n" +
	"default exchange) is declared durable (exchange_type, default topic); routing_key may hold\n" +
	"{session_id} (default lifeloop.hcp.{session_id}); queue, when given, is declared durable and\n" +
	"bound (binding_key, default #) so that events wait for their consumer. The user and\n" +
	"password are never logged, printed or written to the state folder."

type publishOptions struct {
	StateDir string
	Session  string
	Latest   bool
	Events   string
	Follow   bool
}

func publishCommand(e *env) *ucli.Command {
	var o publishOptions
	return &ucli.Command{
		Name:      "publish",
		Usage:     "publish a session's HCP events to an AMQP broker from its ledger, from where the last publish stopped",
		ArgsUsage: "SESSION|--latest",
		Description: "Publishes the session's HCP L2 events (docs/contract.md) that the broker has not\n" +
			"confirmed yet, in order, as persistent messages with publisher confirms: the ledger is\n" +
			"the outbox and a cursor file in the session's folder records the last receipt whose\n" +
			"events the broker confirmed. `lifeloop run --events amqp://...` does the same while the\n" +
			"session runs; publish finishes the stream after lifeloop was gone (a crash, a reboot,\n" +
			"a broker that stayed down). It retries with backoff until the broker takes every event,\n" +
			"then prints one JSON line {session_id, published, undeliverable, through}: this call's\n" +
			"counts; with --follow it goes on until interrupted. It exits 1 when any event of the\n" +
			"session stays undeliverable. An event sent twice (a confirm lost with the connection) carries the\n" +
			"same message_id and sequence, for the consumer to skip.\n\n" + amqpURLHelp,
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.BoolFlag{Name: "latest", Usage: "use the most recent session", Destination: &o.Latest},
			&ucli.StringFlag{Name: "events", Usage: "the broker `URL` (amqp://...)", Destination: &o.Events, Required: true},
			&ucli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep publishing as the ledger grows", Destination: &o.Follow},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("publish takes one SESSION (got %d arguments)", c.NArg())
			}
			o.Session = c.Args().First()
			ctx, stop := signalContext(c.Context)
			defer stop()
			return publishRun(ctx, e, o)
		},
	}
}

func parseAMQP(flag, dest string) (amqpsink.Target, error) {
	t, err := amqpsink.ParseURL(dest)
	if err != nil {
		return t, usageErrorf("%s: %v", flag, err)
	}
	return t, nil
}

// amqpStatePath is the cursor file of session id's delivery to t, named
// after a digest of the destination without its credentials.
func amqpStatePath(root, id string, t amqpsink.Target) string {
	sum := sha256.Sum256([]byte(t.Redacted()))
	return filepath.Join(statedir.SessionDir(root, id), "hcp-amqp-"+hex.EncodeToString(sum[:4])+".json")
}

func openAMQPOutbox(root, id, machine string, t amqpsink.Target, log *slog.Logger, now func() time.Time) (*outbox.Outbox, *amqpsink.Publisher, error) {
	p := amqpsink.NewPublisher(t, id)
	cfg := amqpsink.Outbox(statedir.ReceiptsPath(root, id), amqpStatePath(root, id, t), id, machine, t, p)
	cfg.Logger, cfg.Now = log, now
	ob, err := outbox.Open(cfg)
	if err != nil {
		_ = p.Close()
		return nil, nil, err
	}
	return ob, p, nil
}

func publishRun(ctx context.Context, e *env, o publishOptions) error {
	t, err := parseAMQP("--events", o.Events)
	if err != nil {
		return err
	}
	root, rec, err := resolveSession(e, controlOptions{StateDir: o.StateDir, Session: o.Session, Latest: o.Latest})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(e.Err, nil))
	ob, p, err := openAMQPOutbox(root, rec.ID, fleet.MachineName(e.Getenv), t, log, e.Now)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	defer func() { _ = ob.Close(); _ = p.Close() }()
	if !o.Follow {
		ob.Finish()
	}
	before := ob.State()
	runErr := ob.Run(ctx)
	st := ob.State()
	out, _ := json.Marshal(map[string]any{"session_id": rec.ID, "published": st.Delivered - before.Delivered,
		"undeliverable": len(st.Undeliverable) - len(before.Undeliverable), "through": st.Through})
	fmt.Fprintln(e.Out, string(out))
	if runErr != nil && (!o.Follow || !errors.Is(runErr, context.Canceled)) {
		return exitf(exitcode.Failed, "publishing session %s to %s stopped before the end of its ledger: %v; run the command again to go on", rec.ID, t.Redacted(), runErr)
	}
	return undeliverableExit(rec.ID, st.Undeliverable, ob.StatePath())
}

// splitEvents separates the amqp:// destinations of --events from the
// others (files and descriptors, written by the pipeline's sinks).
func splitEvents(dests []string) (others []string, targets []amqpsink.Target, err error) {
	for _, d := range dests {
		if !amqpsink.IsURL(d) {
			others = append(others, d)
			continue
		}
		t, err := parseAMQP("--events", d)
		if err != nil {
			return nil, nil, err
		}
		targets = append(targets, t)
	}
	return others, targets, nil
}

// liveAMQP publishes beside a run: one outbox per amqp:// destination,
// started when the session exists and given amqpDrain after its end.
type liveAMQP struct {
	e       *env
	targets []amqpsink.Target
	root    string

	mu      sync.Mutex
	id      string
	logF    *os.File
	runs    []*amqpRun
	openErr []error
}

type amqpRun struct {
	t      amqpsink.Target
	ob     *outbox.Outbox
	p      *amqpsink.Publisher
	cancel context.CancelFunc
	done   chan error
}

func newLiveAMQP(e *env, targets []amqpsink.Target, root string) *liveAMQP {
	if len(targets) == 0 {
		return nil
	}
	return &liveAMQP{e: e, targets: targets, root: root}
}

func (l *liveAMQP) hook() func(id, dir string) {
	if l == nil {
		return nil
	}
	return l.onSession
}

func (l *liveAMQP) onSession(id, _ string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id = id
	var log *slog.Logger
	l.logF, log = openSessionLog(l.root, id)
	for _, t := range l.targets {
		ob, p, err := openAMQPOutbox(l.root, id, fleet.MachineName(l.e.Getenv), t, log, l.e.Now)
		if err != nil {
			l.openErr = append(l.openErr, err)
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		r := &amqpRun{t: t, ob: ob, p: p, cancel: cancel, done: make(chan error, 1)}
		go func() { r.done <- ob.Run(ctx) }()
		l.runs = append(l.runs, r)
	}
}

// finish lets each outbox publish what the ledger holds for up to drain,
// then stops it, and says on stderr what is still owed.
func (l *liveAMQP) finish(drain time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logF != nil {
		defer l.logF.Close()
	}
	for _, err := range l.openErr {
		fmt.Fprintf(l.e.Err, "lifeloop: warning: --events amqp: %v\n", err)
	}
	deadline := time.After(drain)
	for _, r := range l.runs {
		r.ob.Finish()
	}
	for _, r := range l.runs {
		var err error
		select {
		case err = <-r.done:
		case <-deadline:
			r.cancel()
			err = <-r.done
			if errors.Is(err, context.Canceled) {
				err = fmt.Errorf("the broker did not confirm them within %s", drain)
			}
		}
		r.cancel()
		_ = r.ob.Close()
		_ = r.p.Close()
		if err != nil {
			fmt.Fprintf(l.e.Err, "lifeloop: warning: HCP events of session %s not all published to %s: %v; publish them with `lifeloop publish %s --events URL`\n", l.id, r.t.Redacted(), err, l.id)
		}
	}
}

// chainHooks calls each non-nil hook in turn.
func chainHooks(hooks ...func(id, dir string)) func(id, dir string) {
	var hs []func(id, dir string)
	for _, h := range hooks {
		if h != nil {
			hs = append(hs, h)
		}
	}
	if len(hs) == 0 {
		return nil
	}
	return func(id, dir string) {
		for _, h := range hs {
			h(id, dir)
		}
	}
}
