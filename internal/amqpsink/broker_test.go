package amqpsink_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/amqpsink/rabbittest"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/outbox"
)

func receipt(ev contract.Event, sum map[string]any) contract.LifecycleReceipt {
	return contract.LifecycleReceipt{
		ClientID: "lifeloop", AdapterID: "generic", InvocationID: "inv_1", Event: ev, EventID: "evt_x",
		IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, AtEpochS: 1778100000, TelemetrySummary: sum,
	}
}

// TestPublishConsumeDeadLetter runs the publisher (from a ledger, through
// the outbox) and the consumer against a real RabbitMQ: the consumer's
// output is the session's projection, in order, once; a message without
// a bound queue is refused (mandatory) and retried; a malformed message
// and an unknown session's event are dead-lettered while the consumer
// keeps going.
func TestPublishConsumeDeadLetter(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a RabbitMQ broker")
	}
	b := rabbittest.Start(t)
	dir := t.TempDir()
	lp := filepath.Join(dir, "receipts.jsonl")
	led, err := ledger.Open(lp, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	for _, r := range []contract.LifecycleReceipt{
		receipt(contract.EventSessionStarting, nil),
		receipt(contract.EventSessionStarted, nil),
		receipt(contract.EventFrameOpened, map[string]any{"frame_id": "t1"}),
		receipt(contract.EventSupervisorTick, map[string]any{"state": "running"}),
		receipt(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}),
	} {
		if _, _, err := led.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// No queue is bound yet: the publish is refused and retried.
	tg, err := amqpsink.ParseURL(b.URL + "?exchange=ex1&routing_key=hcp.{session_id}")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tg.Redacted(), "guest") {
		t.Fatalf("redacted URL keeps the credentials: %s", tg.Redacted())
	}
	p := amqpsink.NewPublisher(tg, "ses_T")
	defer p.Close()
	if err := p.Post(ctx, []byte(`{}`), "m0"); err == nil || !strings.Contains(err.Error(), "no queue is bound") {
		t.Fatalf("unroutable publish: %v", err)
	}

	var logs rabbittest.Buffer
	var out rabbittest.Buffer
	cons, err := amqpsink.OpenConsumer(amqpsink.ConsumerConfig{
		Target: tg, Queue: "q1", StateDir: filepath.Join(dir, "cons"), Out: &out,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	cctx, stopCons := context.WithCancel(ctx)
	consDone := make(chan error, 1)
	go func() { consDone <- cons.Run(cctx) }()
	// Wait for the consumer's queue to be bound.
	deadline := time.Now().Add(20 * time.Second)
	for p.Post(ctx, []byte(`not json`), "bad-1") != nil {
		if time.Now().After(deadline) {
			t.Fatal("the consumer's queue was never bound")
		}
		time.Sleep(100 * time.Millisecond)
	}
	unknown, _ := json.Marshal(hcp.Envelope{HCPVersion: "1.0", MessageID: "x", SessionID: "ses_NOBODY", Type: "event", Payload: hcp.Event{EventType: "progress", Sequence: 4, Data: map[string]any{}}})
	if err := amqpsink.NewPublisher(tg, "ses_NOBODY").Post(ctx, unknown, "unknown-1"); err != nil {
		t.Fatal(err)
	}

	cfg := amqpsink.Outbox(lp, filepath.Join(dir, "cursor.json"), "ses_T", "", tg, p)
	ob, err := outbox.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ob.Finish()
	if err := ob.Run(ctx); err != nil {
		t.Fatal(err)
	}
	_ = ob.Close()
	if st := ob.State(); st.Delivered != 5 || st.Through != 5 {
		t.Fatalf("cursor %+v, want 5 delivered through 5", st)
	}

	var want bytes.Buffer
	proj := hcp.NewProjector("ses_T")
	for e, err := range ledger.ReadSince(lp, 0) {
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range proj.Project(e.Receipt) {
			j, _ := json.Marshal(ev)
			want.Write(append(j, '\n'))
		}
	}
	for time.Now().Before(deadline) && out.String() != want.String() {
		time.Sleep(50 * time.Millisecond)
	}
	if out.String() != want.String() {
		t.Fatalf("consumer output:\n%s\nwant:\n%s", out.String(), want.String())
	}
	// The unknown session's event waits ReorderWait for its
	// session_created, then is dead-lettered.
	for time.Now().Before(deadline) && strings.Count(logs.String(), "message dead-lettered") < 2 {
		time.Sleep(50 * time.Millisecond)
	}
	stopCons()
	if err := <-consDone; err != nil {
		t.Fatal(err)
	}
	st := cons.State()
	if st.Sessions["ses_T"] != 5 || st.DeadLetters != 2 || st.Processed != 5 {
		t.Fatalf("consumer state %+v", st)
	}
	if n := strings.Count(logs.String(), "message dead-lettered"); n != 2 {
		t.Fatalf("%d dead-letter log lines, want 2:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "guest") {
		t.Fatalf("credentials in the log:\n%s", logs.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cons", "consumer-q1.json")); !bytes.Contains(b, []byte(`"ses_T": 5`)) {
		t.Fatalf("state file: %s", b)
	}

	// The dead letters wait in q1.dead with their reasons.
	conn, err := amqp.Dial(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for range 2 {
		d, ok, err := ch.Get("q1.dead", true)
		if err != nil || !ok {
			t.Fatalf("dead letter: ok %v err %v", ok, err)
		}
		reasons = append(reasons, d.MessageId+": "+d.Headers["x-lifeloop-reason"].(string))
	}
	if !strings.Contains(reasons[0], "bad-1: not an HCP event envelope") || !strings.Contains(reasons[1], `unknown-1: unknown session "ses_NOBODY"`) {
		t.Fatalf("dead letters: %q", reasons)
	}
}

// TestConsumerReorders: events that arrive ahead of their session's
// next sequence wait for the ones before them (seed 001: buffer and
// reorder); when those never come, processing goes on past the gap
// after ReorderWait, with one warning.
func TestConsumerReorders(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a RabbitMQ broker")
	}
	b := rabbittest.Start(t)
	tg, err := amqpsink.ParseURL(b.URL + "?queue=qr")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := func(session string, seq uint64) []byte {
		et := "progress"
		if seq == 1 {
			et = "session_created"
		}
		j, _ := json.Marshal(hcp.Envelope{HCPVersion: "1.0", MessageID: fmt.Sprintf("%s-%d", session, seq), Timestamp: "t", SessionID: session, Type: "event", Payload: hcp.Event{EventType: et, Sequence: seq, Data: map[string]any{}}})
		return j
	}
	p := amqpsink.NewPublisher(tg, "x")
	defer p.Close()
	for _, m := range []struct {
		s   string
		seq uint64
	}{{"ses_R", 1}, {"ses_R", 3}, {"ses_G", 1}, {"ses_R", 4}, {"ses_G", 3}, {"ses_R", 3}, {"ses_R", 2}} {
		if err := p.Post(ctx, env(m.s, m.seq), fmt.Sprintf("%s-%d", m.s, m.seq)); err != nil {
			t.Fatal(err)
		}
	}
	var logs, out rabbittest.Buffer
	cons, err := amqpsink.OpenConsumer(amqpsink.ConsumerConfig{Target: tg, Queue: "qr", StateDir: t.TempDir(), Out: &out, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cons.Run(cctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && strings.Count(out.String(), "\n") < 6 {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		e, err := hcp.Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s-%d", e.SessionID, e.Payload.Sequence))
	}
	// ses_R comes out in order (its copy of 3 is dropped); ses_G's 3
	// comes after ReorderWait, with a gap warning.
	if fmt.Sprint(got) != "[ses_R-1 ses_G-1 ses_R-2 ses_R-3 ses_R-4 ses_G-3]" {
		t.Fatalf("output order %v", got)
	}
	if n := strings.Count(logs.String(), "gap in a session's sequence"); n != 1 || !strings.Contains(logs.String(), "session=ses_G") {
		t.Fatalf("%d gap warnings:\n%s", n, logs.String())
	}
}
