package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/amqpsink/rabbittest"
	"github.com/lifeloop/lifeloop/internal/hcp"
)

// BenchmarkFleetViewLatency is the time from an event's publish (with
// the broker's confirm, as a session's publisher sends it) to its row
// in the fleet view, through a real RabbitMQ on loopback: the
// follower's consumer, its events file and the fold. It reports the
// median and the 95th percentile (issue "The fleet": ≤ 250 ms median).
func BenchmarkFleetViewLatency(b *testing.B) {
	if _, err := os.Stat(rabbittest.ServerPath); err != nil {
		b.Skip("RabbitMQ is not installed (make broker)")
	}
	br := rabbittest.Start(b)
	tg, err := amqpsink.ParseURL(br.URL + "?exchange=ex.bench")
	if err != nil {
		b.Fatal(err)
	}
	f, err := Open(Config{Target: tg, Queue: "q.bench", Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = f.Run(ctx) }()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if bl, err := f.Backlog(ctx); err == nil && bl.Consumers == 1 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the view's consumer never attached")
		}
	}
	const id = "ses_bench"
	pub := amqpsink.NewPublisher(tg, id)
	post := func(seq uint64, typ string, data map[string]any) {
		body, err := json.Marshal(hcp.Envelope{HCPVersion: hcp.Version, MessageID: fmt.Sprintf("msg_%d", seq),
			Timestamp: time.Now().UTC().Format(time.RFC3339Nano), SessionID: id, Type: hcp.MessageType,
			Payload: hcp.Event{EventType: typ, Sequence: seq, Data: data}})
		if err != nil {
			b.Fatal(err)
		}
		if err := pub.Post(ctx, body, fmt.Sprintf("msg_%d", seq)); err != nil {
			b.Fatal(err)
		}
	}
	seqOf := func() uint64 {
		for _, r := range f.Rows(time.Now(), 0) {
			return r.Sequence
		}
		return 0
	}
	post(1, hcp.SessionCreated, map[string]any{"state": hcp.StatePending, "adapter_id": "generic", "metadata": map[string]any{"machine": "m1"}})
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		seq := uint64(i + 2)
		start := time.Now()
		post(seq, hcp.Progress, map[string]any{"stage": "frame.ended", "message": "turn"})
		for seqOf() < seq {
			select {
			case <-f.Batches():
			case <-time.After(time.Millisecond):
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms-p95")
}
