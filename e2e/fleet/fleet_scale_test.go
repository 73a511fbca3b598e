package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	ifleet "github.com/lifeloop/lifeloop/internal/fleet"
	"github.com/lifeloop/lifeloop/internal/hcp"
)

// simSession is one simulated session: the HCP events a wrapped
// session publishes (session_created with its machine, state changes,
// progress, session_closed), published in order with confirms by the
// same Publisher `run --events amqp://…` uses, each sent again until
// the broker confirms it (as the outbox does: a repeat has the same
// message id and sequence, which the consumer skips).
type simSession struct {
	id, machine string
	pub         *amqpsink.Publisher
	mu          sync.Mutex // one event at a time, in sequence order
	seq         uint64
	ended       bool
}

func (s *simSession) emit(ctx context.Context, eventType string, data map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	e := hcp.Envelope{HCPVersion: "1.0", MessageID: fmt.Sprintf("%s-%d", s.id, s.seq), Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		SessionID: s.id, Type: "event", Payload: hcp.Event{EventType: eventType, Sequence: s.seq, Data: data}}
	body, err := json.Marshal(e)
	if err != nil {
		return err
	}
	for backoff := 100 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		if err := s.pub.Post(ctx, body, e.MessageID); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}

func (s *simSession) transition(ctx context.Context, from, to, reason string) error {
	return s.emit(ctx, hcp.StateChanged, map[string]any{"from_state": from, "to_state": to, "reason": reason})
}

func (s *simSession) start(ctx context.Context) error {
	if err := s.emit(ctx, hcp.SessionCreated, map[string]any{"state": hcp.StatePending, "adapter_id": "generic", "metadata": map[string]any{"machine": s.machine}}); err != nil {
		return err
	}
	return s.transition(ctx, hcp.StatePending, hcp.StateRunning, "started")
}

// frame is a turn's four progress events.
func (s *simSession) frame(ctx context.Context, n int) error {
	for _, stage := range []string{"frame.opening", "frame.opened", "frame.ending", "frame.ended"} {
		if err := s.emit(ctx, "progress", map[string]any{"stage": stage, "frame_id": fmt.Sprintf("t%d", n)}); err != nil {
			return err
		}
	}
	return nil
}

// end walks the session to a final state and closes it.
func (s *simSession) end(ctx context.Context, via []string, final, reason string) error {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
	from := hcp.StateRunning
	for _, to := range append(via, final) {
		if err := s.transition(ctx, from, to, reason); err != nil {
			return err
		}
		from = to
	}
	return s.emit(ctx, hcp.SessionClosed, map[string]any{"final_state": final, "reason": reason})
}

// simFleet is machines × per simulated sessions publishing to one
// exchange, whose URL also declares the view's queue.
type simFleet struct {
	sessions []*simSession
	byID     map[string]*simSession
	exchange string
	queue    string
}

func newSimFleet(tb testing.TB, name string, machines, per int) *simFleet {
	tb.Helper()
	sf := &simFleet{byID: map[string]*simSession{}, exchange: "ex." + name, queue: "q." + name}
	t, err := amqpsink.ParseURL(broker.URL + "?exchange=" + sf.exchange + "&queue=" + sf.queue)
	if err != nil {
		tb.Fatal(err)
	}
	for m := range machines {
		for i := range per {
			id := fmt.Sprintf("ses_SIM%02dX%03d", m, i)
			s := &simSession{id: id, machine: fmt.Sprintf("sim%02d", m), pub: amqpsink.NewPublisher(t, id)}
			tb.Cleanup(func() { _ = s.pub.Close() })
			sf.sessions = append(sf.sessions, s)
			sf.byID[id] = s
		}
	}
	return sf
}

// each runs fn for every session at once and returns the first error.
func (sf *simFleet) each(fn func(*simSession) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(sf.sessions))
	for _, s := range sf.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(s); err != nil {
				errs <- fmt.Errorf("%s: %w", s.id, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// view opens the fleet view (the fold `top --fleet` shows) on the
// simulated fleet's queue and runs it until the test ends.
func (sf *simFleet) view(tb testing.TB) *ifleet.Follower {
	tb.Helper()
	t, err := amqpsink.ParseURL(broker.URL + "?exchange=" + sf.exchange)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := ifleet.Open(ifleet.Config{Target: t, Queue: sf.queue, Dir: filepath.Join(tb.TempDir(), "view")})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done; _ = f.Close() })
	return f
}

// converge waits until the view's rows are want (session → state) and
// closed where the state is final, with no gap, and returns how long it
// took, or the differences at the deadline.
func converge(f *ifleet.Follower, want map[string]string, d time.Duration) (time.Duration, []string) {
	start := time.Now()
	var diff []string
	for deadline := start.Add(d); ; {
		diff = diff[:0]
		rows := f.Rows(time.Now(), 0)
		if len(rows) != len(want) {
			diff = append(diff, fmt.Sprintf("%d rows, want %d", len(rows), len(want)))
		}
		for _, r := range rows {
			if w := want[r.Session]; r.State != w || r.Gaps != 0 || r.Closed != hcp.Terminal(w) {
				diff = append(diff, fmt.Sprintf("%s on %s: %s closed %v gaps %d, want %s", r.Session, r.Machine, r.State, r.Closed, r.Gaps, w))
			}
		}
		if len(diff) == 0 || time.Now().After(deadline) {
			return time.Since(start), diff
		}
		select {
		case <-f.Batches():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// commandLedger records what the simulated machines' listeners did.
type commandLedger struct {
	mu    sync.Mutex
	calls map[string][]string // command id → "machine session op" per call
}

// listen runs one listener per simulated machine (the same Listen
// `serve` and a wrapped session run), whose Do records the call and
// walks the session through seed 001's abort: RUNNING → ABORTING →
// ABORTED, session_closed ABORTED.
func (sf *simFleet) listen(tb testing.TB, secret []byte) *commandLedger {
	tb.Helper()
	cl := &commandLedger{calls: map[string][]string{}}
	t, err := amqpsink.ParseURL(broker.URL)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	machines := map[string]bool{}
	for _, s := range sf.sessions {
		if machines[s.machine] {
			continue
		}
		machines[s.machine] = true
		machine := s.machine
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = ifleet.Listen(ctx, ifleet.ListenerConfig{Target: t, Machine: machine, Secret: secret, Dir: filepath.Join(tb.TempDir(), machine),
				Do: func(ctx context.Context, c ifleet.Command) (string, error) {
					cl.mu.Lock()
					cl.calls[c.ID] = append(cl.calls[c.ID], machine+" "+c.Session+" "+c.Op)
					cl.mu.Unlock()
					s := sf.byID[c.Session]
					if s == nil || s.machine != machine {
						return "", fmt.Errorf("no session %s on this machine", c.Session)
					}
					s.mu.Lock()
					ended := s.ended
					s.mu.Unlock()
					if ended {
						return "", fmt.Errorf("session %s already ended", c.Session)
					}
					go func() { _ = s.end(ctx, []string{hcp.StateAborting}, hcp.StateAborted, "abort") }()
					return "aborting", nil
				}})
		}()
	}
	tb.Cleanup(func() { cancel(); wg.Wait() })
	return cl
}

// TestFleetScale: a simulated fleet of 200 sessions on 20 machines
// publishes to the real broker; the fleet view lists all 200 RUNNING.
// The broker is killed while every session publishes a turn and started
// again: the view converges to every session's state once the
// publishers are through (half of the machines' sessions completed, the
// others running), with no gap. Then one abort per machine, sent at
// once through the machines' listeners, reaches its session exactly
// once (sent again with the same ids: the kept answers, no second
// call), and each aborted session shows ABORTED in the view.
func TestFleetScale(t *testing.T) {
	skipShort(t)
	const machines, per = 20, 10
	start := time.Now()
	sf := newSimFleet(t, "scale", machines, per)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if err := sf.each(func(s *simSession) error { return s.start(ctx) }); err != nil {
		t.Fatal(err)
	}
	view := sf.view(t)
	want := map[string]string{}
	for _, s := range sf.sessions {
		want[s.id] = hcp.StateRunning
	}
	took, diff := converge(view, want, 60*time.Second)
	if len(diff) > 0 {
		t.Fatalf("the view of 200 started sessions did not converge in %s: %v", took, diff[:min(len(diff), 10)])
	}
	t.Logf("200 sessions on 20 machines started and in the view in %s", time.Since(start).Round(time.Millisecond))
	cl := sf.listen(t, []byte("s"))

	// A turn each and, for the even machines, the end — while the broker
	// is killed and started again.
	published := make(chan error, 1)
	go func() {
		published <- sf.each(func(s *simSession) error {
			for n := range 3 {
				if err := s.frame(ctx, n); err != nil {
					return err
				}
			}
			if s.machine[len(s.machine)-1]%2 == 0 {
				return s.end(ctx, nil, hcp.StateCompleted, "exit_code_0")
			}
			return nil
		})
	}()
	time.Sleep(100 * time.Millisecond)
	killedAt := time.Now()
	broker.Kill(t)
	broker.Restart(t)
	outage := time.Since(killedAt)
	if err := <-published; err != nil {
		t.Fatalf("publishing across the restart: %v", err)
	}
	for _, s := range sf.sessions {
		if s.machine[len(s.machine)-1]%2 == 0 {
			want[s.id] = hcp.StateCompleted
		}
	}
	took, diff = converge(view, want, 90*time.Second)
	if len(diff) > 0 {
		t.Fatalf("after the broker restart the view did not converge in %s (%d rows differ): %v", took, len(diff), diff[:min(len(diff), 10)])
	}
	t.Logf("broker down %s; the view converged %s after the publishers were through", outage.Round(time.Millisecond), took.Round(time.Millisecond))

	// One abort per machine, at once, to a running session (odd
	// machines) or an ended one (even: a clear failure, not silence).
	target, err := amqpsink.ParseURL(broker.URL)
	if err != nil {
		t.Fatal(err)
	}
	cmds := map[string]ifleet.Command{}
	for m := range machines {
		s := sf.sessions[m*per+m%per]
		cmds[s.id] = ifleet.Command{ID: "cmd_scale_" + s.id, Machine: s.machine, Session: s.id, Op: "abort", Caller: "desk", IssuedAt: time.Now().UTC()}
	}
	send := func(repeat bool) {
		var wg sync.WaitGroup
		for id, c := range cmds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := ifleet.Send(ctx, target, c, []byte("s"), 60*time.Second)
				wantStatus := ifleet.ResultDone
				if want[id] == hcp.StateCompleted {
					wantStatus = ifleet.ResultFailed // ended: a clear answer, not silence
				}
				if err != nil {
					t.Errorf("abort %s on %s: %v", id, c.Machine, err)
				} else if res.Repeat != repeat || res.Machine != c.Machine || res.Session != id || res.Status != wantStatus {
					t.Errorf("abort %s on %s: %+v, want status %s, repeat %v", id, c.Machine, res, wantStatus, repeat)
				}
			}()
		}
		wg.Wait()
	}
	send(false)
	for id := range cmds {
		if want[id] == hcp.StateRunning {
			want[id] = hcp.StateAborted
		}
	}
	send(true)
	cl.mu.Lock()
	for id, c := range cmds {
		if calls := cl.calls[c.ID]; len(calls) != 1 || calls[0] != c.Machine+" "+id+" abort" {
			t.Errorf("command %s: calls %q, want one on %s", c.ID, calls, c.Machine)
		}
	}
	if len(cl.calls) != len(cmds) {
		t.Errorf("%d commands called, want %d", len(cl.calls), len(cmds))
	}
	cl.mu.Unlock()
	took, diff = converge(view, want, 60*time.Second)
	if len(diff) > 0 {
		t.Fatalf("after the aborts the view did not converge in %s: %v", took, diff[:min(len(diff), 10)])
	}
	t.Logf("20 aborts (one per machine) each done once; the view showed them in %s; whole test %s", took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
