package fleet

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// EventsName is the file, in a Follower's folder, that keeps every event
// taken from the queue (NDJSON, exactly once: the consumer's output), so
// a view started again rebuilds its rows before it reads the queue on.
const EventsName = "events.ndjson"

// Config says what a Follower reads.
type Config struct {
	Target amqpsink.Target
	// Queue is the durable queue of the fleet view (bind one of its own:
	// consumers sharing a queue each see part of the stream).
	Queue string
	// Dir holds the consumer's state and the events file (0700).
	Dir    string
	Logger *slog.Logger
}

// viewBatchWait is how long the view's consumer gathers a batch after
// its first event, so that one state write (with its fsync), one ack and
// one fold cover all that came meanwhile: many quiet sessions send their
// events one at a time, each its own batch without it. At 200 live
// sessions it takes the view from 4–6 % of a core to under 2 %, for a
// state change → row median of about 155 ms (BenchmarkFleetTopCPU,
// BenchmarkFleetStateToRow; docs/benchmarks.md).
const viewBatchWait = 150 * time.Millisecond

// Follower keeps a View current from an AMQP queue: the events file is
// replayed when it opens, then each batch the consumer writes to it is
// folded in.
type Follower struct {
	cfg     Config
	cons    *amqpsink.Consumer
	events  *os.File
	batches chan struct{}

	probeMu sync.Mutex // guards the probe's connection
	probe   *amqpsink.Conn
	probeCh *amqp.Channel

	mu     sync.Mutex // guards view and offset
	view   *View
	offset int64
}

// Open takes the view's folder (one Follower per folder at a time),
// rebuilds the rows from its events file and prepares the consumer.
// Nothing is read from the broker before Run.
func Open(cfg Config) (*Follower, error) {
	if err := os.MkdirAll(cfg.Dir, statedir.DirPerm); err != nil {
		return nil, fmt.Errorf("fleet view folder: %w", err)
	}
	path := filepath.Join(cfg.Dir, EventsName)
	f := &Follower{cfg: cfg, view: NewView(), batches: make(chan struct{}, 1)}
	cons, err := amqpsink.OpenConsumer(amqpsink.ConsumerConfig{
		Target: cfg.Target, Queue: cfg.Queue, StateDir: cfg.Dir, OutPath: path,
		Logger: cfg.Logger, OnBatch: func(int) { f.readNew() }, OnSide: f.heartbeat,
		BatchWait: viewBatchWait,
	})
	if err != nil {
		return nil, err
	}
	f.cons = cons
	if f.events, err = os.Open(path); err != nil {
		_ = cons.Close()
		return nil, fmt.Errorf("fleet view: %w", err)
	}
	f.readNew()
	return f, nil
}

// Run reads the queue until ctx ends; a broker away is waited for (the
// consumer reconnects with backoff), never an error.
func (f *Follower) Run(ctx context.Context) error { return f.cons.Run(ctx) }

// Batches signals (coalesced) each batch folded in.
func (f *Follower) Batches() <-chan struct{} { return f.batches }

// Rows is View.Rows under the follower's lock.
func (f *Follower) Rows(now time.Time, staleAfter time.Duration) []Row {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view.Rows(now, staleAfter)
}

// Close releases the consumer, the events file and the probe's
// connection.
func (f *Follower) Close() error {
	err := f.cons.Close()
	_ = f.events.Close()
	if f.probeMu.TryLock() { // else a probe still waits on the broker: its connection goes with the process
		f.dropProbe()
		f.probeMu.Unlock()
	}
	return err
}

// heartbeat folds in a machine's heartbeat (a side message of the
// queue); a body that is not one is dropped.
func (f *Follower) heartbeat(body []byte) {
	h, err := DecodeHeartbeat(body)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.view.Heartbeat(h)
	f.mu.Unlock()
}

// Backlog is what the broker says of the view's queue: the messages
// ready (not yet delivered to a consumer; those delivered and not yet
// acknowledged are not counted) and the consumers attached.
type Backlog struct {
	Ready, Consumers int
}

// probeTimeout bounds one Backlog.
const probeTimeout = 5 * time.Second

// Backlog asks the broker about the view's queue (a passive declare on
// a connection of the probe's own, kept between calls), within ctx and
// at most probeTimeout; a call the broker leaves hanging is given up,
// never waited on. An error says the broker did not answer, or the
// queue is not declared yet. Safe for concurrent use.
func (f *Follower) Backlog(ctx context.Context) (Backlog, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	type answer struct {
		q   amqp.Queue
		err error
	}
	res := make(chan answer, 1)
	go func() { // ends when the client's calls do (the dial bounded by probeTimeout)
		f.probeMu.Lock()
		defer f.probeMu.Unlock()
		q, err := f.passiveDeclare()
		if err != nil {
			f.dropProbe()
		}
		res <- answer{q, err}
	}()
	select {
	case a := <-res:
		if a.err != nil {
			return Backlog{}, a.err
		}
		return Backlog{Ready: a.q.Messages, Consumers: a.q.Consumers}, nil
	case <-ctx.Done():
		return Backlog{}, fmt.Errorf("the broker at %s did not answer within %s", f.cfg.Target.Redacted(), probeTimeout)
	}
}

// passiveDeclare runs under probeMu.
func (f *Follower) passiveDeclare() (amqp.Queue, error) {
	if f.probeCh == nil || f.probeCh.IsClosed() {
		f.dropProbe()
		conn, err := amqpsink.Dial(f.cfg.Target, "lifeloop fleet view probe", 0, probeTimeout)
		if err != nil {
			return amqp.Queue{}, fmt.Errorf("connect to %s: %w", f.cfg.Target.Redacted(), err)
		}
		var ch *amqp.Channel
		if err := conn.Within(probeTimeout, func() (err error) { ch, err = conn.Channel(); return err }); err != nil {
			_ = conn.Close()
			return amqp.Queue{}, err
		}
		f.probe, f.probeCh = conn, ch
	}
	var q amqp.Queue
	err := f.probe.Within(probeTimeout, func() (err error) {
		q, err = f.probeCh.QueueDeclarePassive(f.cfg.Queue, true, false, false, false, nil)
		return err
	})
	return q, err
}

func (f *Follower) dropProbe() {
	if f.probe != nil {
		_ = f.probe.Close()
	}
	f.probe, f.probeCh = nil, nil
}

// readNew folds in the whole lines the events file gained since the
// last read (the consumer writes a batch, persists its state, then calls
// this).
func (f *Follower) readNew() {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := bufio.NewReaderSize(io.NewSectionReader(f.events, f.offset, 1<<62), 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a partial line waits for its end
		}
		f.offset += int64(len(line))
		if e, err := hcp.Decode(bytes.TrimSpace(line)); err == nil {
			f.view.Apply(e)
		}
	}
	select {
	case f.batches <- struct{}{}:
	default:
	}
}
