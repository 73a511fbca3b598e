package otlpexport

import (
	"context"
	"strconv"
	"sync"

	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/internal/outbox"
)

// Outbox is the outbox configuration that exports session id's ledger
// (ledgerPath) through x, its cursor in statePath; target names the
// destination in the cursor file. The mapper is fed every entry of the
// ledger from the first (the outbox replays those its cursor passed, so
// spans still open at a restart are rebuilt and sent when they end).
// Entries travel in windows of up to outbox.DefaultWindow: each window is
// one request per signal, sent when the outbox waits for it.
func Outbox(x *Exporter, id, ledgerPath, statePath, target string) (outbox.Config, *otelmap.Mapper) {
	m := otelmap.New(id)
	s := &sender{x: x, pending: map[string]*otelmap.Output{}}
	return outbox.Config{
		LedgerPath: ledgerPath,
		StatePath:  statePath,
		Target:     target,
		Expand: func(e ledger.Entry, replay bool) ([]outbox.Message, error) {
			out := m.Map(e)
			if replay || out.Empty() {
				return nil, nil
			}
			key := id + "/" + strconv.FormatUint(e.Sequence, 10)
			s.mu.Lock()
			s.pending[key] = &out
			s.mu.Unlock()
			return []outbox.Message{{ID: key}}, nil
		},
		Send: s.send,
	}, m
}

// sender gathers the entries the outbox sends into one batch, exported
// when the outbox first waits for one of them.
type sender struct {
	x *Exporter

	mu      sync.Mutex
	pending map[string]*otelmap.Output
	cur     *batch
}

type batch struct {
	keys []string
	once sync.Once
	err  error
	b    Batch
}

func (s *sender) send(_ context.Context, _ []byte, key string) (func(context.Context) error, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		s.cur = &batch{}
	}
	b := s.cur
	b.keys = append(b.keys, key)
	return func(ctx context.Context) error { return s.flush(ctx, b) }, nil
}

// flush exports batch b once; entries sent again after a failure form a
// new batch, which skips the signals that got through.
func (s *sender) flush(ctx context.Context, b *batch) error {
	b.once.Do(func() {
		s.mu.Lock()
		if s.cur == b {
			s.cur = nil
		}
		var out otelmap.Output
		for _, k := range b.keys {
			if o := s.pending[k]; o != nil {
				out.Spans = append(out.Spans, o.Spans...)
				out.Logs = append(out.Logs, o.Logs...)
				out.Metrics = append(out.Metrics, o.Metrics...)
			}
		}
		s.mu.Unlock()
		b.b.Out = out
		b.err = s.x.Export(ctx, &b.b)
		s.mu.Lock()
		for _, k := range b.keys {
			o := s.pending[k]
			if o == nil {
				continue
			}
			if b.err == nil {
				delete(s.pending, k)
				continue
			}
			// What got through is not sent again.
			if b.b.spans {
				o.Spans = nil
			}
			if b.b.logs {
				o.Logs = nil
			}
			if b.b.measures {
				o.Metrics = nil
			}
		}
		s.mu.Unlock()
	})
	return b.err
}
