package telemetry

import "context"

// A tailBatch carries consecutive tail events from the tailer's goroutine
// to [Watch]'s in one channel send. The lines of its events are slices of
// arena, which is reused once the receiver hands the batch back on free:
// catching up on a large file then costs neither a channel send nor an
// allocation per line, and the memory in flight is bounded by
// tailBatches × tailArenaMax whatever the file's size.
type tailBatch struct {
	events []TailEvent
	arena  []byte
	free   chan<- *tailBatch
}

// release hands b back to its tailer; the receiver must not keep any of
// its lines afterwards.
func (b *tailBatch) release() {
	select {
	case b.free <- b:
	default: // cannot happen: free holds every batch; never block
	}
}

// Batch sizes. An arena starts small (a quiet session's transcript sends
// a line or two per batch) and doubles, up to tailArenaMax, each time one
// fills up.
const (
	tailBatches     = 4
	tailArenaMin    = 4 << 10
	tailArenaMax    = 256 << 10
	tailBatchEvents = 1024
)

// batcher is the tailer's side: it fills the current batch and sends it
// when it is full or the tailer has caught up.
type batcher struct {
	ctx  context.Context
	free chan *tailBatch
	send func(*tailBatch)
	cur  *tailBatch
	want int // arena size the next batch taken gets
}

func newBatcher(ctx context.Context, send func(*tailBatch)) *batcher {
	b := &batcher{ctx: ctx, free: make(chan *tailBatch, tailBatches), send: send, want: tailArenaMin}
	for range tailBatches {
		b.free <- &tailBatch{free: b.free}
	}
	return b
}

// take makes sure a batch is being filled; it waits for the receiver to
// hand one back, and reports false when ctx ended first.
func (b *batcher) take() bool {
	if b.cur != nil {
		return true
	}
	select {
	case c := <-b.free:
		c.events = c.events[:0]
		if cap(c.arena) < b.want {
			c.arena = make([]byte, 0, b.want)
		}
		c.arena = c.arena[:0]
		b.cur = c
		return true
	case <-b.ctx.Done():
		return false
	}
}

// keep copies line into the current batch's arena (tail's keep hook).
func (b *batcher) keep(line []byte) []byte {
	if !b.take() {
		return nil
	}
	if len(b.cur.arena)+len(line) > cap(b.cur.arena) {
		if len(b.cur.arena) > 0 {
			b.want = min(2*b.want, tailArenaMax)
			b.flush()
			if !b.take() {
				return nil
			}
		}
		if len(line) > cap(b.cur.arena) {
			// Longer than this arena: a copy of its own, and larger
			// arenas from the next batch on.
			b.want = min(2*b.want, tailArenaMax)
			return append([]byte(nil), line...)
		}
	}
	a := b.cur.arena
	start := len(a)
	a = append(a, line...)
	b.cur.arena = a
	return a[start:len(a):len(a)]
}

// event adds ev to the current batch (tail's sink).
func (b *batcher) event(ev TailEvent) {
	if !b.take() {
		return
	}
	b.cur.events = append(b.cur.events, ev)
	if len(b.cur.events) >= tailBatchEvents {
		b.flush()
	}
}

// flush sends the current batch, if it holds anything.
func (b *batcher) flush() {
	if b.cur == nil || len(b.cur.events) == 0 {
		return
	}
	c := b.cur
	b.cur = nil
	b.send(c)
}
