package outbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
)

// numbering is an Expand that numbers its posts across entries (two per
// frame.opened, none for ticks), as a stateful projection does.
type numbering struct{ n int }

func (p *numbering) expand(e ledger.Entry, _ bool) ([]Message, error) {
	k := 1
	switch e.Receipt.Event {
	case contract.EventSupervisorTick:
		k = 0
	case contract.EventFrameOpened:
		k = 2
	}
	var out []Message
	for range k {
		p.n++
		out = append(out, Message{Body: []byte(fmt.Sprint(p.n)), ID: fmt.Sprintf("m%d", p.n)})
	}
	return out, nil
}

// TestExpandReplaysBeforeResuming: an outbox with Expand replays the
// entries its cursor passed (posting nothing), so a second run numbers
// its posts as one run over the whole ledger would; a post that fails
// is retried, and the posts of one entry go out in order.
func TestExpandReplaysBeforeResuming(t *testing.T) {
	s := newSession(t)
	s.start() // starting (1 post), started (1), tick (0), frame.opened (2)
	var mu sync.Mutex
	var got []string
	fail := 1
	cfgFor := func() Config {
		p := &numbering{}
		return Config{
			LedgerPath: filepath.Join(s.dir, "receipts.jsonl"),
			StatePath:  filepath.Join(s.dir, "cursor.json"),
			Expand:     p.expand,
			Post: func(_ context.Context, body []byte, id string) error {
				mu.Lock()
				defer mu.Unlock()
				if id == "m4" && fail > 0 {
					fail--
					return errors.New("broker away")
				}
				got = append(got, id+"="+string(body))
				return nil
			},
			MinBackoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond,
		}
	}
	o, err := Open(cfgFor())
	if err != nil {
		t.Fatal(err)
	}
	o.Finish()
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = o.Close()
	if st := o.State(); st.Delivered != 4 || st.Through != 4 || o.Retries() != 1 {
		t.Fatalf("first run: %+v, retries %d", st, o.Retries())
	}
	s.append(contract.EventFrameOpened, nil) // 2 more: m5, m6
	s.end(0)                                 // 1 more: m7
	o2, err := Open(cfgFor())
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Close()
	o2.Finish()
	if err := o2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"m1=1", "m2=2", "m3=3", "m4=4", "m5=5", "m6=6", "m7=7"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("posts %v, want %v", got, want)
	}
	if st := o2.State(); st.Delivered != 7 || st.Through != 6 {
		t.Fatalf("second run: %+v", st)
	}
}

// TestCursorEveryFlushesOnReturn: with CursorEvery the cursor file is
// written at most that often while posts flow, and always when Run
// returns, so a resumed run starts after everything delivered.
func TestCursorEveryFlushesOnReturn(t *testing.T) {
	s := newSession(t)
	s.start()
	s.end(0)
	p := &numbering{}
	cfg := Config{
		LedgerPath:  filepath.Join(s.dir, "receipts.jsonl"),
		StatePath:   filepath.Join(s.dir, "cursor.json"),
		Expand:      p.expand,
		Post:        func(context.Context, []byte, string) error { return nil },
		CursorEvery: time.Hour,
		Now: func() time.Time {
			return time.Unix(1778100000, 0)
		},
	}
	o, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.Finish()
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = o.Close()
	o2, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Close()
	if st := o2.State(); st.Through != 5 || st.Delivered != 5 {
		t.Fatalf("cursor file after Run: %+v", st)
	}
}

// TestSendWindowResendsInOrder: with Send, posts go out without waiting;
// when one fails (a connection lost: it and every later one), the
// outbox sends again in order from it, and moves the cursor only past
// what was confirmed.
func TestSendWindowResendsInOrder(t *testing.T) {
	s := newSession(t)
	s.start()
	s.append(contract.EventFrameOpened, nil)
	s.end(0)
	var sent []string
	failFrom := "m4" // the first send of m4 fails, as on a lost connection
	broken := false
	p := &numbering{}
	cfg := Config{
		LedgerPath: filepath.Join(s.dir, "receipts.jsonl"),
		StatePath:  filepath.Join(s.dir, "cursor.json"),
		Expand:     p.expand,
		Send: func(_ context.Context, body []byte, id string) (func(context.Context) error, error) {
			sent = append(sent, id)
			if id == failFrom {
				failFrom, broken = "", true
			}
			fail := broken
			return func(context.Context) error {
				if fail {
					broken = false
					return errors.New("connection lost")
				}
				return nil
			}, nil
		},
		Window:     3,
		MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
	}
	o, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.Finish()
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// m1..m7: starting, started, (tick), opened ×2, opened ×2 … ended.
	want := "[m1 m2 m3 m4 m4 m5 m6 m7]"
	if fmt.Sprint(sent) != want {
		t.Fatalf("sent %v, want %v", sent, want)
	}
	if st := o.State(); st.Through != 6 || st.Delivered != 7 || o.Retries() != 1 {
		t.Fatalf("cursor %+v, retries %d", st, o.Retries())
	}
}

// TestFailingSaysTheLastAnswer: while sends fail, Failing is the
// receiver's last answer, kept when the caller gives up; a delivery
// clears it.
func TestFailingSaysTheLastAnswer(t *testing.T) {
	s := newSession(t)
	s.start()
	var mu sync.Mutex
	answer := errors.New("busy")
	p := &numbering{}
	cfg := Config{
		LedgerPath: filepath.Join(s.dir, "receipts.jsonl"),
		StatePath:  filepath.Join(s.dir, "cursor.json"),
		Expand:     p.expand,
		Send: func(context.Context, []byte, string) (func(context.Context) error, error) {
			mu.Lock()
			err := answer
			mu.Unlock()
			return func(context.Context) error { return err }, nil
		},
		MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
	}
	o, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.Finish()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	for o.Retries() < 3 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if got := o.Failing(); got == nil || got.Error() != "busy" {
		t.Fatalf("Failing after giving up: %v, want busy", got)
	}
	mu.Lock()
	answer = nil
	mu.Unlock()
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := o.Failing(); got != nil {
		t.Fatalf("Failing after delivery: %v, want nil", got)
	}
}
