package cli

import (
	"log/slog"
	"path/filepath"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

type consumeOptions struct {
	StateDir   string
	State      string
	Queue      string
	DeadLetter string
	Out        string
	Prefetch   int
}

func consumeCommand(e *env) *ucli.Command {
	var o consumeOptions
	return &ucli.Command{
		Name:      "consume",
		Usage:     "consume HCP events from an AMQP queue, exactly once per session and in order, as NDJSON",
		ArgsUsage: "URL",
		Description: "The caller side of the HCP L2 event stream (seed 001): takes events from the durable\n" +
			"queue --queue (declared, and bound to the URL's exchange when it names one), and writes\n" +
			"each session's events once, in sequence order, one JSON envelope a line, to --out\n" +
			"(a file, appended; - for stdout). Acknowledgements are manual: a batch is written, then\n" +
			"each session's last_processed_sequence is persisted in --state, then the batch is\n" +
			"acknowledged, so a consumer killed at any point and started again processes nothing\n" +
			"twice and loses nothing (an --out file is cut back to what the state covers; the rest\n" +
			"is redelivered). A redelivered event (sequence <= last_processed_sequence) is skipped\n" +
			"and acknowledged. An event ahead of its session's next sequence waits, unacknowledged,\n" +
			"up to 2 s for those before it (buffer and reorder); if they do not come, the gap is\n" +
			"logged as a warning and processing goes on. A message that is not an HCP event, or an\n" +
			"event of a session whose session_created never came within those 2 s, goes to the\n" +
			"dead-letter queue (--dead-letter, default QUEUE.dead) with its reason in the\n" +
			"x-lifeloop-reason header, with one log line. A machine's fleet heartbeat (AMQP type\n" +
			"lifeloop.heartbeat, docs/fleet.md) is not an event: it is acknowledged and not written.\n" +
			"It reconnects with backoff while the broker is away and runs until interrupted.\n\n" +
			"One consumer per queue: the state lock keeps a second one on the same --state out, and\n" +
			"consumers sharing a queue would each see part of a session's stream. To spread the load,\n" +
			"bind one queue per consumer with distinct binding keys (routing_key=...{session_id}).\n" +
			"With --out - (stdout) a consumer killed between writing a batch and persisting its state\n" +
			"writes that batch again when restarted; an --out file is exact.\n\n" +
			"URL: " + amqpURLHelp,
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.StringFlag{Name: "queue", Usage: "the durable `QUEUE` to consume", Destination: &o.Queue, Required: true},
			&ucli.StringFlag{Name: "state", Usage: "`DIR` of the consumer's state (default <state-dir>/consumers)", Destination: &o.State},
			&ucli.StringFlag{Name: "out", Usage: "NDJSON output `FILE` (appended), or - for stdout", Value: "-", Destination: &o.Out},
			&ucli.StringFlag{Name: "dead-letter", Usage: "dead-letter `QUEUE` (default QUEUE.dead)", Destination: &o.DeadLetter},
			&ucli.IntFlag{Name: "prefetch", Usage: "messages processed and acknowledged per batch at most", Value: amqpsink.DefaultPrefetch, Destination: &o.Prefetch},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("consume takes one broker URL (got %d arguments)", c.NArg())
			}
			t, err := parseAMQP("consume", c.Args().First())
			if err != nil {
				return err
			}
			if o.Prefetch < 1 || o.Prefetch > 65535 {
				return usageErrorf("--prefetch must be between 1 and 65535")
			}
			stateDir := o.State
			if stateDir == "" {
				root, err := statedir.Resolve(o.StateDir, e.Getenv)
				if err != nil {
					return exitf(exitcode.Failed, "%v", err)
				}
				stateDir = filepath.Join(root, "consumers")
			} else if stateDir, err = e.abs(stateDir); err != nil {
				return err
			}
			out := o.Out
			if out != "-" {
				if out, err = e.abs(out); err != nil {
					return err
				}
			}
			cons, err := amqpsink.OpenConsumer(amqpsink.ConsumerConfig{
				Target: t, Queue: o.Queue, DeadLetter: o.DeadLetter, StateDir: stateDir,
				OutPath: out, Out: e.Out, Prefetch: o.Prefetch,
				Logger: slog.New(slog.NewTextHandler(e.Err, nil)),
			})
			if err != nil {
				return exitf(exitcode.Failed, "%v", err)
			}
			defer func() { _ = cons.Close() }()
			ctx, stop := signalContext(c.Context)
			defer stop()
			if err := cons.Run(ctx); err != nil {
				return exitf(exitcode.Failed, "%v", err)
			}
			return nil
		},
	}
}
