// Package ratelog bounds a log: a slog.Handler that passes the first
// record of each kind (level and message) per interval and counts the
// rest, so a fault that repeats every tick costs one line per interval,
// not one per occurrence. Messages with an unlimited prefix (moments a
// person asked for, each worth its line) always pass.
package ratelog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// DefaultInterval is the interval New uses when given zero.
const DefaultInterval = 10 * time.Second

type kind struct {
	level slog.Level
	msg   string
}

type window struct {
	start      time.Time
	suppressed int
}

// state is shared by a handler and those derived from it (WithAttrs,
// WithGroup), so one kind is limited however it was logged.
type state struct {
	mu        sync.Mutex
	every     time.Duration
	now       func() time.Time
	seen      map[kind]*window
	unlimited []string
}

// Handler is the rate-limiting slog.Handler.
type Handler struct {
	next slog.Handler
	st   *state
}

// New limits next to one record of each kind per interval (DefaultInterval
// when zero). The first record after a quiet interval carries a
// "suppressed" attribute counting the records dropped before it. now is
// the clock (time.Now when nil). Records whose message starts with one
// of unlimited are never limited.
func New(next slog.Handler, interval time.Duration, now func() time.Time, unlimited ...string) *Handler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if now == nil {
		now = time.Now
	}
	return &Handler{next: next, st: &state{every: interval, now: now, seen: make(map[kind]*window), unlimited: unlimited}}
}

// Enabled is next's.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle passes r on unless a record of its kind passed within the
// interval, or its message has an unlimited prefix.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if h.st.isUnlimited(r.Message) {
		return h.next.Handle(ctx, r)
	}
	k := kind{r.Level, r.Message}
	now := h.st.now()
	h.st.mu.Lock()
	w, ok := h.st.seen[k]
	if ok && now.Sub(w.start) < h.st.every {
		w.suppressed++
		h.st.mu.Unlock()
		return nil
	}
	suppressed := 0
	if ok {
		suppressed = w.suppressed
		w.start, w.suppressed = now, 0
	} else {
		if len(h.st.seen) > 1024 {
			// Messages are constants; this only bounds a misuse.
			clear(h.st.seen)
		}
		h.st.seen[k] = &window{start: now}
	}
	h.st.mu.Unlock()
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return h.next.Handle(ctx, r)
}

// isUnlimited reports whether msg has an unlimited prefix.
func (st *state) isUnlimited(msg string) bool {
	for _, p := range st.unlimited {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// WithAttrs derives a handler sharing the limits.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(as), st: h.st}
}

// WithGroup derives a handler sharing the limits.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), st: h.st}
}
