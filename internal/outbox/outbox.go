// Package outbox delivers posts built from a session's receipts, reading
// them from the session's ledger: the ledger is the outbox, and a cursor
// file beside it records how far delivery got. Delivery therefore
// survives the receiver being down and lifeloop itself restarting, and it
// never sits in the path of the harness: it only reads the ledger.
//
// Each post is retried with exponential backoff until the receiver takes
// it (delivered) or refuses it for good (recorded as undeliverable, not
// retried); posts go out one at a time, in ledger order. The cursor is
// written after the answer, so a post whose answer was lost (a crash
// before the cursor write, a connection broken after the receiver took
// it) is sent again, with the same event id for the receiver to drop.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// StateSchema is the schema of the cursor file.
const StateSchema = "lifeloop.outbox.v1"

// Default backoff bounds, used when Config leaves them zero.
const (
	DefaultMinBackoff = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// DefaultWindow bounds the posts in flight when Config.Window is 0.
const DefaultWindow = 256

// ErrSkip, returned by Config.Build (or wrapped), says a receipt has no
// post; contract.ErrNoOrgLoopPhase counts as ErrSkip too.
var ErrSkip = errors.New("no post for this receipt")

// Config says what to deliver, from where, and how.
type Config struct {
	// LedgerPath is the session's receipts.jsonl.
	LedgerPath string
	// StatePath is the cursor file (written atomically, 0600); a lock
	// file StatePath+".lock" keeps a second deliverer out.
	StatePath string
	// Target names the destination in the cursor file (no secrets).
	Target string
	// Build turns one receipt into a post body and the event id the
	// receiver may dedupe on.
	Build func(contract.LifecycleReceipt) (body []byte, eventID string, err error)
	// Expand, when set, is used instead of Build: it turns one ledger
	// entry into its posts, in order (none: the entry has no post). Run
	// calls it once for every entry of the ledger from the first, in
	// order — entries the cursor has already passed with replay true,
	// whose posts are not sent — so it may number posts across entries
	// (e.g. a sequence of its own that a replay must reproduce).
	Expand func(e ledger.Entry, replay bool) ([]Message, error)
	// Post sends one body: nil is delivered, an error for which Permanent
	// says true is undeliverable, any other error is retried.
	Post      func(ctx context.Context, body []byte, eventID string) error
	Permanent func(error) bool
	// Send, when set instead of Post, sends one body without waiting for
	// the receiver's answer; wait reports it (nil: delivered; any error,
	// including Send's own: sent again — for receivers that refuse
	// nothing for good, such as a broker with publisher confirms). Up to
	// Window posts are in flight, in ledger order; the outbox waits for
	// them when it has caught up with the ledger or the window is full,
	// sends again in order from the first that failed, and only then
	// moves the cursor past their entries.
	Send   func(ctx context.Context, body []byte, eventID string) (wait func(context.Context) error, err error)
	Window int
	// CursorEvery, when above 0, writes the cursor file at most this
	// often while posts flow (always after an undeliverable post and when
	// Run returns), instead of after every delivered entry: a crash then
	// sends again at most that much, with the same ids, for the receiver
	// to drop. 0 writes it after every entry.
	CursorEvery time.Duration
	// MinBackoff and MaxBackoff bound the wait between retries (defaults
	// DefaultMinBackoff, DefaultMaxBackoff).
	MinBackoff, MaxBackoff time.Duration
	// Logger gets one line when a delivery outage starts, one when it
	// ends, one per undeliverable post; nil discards them.
	Logger *slog.Logger
	Now    func() time.Time
}

// Message is one post: its body and the id the receiver may dedupe on.
type Message struct {
	Body []byte
	ID   string
}

// State is the cursor file.
type State struct {
	Schema string `json:"schema"`
	Target string `json:"target"`
	// Through is the last ledger sequence handled: delivered,
	// undeliverable, or without a post.
	Through       uint64          `json:"through"`
	Delivered     int             `json:"delivered"`
	Undeliverable []Undeliverable `json:"undeliverable"`
	UpdatedAt     time.Time       `json:"updated_at"`
}

// Undeliverable is one post the receiver refused for good.
type Undeliverable struct {
	Sequence uint64    `json:"sequence"`
	EventID  string    `json:"event_id"`
	Error    string    `json:"error"`
	At       time.Time `json:"at"`
}

// Outbox is one session's delivery to one destination.
type Outbox struct {
	cfg    Config
	log    *slog.Logger
	lock   *os.File
	finish chan struct{}
	once   sync.Once

	mu       sync.Mutex
	state    State
	retries  int
	failing  error // the receiver's last answer while a delivery outage lasts
	replayed bool
	// written is when the cursor file was last written; dirty says the
	// cursor moved past what it holds (CursorEvery).
	written time.Time
	dirty   bool
	// handled is the last entry whose posts were sent (Send); flights are
	// the posts in flight.
	handled uint64
	flights []flight
}

// flight is one post sent and not yet answered.
type flight struct {
	msg  Message
	wait func(context.Context) error
	err  error
}

// Open takes the destination's lock and reads its cursor (a missing file
// starts at the beginning of the ledger). Close releases the lock.
func Open(cfg Config) (*Outbox, error) {
	if (cfg.Build == nil && cfg.Expand == nil) || (cfg.Post == nil && cfg.Send == nil) {
		return nil, errors.New("outbox: Build (or Expand) and Post (or Send) are required")
	}
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Permanent == nil {
		cfg.Permanent = func(error) bool { return false }
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := os.OpenFile(cfg.StatePath+".lock", os.O_CREATE|os.O_RDWR, statedir.FilePerm)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("outbox %s: another lifeloop process is delivering it; let it finish or stop it first", cfg.StatePath)
		}
		return nil, fmt.Errorf("outbox %s: lock: %w", cfg.StatePath, err)
	}
	o := &Outbox{cfg: cfg, log: log, lock: lock, finish: make(chan struct{})}
	o.state = State{Schema: StateSchema, Target: cfg.Target, Undeliverable: []Undeliverable{}}
	b, err := os.ReadFile(cfg.StatePath)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		_ = o.Close()
		return nil, fmt.Errorf("outbox: %w", err)
	default:
		if err := json.Unmarshal(b, &o.state); err != nil || o.state.Schema != StateSchema {
			_ = o.Close()
			return nil, fmt.Errorf("outbox %s: not a %s cursor file; move it away to deliver from the start", cfg.StatePath, StateSchema)
		}
	}
	return o, nil
}

// Close releases the lock. It is idempotent.
func (o *Outbox) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.lock == nil {
		return nil
	}
	err := o.lock.Close()
	o.lock = nil
	return err
}

// State returns a copy of the cursor as it stands.
func (o *Outbox) State() State {
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.state
	s.Undeliverable = append([]Undeliverable(nil), s.Undeliverable...)
	return s
}

// StatePath is the cursor file.
func (o *Outbox) StatePath() string { return o.cfg.StatePath }

// Retries returns how many posts failed and were tried again.
func (o *Outbox) Retries() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.retries
}

// Failing returns the receiver's last answer while deliveries fail and
// are retried (a post refused for good is not an outage), nil when none
// is failing: what to tell a person who gives up waiting.
func (o *Outbox) Failing() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.failing
}

// setFailing records the answer of a failed attempt; nil ends the outage.
func (o *Outbox) setFailing(err error) {
	o.mu.Lock()
	o.failing = err
	o.mu.Unlock()
}

// Finish tells Run to stop following the ledger: it then handles what
// the ledger holds and returns. Finish is idempotent.
func (o *Outbox) Finish() { o.once.Do(func() { close(o.finish) }) }

// Run delivers from the cursor on, following the ledger as it grows,
// until Finish (it then handles every receipt the ledger holds and
// returns nil) or until ctx is done (it returns ctx's error at once, even
// in the middle of retrying a post, whose cursor then stays put).
func (o *Outbox) Run(ctx context.Context) (err error) {
	defer func() {
		if ferr := o.flush(); err == nil {
			err = ferr
		}
	}()
	followCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		select {
		case <-o.finish:
			stop()
		case <-followCtx.Done():
		}
	}()
	handle := func(e ledger.Entry) error { return o.handle(ctx, e) }
	if o.cfg.Expand != nil && !o.replayed {
		through := o.State().Through
		for e, err := range ledger.ReadSince(o.cfg.LedgerPath, 0) {
			var le *ledger.LineError
			if errors.As(err, &le) {
				continue
			}
			if err != nil {
				return err
			}
			if e.Sequence > through {
				break
			}
			if _, err := o.cfg.Expand(e, true); err != nil {
				return err
			}
		}
		o.replayed = true
	}
	if err := ledger.Follow(followCtx, o.cfg.LedgerPath, o.State().Through, handle); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for e, err := range ledger.ReadSince(o.cfg.LedgerPath, o.State().Through) {
		var le *ledger.LineError
		if errors.As(err, &le) {
			continue
		}
		if err != nil {
			return err
		}
		if err := handle(e); err != nil {
			return err
		}
	}
	return o.land(ctx)
}

// handle delivers the posts of one ledger entry, retrying each until it
// is delivered, refused for good, or ctx is done.
func (o *Outbox) handle(ctx context.Context, e ledger.Entry) error {
	if e.Sequence <= o.State().Through {
		return nil
	}
	if o.cfg.Send != nil {
		return o.handleWindowed(ctx, e)
	}
	msgs, err := o.messages(e)
	if err == nil && len(msgs) == 0 {
		o.mu.Lock()
		o.state.Through = e.Sequence
		o.mu.Unlock()
		return nil
	}
	if err != nil {
		id := ""
		if len(msgs) > 0 {
			id = msgs[0].ID
		}
		return o.record(e.Sequence, id, 0, err)
	}
	delivered := 0
	for _, m := range msgs {
		err := o.post(ctx, e.Sequence, m)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return o.record(e.Sequence, m.ID, delivered, err)
		}
		delivered++
	}
	return o.record(e.Sequence, "", delivered, nil)
}

// messages returns the posts of one entry, from Expand or Build: none,
// without error, for an entry that has none (ErrSkip, no OrgLoop phase).
func (o *Outbox) messages(e ledger.Entry) ([]Message, error) {
	var msgs []Message
	var err error
	if o.cfg.Expand != nil {
		msgs, err = o.cfg.Expand(e, false)
	} else {
		var m Message
		m.Body, m.ID, err = o.cfg.Build(e.Receipt)
		msgs = []Message{m}
	}
	if errors.Is(err, ErrSkip) || errors.Is(err, contract.ErrNoOrgLoopPhase) {
		return nil, nil
	}
	return msgs, err
}

// handleWindowed sends the posts of one entry without waiting, then
// waits for everything in flight when the ledger has nothing more for
// now or the window is full.
func (o *Outbox) handleWindowed(ctx context.Context, e ledger.Entry) error {
	if e.Sequence <= o.handled {
		return nil
	}
	msgs, err := o.messages(e)
	if err != nil {
		// Nothing can be sent for this entry: settle what is in flight,
		// then record it.
		if ferr := o.land(ctx); ferr != nil {
			return ferr
		}
		o.handled = e.Sequence
		return o.record(e.Sequence, "", 0, err)
	}
	for _, m := range msgs {
		f := flight{msg: m}
		f.wait, f.err = o.cfg.Send(ctx, m.Body, m.ID)
		o.flights = append(o.flights, f)
	}
	o.handled = e.Sequence
	if len(o.flights) == 0 {
		o.mu.Lock()
		o.state.Through = e.Sequence
		o.mu.Unlock()
		return nil
	}
	if len(o.flights) >= o.cfg.Window || o.caughtUp(e) {
		return o.land(ctx)
	}
	return nil
}

// caughtUp reports whether e is the last entry the ledger holds now.
func (o *Outbox) caughtUp(e ledger.Entry) bool {
	st, err := os.Stat(o.cfg.LedgerPath)
	return err != nil || st.Size() <= e.Offset+int64(len(e.Raw))+1
}

// land waits for every post in flight, sending again in order from the
// first one that failed (with backoff, one log line per outage), then
// moves the cursor past the entries handled.
func (o *Outbox) land(ctx context.Context) error {
	if len(o.flights) == 0 {
		return nil
	}
	wait := o.cfg.MinBackoff
	var outage time.Time
	for i := 0; i < len(o.flights); {
		f := &o.flights[i]
		err := f.err
		if err == nil {
			err = f.wait(ctx)
		}
		if err == nil {
			i++
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.setFailing(err)
		if outage.IsZero() {
			outage = o.cfg.Now()
			o.log.Warn("outbox: delivery failing; retrying with backoff", "target", o.cfg.Target, "sequence", o.handled, "err", err.Error())
		}
		if err := o.backOff(ctx, &wait); err != nil {
			return err
		}
		for j := i; j < len(o.flights); j++ {
			g := &o.flights[j]
			g.wait, g.err = o.cfg.Send(ctx, g.msg.Body, g.msg.ID)
		}
	}
	if !outage.IsZero() {
		o.setFailing(nil)
		o.log.Info("outbox: receiver back", "target", o.cfg.Target, "down_for", o.cfg.Now().Sub(outage).Round(time.Millisecond).String())
	}
	n := len(o.flights)
	o.flights = o.flights[:0]
	return o.record(o.handled, "", n, nil)
}

// post sends one message, retrying with backoff until the receiver
// takes it (nil), refuses it for good (that error), or ctx is done.
func (o *Outbox) post(ctx context.Context, seq uint64, m Message) error {
	wait := o.cfg.MinBackoff
	var outage time.Time
	for attempt := 0; ; attempt++ {
		err := o.cfg.Post(ctx, m.Body, m.ID)
		if err == nil || o.cfg.Permanent(err) {
			if !outage.IsZero() {
				o.setFailing(nil)
				o.log.Info("outbox: receiver back", "target", o.cfg.Target, "attempts", attempt+1, "down_for", o.cfg.Now().Sub(outage).Round(time.Millisecond).String())
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		o.setFailing(err)
		if outage.IsZero() {
			outage = o.cfg.Now()
			o.log.Warn("outbox: delivery failing; retrying with backoff", "target", o.cfg.Target, "sequence", seq, "err", err.Error())
		}
		if err := o.backOff(ctx, &wait); err != nil {
			return err
		}
	}
}

// backOff counts a retry and sleeps *wait (or until ctx is done, then
// returning its error), then doubles *wait up to MaxBackoff.
func (o *Outbox) backOff(ctx context.Context, wait *time.Duration) error {
	o.mu.Lock()
	o.retries++
	o.mu.Unlock()
	t := time.NewTimer(*wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	*wait = min(2**wait, o.cfg.MaxBackoff)
	return nil
}

// record moves the cursor past seq, counting the posts delivered and
// recording an undeliverable post (postErr not nil), and writes the
// cursor file.
func (o *Outbox) record(seq uint64, id string, delivered int, postErr error) error {
	o.mu.Lock()
	o.state.Through = seq
	o.state.UpdatedAt = o.cfg.Now().UTC()
	o.state.Delivered += delivered
	if postErr != nil {
		o.state.Undeliverable = append(o.state.Undeliverable, Undeliverable{Sequence: seq, EventID: id, Error: postErr.Error(), At: o.state.UpdatedAt})
	}
	now := o.cfg.Now()
	if postErr == nil && o.cfg.CursorEvery > 0 && now.Sub(o.written) < o.cfg.CursorEvery {
		o.dirty = true
		o.mu.Unlock()
		return nil
	}
	o.mu.Unlock()
	if postErr != nil {
		o.log.Warn("outbox: post undeliverable; recorded, not retried", "target", o.cfg.Target, "sequence", seq, "event_id", id, "err", postErr.Error())
	}
	return o.writeCursor(now)
}

// flush writes the cursor file when it lags behind the cursor.
func (o *Outbox) flush() error {
	o.mu.Lock()
	dirty := o.dirty
	o.mu.Unlock()
	if !dirty {
		return nil
	}
	return o.writeCursor(o.cfg.Now())
}

func (o *Outbox) writeCursor(now time.Time) error {
	o.mu.Lock()
	b, err := json.MarshalIndent(o.state, "", "  ")
	o.written, o.dirty = now, false
	o.mu.Unlock()
	if err != nil {
		return err
	}
	return statedir.WriteFileAtomic(o.cfg.StatePath, append(b, '\n'))
}
