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

// Follower keeps a View current from an AMQP queue: the events file is
// replayed when it opens, then each batch the consumer writes to it is
// folded in.
type Follower struct {
	cons    *amqpsink.Consumer
	events  *os.File
	batches chan struct{}

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
	f := &Follower{view: NewView(), batches: make(chan struct{}, 1)}
	cons, err := amqpsink.OpenConsumer(amqpsink.ConsumerConfig{
		Target: cfg.Target, Queue: cfg.Queue, StateDir: cfg.Dir, OutPath: path,
		Logger: cfg.Logger, OnBatch: func(int) { f.readNew() },
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

// Close releases the consumer and the events file.
func (f *Follower) Close() error {
	err := f.cons.Close()
	_ = f.events.Close()
	return err
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
