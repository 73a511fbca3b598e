// Package sink writes receipts to event destinations (`--events`): a file
// the sink appends NDJSON to, or an inherited file descriptor (`fd:N`),
// in lifeloop's own receipt format, projected to OrgLoop lifecycle
// events, or projected to HCP L2 events.
//
// A sink never blocks the pipeline: Write only enqueues into a bounded
// queue that one goroutine per sink drains; when the queue is full the
// receipt is dropped and counted. A failing destination is reported once
// per failure streak — one log line when the streak starts, one when it
// ends, and one warning handed out by TakeWarnings — never once per
// receipt.
//
// Webhook (webhook.go) is the HTTP poster of OrgLoop webhook deliveries;
// those are driven from the ledger by internal/outbox, not by a queue
// here, so that they survive the receiver and lifeloop restarting.
package sink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"golang.org/x/sys/unix"
)

// Format selects how receipts are written.
type Format string

// Formats.
const (
	// FormatLifeloop writes each receipt as it is, one JSON object a line.
	FormatLifeloop Format = "lifeloop"
	// FormatOrgLoop writes the OrgLoop lifecycle event of each receipt
	// that has one (contract.ProjectOrgLoop) and skips the others.
	FormatOrgLoop Format = "orgloop"
	// FormatHCP writes the HCP L2 events of each receipt (internal/hcp;
	// none for most ticks), numbered as a replay of the ledger numbers
	// them.
	FormatHCP Format = "hcp"
)

// Formats lists every format.
var Formats = []Format{FormatLifeloop, FormatOrgLoop, FormatHCP}

// ParseFormat parses a --format value.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case FormatLifeloop, FormatOrgLoop, FormatHCP:
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown event format %q; use lifeloop, orgloop or hcp", s)
}

// DefaultQueueSize is the queue length used when Options.QueueSize is 0.
const DefaultQueueSize = 256

// Warning codes handed out by TakeWarnings.
const (
	CodeWriteFailed = "sink_write_failed"
	CodeDropped     = "sink_dropped"
)

// Options configure a sink. Zero values select the defaults.
type Options struct {
	// SessionID and Source feed the OrgLoop projection (see
	// contract.OrgLoopOptions).
	SessionID string
	Source    string
	// OrgLoopHarness is the session's harness in OrgLoop's vocabulary.
	OrgLoopHarness string
	// LedgerPath is the session's ledger: the hcp format reads the
	// receipts it already holds (a continued session) so that its
	// sequence goes on where a replay of the ledger would be.
	LedgerPath string
	// QueueSize bounds the receipts waiting to be written (default
	// DefaultQueueSize).
	QueueSize int
	// Logger receives the failure-streak lines; nil discards them.
	Logger *slog.Logger
}

// Sink is one open event destination. Its methods are safe for concurrent
// use.
type Sink struct {
	dest   string
	format Format
	opts   Options
	w      io.WriteCloser
	closeW bool
	log    *slog.Logger

	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	closed   bool
	queue    chan contract.LifecycleReceipt
	done     chan struct{}
	failures uint64 // writes that failed
	hcp      *hcp.Projector
	dropped  uint64 // receipts dropped because the queue was full or the sink closed
	pending  []contract.Warning
	reported uint64 // dropped count already reported
}

// Open opens dest — a file path (created 0600 if missing, appended to) or
// "fd:N" (an already open descriptor, e.g. fd:3 passed by the parent) —
// and starts the sink's writer goroutine. Close stops it.
func Open(dest string, format Format, o Options) (*Sink, error) {
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, err
	}
	w, closeW, err := openDest(dest)
	if err != nil {
		return nil, err
	}
	return newSink(dest, format, o, w, closeW), nil
}

// primeHCP returns the HCP projector of the session, fed what its ledger
// already holds. A damaged line is skipped, as a replay skips it; a
// ledger that cannot be read is logged, since the events' sequence then
// starts over where a replay of the ledger would not.
func primeHCP(o Options, log *slog.Logger) *hcp.Projector {
	p := hcp.NewProjector(o.SessionID)
	p.SetMachine(hcp.MachineName(os.Getenv))
	if o.LedgerPath == "" {
		return p
	}
	for e, err := range ledger.ReadSince(o.LedgerPath, 0) {
		var le *ledger.LineError
		if errors.As(err, &le) {
			continue
		}
		if err != nil {
			log.Warn("sink: hcp: cannot read the session's ledger; event sequence restarts", "ledger", o.LedgerPath, "err", err.Error())
			break
		}
		p.Project(e.Receipt)
	}
	return p
}

func newSink(dest string, format Format, o Options, w io.WriteCloser, closeW bool) *Sink {
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Sink{
		dest: dest, format: format, opts: o, w: w, closeW: closeW, log: log,
		queue: make(chan contract.LifecycleReceipt, o.QueueSize),
		done:  make(chan struct{}),
	}
	if format == FormatHCP {
		s.hcp = primeHCP(o, log)
	}
	go s.run()
	return s
}

func openDest(dest string) (io.WriteCloser, bool, error) {
	if rest, ok := strings.CutPrefix(dest, "fd:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil, false, fmt.Errorf("event sink %q: want fd:N with N a file descriptor number", dest)
		}
		var st unix.Stat_t
		if err := unix.Fstat(n, &st); err != nil {
			return nil, false, fmt.Errorf("event sink %q: descriptor %d is not open (%w); pass it from the parent, e.g. `3>events.ndjson`", dest, n, err)
		}
		// The standard descriptors stay open for the rest of the process.
		return os.NewFile(uintptr(n), dest), n > 2, nil
	}
	if dest == "" {
		return nil, false, errors.New("event sink: empty destination; give a file path or fd:N")
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("event sink %q: %w; check that its folder exists and is writable", dest, err)
	}
	return f, true, nil
}

// Write enqueues r without blocking. When the queue is full, or the sink
// is closed, r is dropped and counted.
func (s *Sink) Write(r contract.LifecycleReceipt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.dropped++
		return
	}
	select {
	case s.queue <- r:
	default:
		s.dropped++
	}
}

// run is the sink's only writer; it exits when the queue is closed and
// drained.
func (s *Sink) run() {
	defer close(s.done)
	failing := false
	var streak uint64
	for r := range s.queue {
		line, skip, err := s.encode(r)
		if skip {
			continue
		}
		if err == nil {
			_, err = s.w.Write(line)
		}
		if err != nil {
			s.mu.Lock()
			s.failures++
			if !failing {
				s.pending = append(s.pending, contract.Warning{
					Code:    CodeWriteFailed,
					Message: fmt.Sprintf("event sink %s failed; receipts for it are lost until it recovers: %s", s.dest, errText(err)),
				})
			}
			s.mu.Unlock()
			if !failing {
				s.log.Warn("event sink failing", "dest", s.dest, "err", errText(err))
			}
			failing = true
			streak++
			continue
		}
		if failing {
			s.log.Info("event sink recovered", "dest", s.dest, "failed_writes", streak)
			failing, streak = false, 0
		}
	}
}

// errText keeps error text short and free of receipt content.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	s := err.Error()
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

func (s *Sink) encode(r contract.LifecycleReceipt) (line []byte, skip bool, err error) {
	var v any = r
	if s.format == FormatHCP {
		for _, ev := range s.hcp.Project(r) {
			b, err := json.Marshal(ev)
			if err != nil {
				return nil, false, err
			}
			line = append(append(line, b...), '\n')
		}
		return line, len(line) == 0, nil
	}
	if s.format == FormatOrgLoop {
		ev, err := contract.ProjectOrgLoop(r, contract.OrgLoopOptions{SessionID: s.opts.SessionID, Source: s.opts.Source, Harness: s.opts.OrgLoopHarness})
		if errors.Is(err, contract.ErrNoOrgLoopPhase) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		v = ev
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false, err
	}
	return append(b, '\n'), false, nil
}

// Failures returns how many writes have failed so far.
func (s *Sink) Failures() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures
}

// Dropped returns how many receipts were dropped because the queue was
// full or the sink was closed.
func (s *Sink) Dropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// TakeWarnings returns, once, the warnings raised since the last call:
// one per failure streak that started, and one for receipts dropped
// since the last report. A router attaches them to its next receipt.
func (s *Sink) TakeWarnings() []contract.Warning {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.pending
	s.pending = nil
	if d := s.dropped - s.reported; d > 0 {
		w = append(w, contract.Warning{
			Code:    CodeDropped,
			Message: fmt.Sprintf("event sink %s dropped %d receipts: its queue was full", s.dest, d),
		})
		s.reported = s.dropped
	}
	return w
}

// Close stops accepting receipts, writes those already queued, and
// closes the destination. It waits at most until ctx is done; a sink
// still stuck in a write then is abandoned (its goroutine ends when the
// write returns) and Close reports how many receipts were queued. Close
// is idempotent.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	select {
	case <-s.done:
	case <-ctx.Done():
		return fmt.Errorf("event sink %s: still writing when the close deadline passed; %d receipts may be lost", s.dest, len(s.queue))
	}
	s.closeOnce.Do(func() {
		if s.closeW {
			if err := s.w.Close(); err != nil {
				s.closeErr = fmt.Errorf("event sink %s: %w", s.dest, err)
			}
		}
	})
	return s.closeErr
}
