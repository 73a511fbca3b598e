package fleet

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	ifleet "github.com/lifeloop/lifeloop/internal/fleet"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// waitListening waits until one of the machine's sessions logs that it
// takes the machine's commands (the listener a wrapped session starts),
// at least n times in all (a hand-over logs again).
func waitListening(t *testing.T, m *fleet, n int) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got := 0
		for _, id := range m.sessions() {
			b, _ := os.ReadFile(statedir.LogPath(m.state, id))
			got += strings.Count(string(b), "taking commands")
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session of %s took the machine's commands (%d of %d)", m.state, got, n)
		}
	}
}

// waitSessions waits for the machine to record n sessions and returns
// their ids.
func waitSessions(t *testing.T, m *fleet, n int) []string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ids := m.sessions(); len(ids) >= n {
			return ids
		}
	}
	t.Fatalf("fewer than %d sessions in %s", n, m.state)
	return nil
}

// remote runs `lifeloop CMD --fleet … --machine M SESSION` as the caller
// "desk" with the given secret.
func (f *fleet) remote(t *testing.T, secret, op, machine, id string) (string, string, error) {
	t.Helper()
	c := *f
	c.env = append(append([]string{}, f.env...), "LIFELOOP_MACHINE=desk", "LIFELOOP_FLEET_SECRET="+secret)
	var out bytes.Buffer
	p := c.start(&out, op, "--fleet", broker.URL, "--machine", machine, "--wait", "60s", id)
	err := p.wait(t, 90*time.Second)
	return out.String(), p.stderr.String(), err
}

// abortedOnce checks a session's stream (the replay of its ledger)
// against seed 001's table and that it walked RUNNING → ABORTING once,
// for reason abort, and closed ABORTED.
func (f *fleet) abortedOnce(t *testing.T, id string) {
	t.Helper()
	var es []hcp.Envelope
	aborting := 0
	for _, l := range f.replay(id) {
		e, err := hcp.Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
		if e.Payload.EventType == hcp.StateChanged && e.Payload.Data["to_state"] == hcp.StateAborting {
			aborting++
			if e.Payload.Data["reason"] != "abort" {
				t.Errorf("session %s: ABORTING for reason %v, want abort", id, e.Payload.Data["reason"])
			}
		}
	}
	if err := hcp.CheckStream(es); err != nil {
		t.Errorf("session %s: %v", id, err)
	}
	last := es[len(es)-1]
	if aborting != 1 || last.Payload.EventType != hcp.SessionClosed || last.Payload.Data["final_state"] != hcp.StateAborted {
		t.Errorf("session %s: %d transitions to ABORTING, last event %s %v; want one, and session_closed ABORTED", id, aborting, last.Payload.EventType, last.Payload.Data["final_state"])
	}
}

// TestFleetListenerStartedBySession: a machine with no `lifeloop serve`
// takes commands through the listener its first wrapped session starts
// (`run --events amqp://…`); one session holds the listener lock, the
// other waits. An abort of the holder ends it with seed 001's
// transitions, the waiting session takes the lock over, and an abort of
// that session is then handled too. With $LIFELOOP_FLEET_LISTEN=off no
// listener starts.
func TestFleetListenerStartedBySession(t *testing.T) {
	skipShort(t)
	f := newFleet(t)
	m1 := f.machine("m1")
	m1.env = append(m1.env, "LIFELOOP_FLEET_SECRET=right")
	a := m1.run(io.Discard, "echo ready; sleep 300")
	ids := waitSessions(t, m1, 1)
	waitListening(t, m1, 1)
	b := m1.run(io.Discard, `[ -z "$LIFELOOP_FLEET_SECRET" ] || { echo "the fleet secret reached the harness"; exit 7; }; echo ready; sleep 300`)
	ids2 := waitSessions(t, m1, 2)
	holder, other := ids[0], ids2[0]
	if other == holder {
		other = ids2[1]
	}
	logOf := func(id string) string { return string(mustRead(t, statedir.LogPath(m1.state, id))) }
	time.Sleep(time.Second) // the second session has tried the lock by now
	if !strings.Contains(logOf(other), "waiting for its lock") || strings.Contains(logOf(other), "taking commands") {
		t.Errorf("the second session's log (want waiting for the lock, not taking commands):\n%s", logOf(other))
	}

	out, stderr, err := f.remote(t, "right", "abort", "m1", holder)
	if err != nil || !strings.Contains(out, holder) {
		t.Fatalf("abort of the session holding the listener: %v %q\n%s\nits log:\n%s", err, out, stderr, logOf(holder))
	}
	_ = a.wait(t, 60*time.Second)
	waitListening(t, m1, 2) // the other session took the lock over
	out, stderr, err = f.remote(t, "right", "abort", "m1", other)
	if err != nil || !strings.Contains(out, other) {
		t.Fatalf("abort of the session that took the listener over: %v %q\n%s", err, out, stderr)
	}
	if err := b.wait(t, 60*time.Second); err == nil || strings.Contains(b.stderr.String(), "exit status 7") {
		t.Errorf("the second session: %v (want ended by the abort)", err)
	}
	for _, id := range []string{holder, other} {
		m1.abortedOnce(t, id)
	}
	log := string(mustRead(t, filepath.Join(m1.state, "fleet", "commands", ifleet.CommandsLog)))
	if n := strings.Count(log, `"status":"done"`); n != 2 {
		t.Errorf("%d commands done, want 2:\n%s", n, log)
	}

	// Listener off: a machine whose sessions do not listen has no queue.
	// Its name is its own: the broker, shared by the package, keeps every
	// machine queue another test declared.
	m2 := f.machine("quiet")
	m2.env = append(m2.env, "LIFELOOP_FLEET_LISTEN=off", "LIFELOOP_FLEET_SECRET=right")
	c := m2.run(io.Discard, "echo ready; sleep 300")
	id2 := waitSession(t, m2)
	time.Sleep(2 * time.Second)
	if _, stderr, err := f.remote(t, "right", "pause", "quiet", id2); err == nil || !strings.Contains(stderr, "no command queue") {
		t.Errorf("LIFELOOP_FLEET_LISTEN=off: err %v, stderr %q (want no command queue)", err, stderr)
	}
	c.kill()
}

// TestFleetBrokerRestartCommands: the broker is killed while three
// sessions of a machine publish and an abort is in flight, and started
// again on the same data. The abort, sent again with its id until an
// answer comes, is done exactly once (its session walks RUNNING →
// ABORTING → ABORTED once); an abort sent while the listener is still
// reconnecting is answered; every session's events reach the consumer
// exactly once.
func TestFleetBrokerRestartCommands(t *testing.T) {
	skipShort(t)
	f := newFleet(t)
	m1 := f.machine("m1")
	m1.env = append(m1.env, "LIFELOOP_FLEET_SECRET=right")
	out := filepath.Join(f.dir, "events.ndjson")
	cons := f.consumer(out)
	back := filepath.Join(f.dir, "broker-back")
	t.Cleanup(func() { _ = os.WriteFile(back, nil, 0o600) })
	var runs []*proc
	for range 3 {
		runs = append(runs, m1.run(io.Discard, framesUntil(back, 5, "0.1")))
	}
	ids := waitSessions(t, m1, 3)
	waitListening(t, m1, 1)
	waitLines(t, out, 9, 60*time.Second, cons)

	target, err := amqpsink.ParseURL(broker.URL)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("right")
	first := ifleet.Command{ID: "cmd_restart_1", Machine: "m1", Session: ids[0], Op: "abort", Caller: "desk", IssuedAt: time.Now().UTC()}
	// The command is published with a confirm (persistent, to the
	// machine's durable queue) and the broker killed the moment the
	// confirm comes: the listener may have taken it, done it, answered
	// it, or not yet.
	publishConfirmed(t, first, secret)
	broker.Kill(t)
	broker.Restart(t)

	// While the listener reconnects: a second abort, through the CLI.
	outB, stderrB, errB := f.remote(t, "right", "abort", "m1", ids[1])

	// The first sent again, with its id, until an answer comes: done
	// once, whether before the kill or after.
	var res ifleet.Result
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		res, err = ifleet.Send(context.Background(), target, first, secret, 30*time.Second)
		if err == nil || time.Now().After(deadline) {
			break
		}
		t.Logf("sent again: %v", err)
	}
	if err != nil || res.Status != ifleet.ResultDone {
		t.Fatalf("the abort sent again with its id: %+v, %v", res, err)
	}
	if errB != nil || !strings.Contains(outB, ids[1]) {
		t.Fatalf("an abort sent while the listener reconnected: %v %q\n%s", errB, outB, stderrB)
	}
	if err := os.WriteFile(back, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, r := range runs {
		_ = r.wait(t, 120*time.Second)
		if s := r.stderr.String(); s != "" {
			// A session that ended while the broker was away for
			// longer than --events-wait says what is owed; the ledger
			// is the spool and `lifeloop publish` sends the rest.
			t.Logf("run %d stderr: %s", i, s)
		}
	}
	for _, id := range ids {
		p := m1.start(io.Discard, "publish", "--events", f.url(), id)
		if err := p.wait(t, 60*time.Second); err != nil {
			t.Fatalf("publish %s: %v\n%s", id, err, p.stderr.String())
		}
	}
	m1.abortedOnce(t, ids[0])
	m1.abortedOnce(t, ids[1])
	log := string(mustRead(t, filepath.Join(m1.state, "fleet", "commands", ifleet.CommandsLog)))
	done := 0
	for _, l := range lines(log) {
		if strings.Contains(l, `"cmd_restart_1"`) && strings.Contains(l, `"status":"done"`) && !strings.Contains(l, `"repeat":true`) {
			done++
		}
	}
	if done != 1 {
		t.Errorf("the abort sent across the restart was done %d times, want once:\n%s", done, log)
	}
	total := m1.checkExactlyOnce(out, cons)
	cons.stop(t)
	t.Logf("answer after the restart: %+v; %d events once each", res, total)
}

// publishConfirmed puts a sealed command on its machine's queue, as
// Send does but with no one waiting for the answer, and returns when
// the broker has confirmed it.
func publishConfirmed(t *testing.T, c ifleet.Command, secret []byte) {
	t.Helper()
	body, err := ifleet.Seal(c, secret)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(broker.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	conf, err := ch.PublishWithDeferredConfirmWithContext(context.Background(), "", ifleet.CommandQueue(c.Machine), true, false,
		amqp.Publishing{ContentType: "application/json", DeliveryMode: amqp.Persistent, CorrelationId: c.ID, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ok, err := conf.WaitContext(ctx); !ok || err != nil {
		t.Fatalf("the broker did not confirm the command: %v %v", ok, err)
	}
}
