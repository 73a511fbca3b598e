package amqpsink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ConsumerStateSchema is the schema of the consumer's state file.
const ConsumerStateSchema = "lifeloop.hcp-consumer.v1"

// DefaultPrefetch is how many unacknowledged messages the broker sends
// ahead; they are processed, persisted and acknowledged as one batch.
const DefaultPrefetch = 256

// ReorderWait is how long an event that arrived ahead of its session's
// next sequence waits for the events before it (seed 001: buffer and
// reorder). Then processing goes on past the gap with a warning — or,
// for a session whose session_created never came, the events are
// dead-lettered.
const ReorderWait = 2 * time.Second

// A batch gathers the deliveries that arrive within batchGap of each
// other, for at most batchLinger after the first.
const (
	batchGap    = 500 * time.Microsecond
	batchLinger = 10 * time.Millisecond
)

// ConsumerConfig says what to consume and where its state and output go.
type ConsumerConfig struct {
	Target Target
	// Queue is the durable queue to consume (declared, and bound to the
	// target's exchange with its binding key when there is one).
	Queue string
	// DeadLetter is the durable queue that takes messages that are not
	// HCP events or belong to no known session (default Queue+".dead").
	DeadLetter string
	// StateDir holds the state file (consumer-<queue>.json, 0600).
	StateDir string
	// OutPath is the NDJSON output file ("" or "-": Out).
	OutPath string
	// Out is the output when OutPath is "" or "-".
	Out io.Writer
	// Prefetch is the batch bound (default DefaultPrefetch).
	Prefetch int
	// BatchWait, when set, makes a batch gather every delivery that
	// arrives within BatchWait of its first, not only those that follow
	// closely: fewer state writes (each an fsync) for a bounded delay,
	// for a reader of many quiet sessions (the fleet view).
	BatchWait time.Duration
	// Logger gets one line per dead letter, gap, and outage.
	Logger *slog.Logger
	// OnBatch, when set, is called after each batch was acknowledged,
	// with the number of messages it acknowledged (tests and benchmarks).
	OnBatch func(processed int)
	// OnSide, when set, is given the body of each side message (AMQP
	// type SideType: a machine's heartbeat) as its batch is processed.
	OnSide func(body []byte)
}

// SideType is the AMQP type of the messages that travel with a
// machine's events but are not HCP events (lifeloop's fleet heartbeat,
// docs/fleet.md). The consumer acknowledges them with their batch and
// hands them to OnSide; it neither writes nor dead-letters them.
const SideType = "lifeloop.heartbeat"

// ConsumerState is the consumer's state file: per session, the last
// sequence processed, and how far the output file holds processed events.
type ConsumerState struct {
	Schema   string            `json:"schema"`
	Queue    string            `json:"queue"`
	Sessions map[string]uint64 `json:"sessions"`
	// OutOffset is the size of the output file after the last batch
	// persisted; a longer file was written by a consumer that died before
	// persisting, and is cut back to it (those events are redelivered).
	OutOffset int64 `json:"out_offset"`
	// Processed, Duplicates, Gaps and DeadLetters count since the state
	// was created.
	Processed   uint64    `json:"processed"`
	Duplicates  uint64    `json:"duplicates"`
	Gaps        uint64    `json:"gaps"`
	DeadLetters uint64    `json:"dead_letters"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Consumer is seed 001's caller side on one queue.
type Consumer struct {
	cfg       ConsumerConfig
	log       *slog.Logger
	statePath string
	state     ConsumerState
	out       io.Writer
	outFile   *os.File
	lock      *os.File
	// held are, per session, the events that arrived ahead of their
	// turn (unacknowledged, in sequence order).
	held map[string][]held
}

// OpenConsumer reads (or starts) the state, takes the state's lock, and
// opens the output, cutting an output file back to what the state says
// was processed.
func OpenConsumer(cfg ConsumerConfig) (*Consumer, error) {
	if cfg.Queue == "" {
		return nil, errors.New("consume: a queue is required")
	}
	if cfg.DeadLetter == "" {
		cfg.DeadLetter = cfg.Queue + ".dead"
	}
	if cfg.Prefetch <= 0 {
		cfg.Prefetch = DefaultPrefetch
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(cfg.StateDir, statedir.DirPerm); err != nil {
		return nil, fmt.Errorf("consume: state folder: %w", err)
	}
	c := &Consumer{cfg: cfg, log: log, statePath: filepath.Join(cfg.StateDir, "consumer-"+safeName(cfg.Queue)+".json")}
	lock, err := os.OpenFile(c.statePath+".lock", os.O_CREATE|os.O_RDWR, statedir.FilePerm)
	if err != nil {
		return nil, fmt.Errorf("consume: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("consume: another consumer uses %s; stop it first", c.statePath)
		}
		return nil, fmt.Errorf("consume: lock %s: %w", c.statePath, err)
	}
	c.lock = lock
	c.state = ConsumerState{Schema: ConsumerStateSchema, Queue: cfg.Queue, Sessions: map[string]uint64{}}
	b, err := os.ReadFile(c.statePath)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		_ = c.Close()
		return nil, fmt.Errorf("consume: %w", err)
	default:
		if err := json.Unmarshal(b, &c.state); err != nil || c.state.Schema != ConsumerStateSchema {
			_ = c.Close()
			return nil, fmt.Errorf("consume: %s is not a %s state file", c.statePath, ConsumerStateSchema)
		}
		if c.state.Sessions == nil {
			c.state.Sessions = map[string]uint64{}
		}
	}
	if cfg.OutPath == "" || cfg.OutPath == "-" {
		c.out = cfg.Out
		return c, nil
	}
	f, err := os.OpenFile(cfg.OutPath, os.O_CREATE|os.O_RDWR, statedir.FilePerm)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("consume: --out: %w", err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() > c.state.OutOffset {
		log.Warn("consume: output holds events the last run did not persist; cutting it back (they are redelivered)", "out", cfg.OutPath, "bytes", st.Size()-c.state.OutOffset)
		err = f.Truncate(c.state.OutOffset)
	} else if err == nil && st.Size() < c.state.OutOffset {
		log.Warn("consume: output is shorter than the state says; appending from its end", "out", cfg.OutPath)
		c.state.OutOffset = st.Size()
	}
	if err == nil {
		_, err = f.Seek(c.state.OutOffset, io.SeekStart)
	}
	if err != nil {
		_ = f.Close()
		_ = c.Close()
		return nil, fmt.Errorf("consume: --out: %w", err)
	}
	c.outFile, c.out = f, f
	return c, nil
}

// State returns a copy of the state.
func (c *Consumer) State() ConsumerState {
	s := c.state
	s.Sessions = make(map[string]uint64, len(c.state.Sessions))
	for k, v := range c.state.Sessions {
		s.Sessions[k] = v
	}
	return s
}

// Close closes the output and releases the lock.
func (c *Consumer) Close() error {
	if c.outFile != nil {
		_ = c.outFile.Close()
		c.outFile = nil
	}
	if c.lock != nil {
		_ = c.lock.Close()
		c.lock = nil
	}
	return nil
}

// Run consumes until ctx is done, reconnecting with backoff while the
// broker is away (one log line per outage). It returns nil when ctx
// ends, or an error that retrying cannot fix (the state or output cannot
// be written).
func (c *Consumer) Run(ctx context.Context) error {
	wait := 200 * time.Millisecond
	var outage time.Time
	for {
		err := c.session(ctx, func() {
			if !outage.IsZero() {
				c.log.Info("consume: broker back", "target", c.cfg.Target.Redacted(), "down_for", time.Since(outage).Round(time.Millisecond).String())
				outage = time.Time{}
			}
			wait = 200 * time.Millisecond
		})
		if ctx.Err() != nil {
			return nil
		}
		var fatal *fatalError
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if outage.IsZero() {
			outage = time.Now()
			c.log.Warn("consume: broker unavailable; retrying with backoff", "target", c.cfg.Target.Redacted(), "err", errString(err))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(2*wait, DefaultMaxBackoff)
	}
}

type fatalError struct{ err error }

func (f *fatalError) Error() string { return f.err.Error() }

func errString(err error) string {
	if err == nil {
		return "connection closed"
	}
	return cleanErr(err)
}

// session consumes over one connection until it breaks or ctx is done.
func (c *Consumer) session(ctx context.Context, connected func()) error {
	conn, ch, err := dial(c.cfg.Target)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	var dl *amqp.Channel
	var deliveries <-chan amqp.Delivery
	err = conn.Within(CallTimeout, func() error {
		if _, err := ch.QueueDeclare(c.cfg.Queue, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare queue %s: %w", c.cfg.Queue, err)
		}
		if c.cfg.Target.Exchange != "" {
			if err := ch.QueueBind(c.cfg.Queue, c.cfg.Target.BindingKey, c.cfg.Target.Exchange, false, nil); err != nil {
				return fmt.Errorf("bind queue %s: %w", c.cfg.Queue, err)
			}
		}
		if _, err := ch.QueueDeclare(c.cfg.DeadLetter, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare queue %s: %w", c.cfg.DeadLetter, err)
		}
		// A second channel, in confirm mode, publishes dead letters.
		var err error
		dl, err = conn.Channel()
		if err == nil {
			err = dl.Confirm(false)
		}
		if err != nil {
			return fmt.Errorf("dead-letter channel: %w", err)
		}
		if err := ch.Qos(c.cfg.Prefetch, 0, false); err != nil {
			return err
		}
		deliveries, err = ch.ConsumeWithContext(ctx, c.cfg.Queue, "", false, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("consume %s: %w", c.cfg.Queue, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	connected()
	// Held deliveries belong to the previous channel: the broker sends
	// them again.
	c.held = map[string][]held{}
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	tick := time.NewTicker(ReorderWait / 8)
	defer tick.Stop()
	for {
		var batch []amqp.Delivery
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if len(c.held) > 0 {
				if err := c.process(ctx, dl, nil, time.Now()); err != nil {
					return err
				}
			}
			continue
		case e := <-closed:
			if e == nil {
				return errors.New("connection closed")
			}
			return e
		case d, ok := <-deliveries:
			if !ok {
				return errors.New("the broker closed the consumer")
			}
			batch = append(batch, d)
		}
		// The client hands deliveries over one at a time: gather those
		// that follow closely (each within batchGap, all within
		// batchLinger) so that one write, fsync and ack cover them.
		gapWait, lingerWait := batchGap, batchLinger
		if c.cfg.BatchWait > 0 {
			gapWait, lingerWait = c.cfg.BatchWait, c.cfg.BatchWait
		}
		linger := time.NewTimer(lingerWait)
	more:
		for len(batch) < c.cfg.Prefetch {
			gap := time.NewTimer(gapWait)
			select {
			case d, ok := <-deliveries:
				gap.Stop()
				if !ok {
					break more
				}
				batch = append(batch, d)
			case <-gap.C:
				break more
			case <-linger.C:
				gap.Stop()
				break more
			}
		}
		linger.Stop()
		if err := c.process(ctx, dl, batch, time.Now()); err != nil {
			return err
		}
	}
}

// held is an event that arrived ahead of its session's next sequence:
// kept, unacknowledged, until the events before it arrive or
// ReorderWait passes.
type held struct {
	d    amqp.Delivery
	ev   hcp.Envelope
	line []byte
	at   time.Time
}

// process handles one batch (possibly empty: then only the held events
// whose wait is over): writes the events that are next in their
// session's sequence — and the held ones they unblock — publishes the
// dead letters (confirmed), persists the state, then acknowledges what
// it handled. Nothing is acknowledged before the state that covers it is
// on disk; held events stay unacknowledged.
func (c *Consumer) process(ctx context.Context, dl *amqp.Channel, batch []amqp.Delivery, now time.Time) error {
	var out bytes.Buffer
	var done []amqp.Delivery
	st := c.State()
	deadLetter := func(d amqp.Delivery, reason string) error {
		if err := c.deadLetter(ctx, dl, d, reason); err != nil {
			return err
		}
		st.DeadLetters++
		done = append(done, d)
		return nil
	}
	apply := func(h held) {
		id, seq := h.ev.SessionID, h.ev.Payload.Sequence
		last := st.Sessions[id]
		if seq <= last {
			st.Duplicates++
			done = append(done, h.d)
			return
		}
		if seq != last+1 {
			st.Gaps++
			c.log.Warn("consume: gap in a session's sequence; processing goes on", "session", id, "last_processed_sequence", last, "sequence", seq)
		}
		out.Write(h.line)
		out.WriteByte('\n')
		st.Sessions[id] = seq
		st.Processed++
		done = append(done, h.d)
	}
	// unblock applies the held events of session id that are now next.
	unblock := func(id string) {
		hs := c.held[id]
		for len(hs) > 0 && hs[0].ev.Payload.Sequence <= st.Sessions[id]+1 {
			apply(hs[0])
			hs = hs[1:]
		}
		if len(hs) == 0 {
			delete(c.held, id)
		} else {
			c.held[id] = hs
		}
	}
	for _, d := range batch {
		if d.Type == SideType {
			if c.cfg.OnSide != nil {
				c.cfg.OnSide(d.Body)
			}
			done = append(done, d)
			continue
		}
		ev, err := hcp.Decode(d.Body)
		var line bytes.Buffer
		if err == nil {
			err = json.Compact(&line, d.Body)
		}
		if err != nil {
			if err := deadLetter(d, err.Error()); err != nil {
				return err
			}
			continue
		}
		h := held{d: d, ev: ev, line: line.Bytes(), at: now}
		id, seq := ev.SessionID, ev.Payload.Sequence
		last, known := st.Sessions[id]
		switch {
		case known && seq <= last+1, !known && ev.Payload.EventType == hcp.SessionCreated:
			apply(h)
			unblock(id)
		default:
			// Ahead of its session (or of a session not created yet):
			// wait for what comes before it.
			c.hold(h)
		}
	}
	for id, hs := range c.held {
		if now.Sub(hs[0].at) < ReorderWait {
			continue
		}
		if _, known := st.Sessions[id]; !known {
			for _, h := range hs {
				if err := deadLetter(h.d, fmt.Sprintf("unknown session %q: its first event (session_created) was never processed", id)); err != nil {
					return err
				}
			}
			delete(c.held, id)
			continue
		}
		// The events before them did not come: go on past the gap.
		for _, h := range hs {
			apply(h)
		}
		delete(c.held, id)
	}
	if len(done) == 0 {
		return nil
	}
	if out.Len() > 0 {
		if _, err := c.out.Write(out.Bytes()); err != nil {
			return &fatalError{fmt.Errorf("consume: write the output: %w", err)}
		}
		if c.outFile != nil {
			if err := c.outFile.Sync(); err != nil {
				return &fatalError{fmt.Errorf("consume: sync the output: %w", err)}
			}
			st.OutOffset += int64(out.Len())
		}
	}
	st.UpdatedAt = time.Now().UTC()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return &fatalError{err}
	}
	if err := statedir.WriteFileAtomic(c.statePath, append(b, '\n')); err != nil {
		return &fatalError{fmt.Errorf("consume: persist the state: %w", err)}
	}
	c.state = st
	for _, d := range done {
		if err := d.Ack(false); err != nil {
			return err
		}
	}
	if c.cfg.OnBatch != nil {
		c.cfg.OnBatch(len(done))
	}
	return nil
}

// hold keeps h in its session's held events, in sequence order; a second
// copy of a held sequence is acknowledged with the first.
func (c *Consumer) hold(h held) {
	hs := c.held[h.ev.SessionID]
	i := sort.Search(len(hs), func(i int) bool { return hs[i].ev.Payload.Sequence >= h.ev.Payload.Sequence })
	if i < len(hs) && hs[i].ev.Payload.Sequence == h.ev.Payload.Sequence {
		// The same event twice: keep the first, the copy is a duplicate
		// the broker will not send again once acknowledged.
		_ = h.d.Ack(false)
		return
	}
	hs = append(hs, held{})
	copy(hs[i+1:], hs[i:])
	hs[i] = h
	c.held[h.ev.SessionID] = hs
}

// deadLetter publishes d to the dead-letter queue (persistent, confirmed)
// with the reason in a header, and logs one line.
func (c *Consumer) deadLetter(ctx context.Context, dl *amqp.Channel, d amqp.Delivery, reason string) error {
	if len(reason) > 300 {
		reason = reason[:300] + "…"
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultConfirmTimeout)
	defer cancel()
	dc, err := dl.PublishWithDeferredConfirmWithContext(ctx, "", c.cfg.DeadLetter, false, false, amqp.Publishing{
		ContentType:  d.ContentType,
		DeliveryMode: amqp.Persistent,
		MessageId:    d.MessageId,
		Timestamp:    time.Now(),
		Headers:      amqp.Table{"x-lifeloop-reason": reason, "x-lifeloop-queue": c.cfg.Queue},
		Body:         d.Body,
	})
	if err != nil {
		return err
	}
	if ok, err := dc.WaitContext(ctx); err != nil || !ok {
		return fmt.Errorf("dead-letter queue %s did not confirm (%v)", c.cfg.DeadLetter, errString(err))
	}
	c.log.Warn("consume: message dead-lettered", "queue", c.cfg.DeadLetter, "message_id", d.MessageId, "reason", reason)
	return nil
}

// safeName keeps a queue name usable in a file name.
func safeName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		ok := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-' || ch == '_'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}
