package notify

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// reportLatency reports the median and 90th percentile of ds.
func reportLatency(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(ds[len(ds)/2]), "median-ms")
	b.ReportMetric(ms(ds[len(ds)*9/10]), "p90-ms")
}

// BenchmarkNotifyCommandStart is Opened → the person's command running:
// its sh writes a line into a fifo the benchmark reads. Each run is a new
// notifier, as a session's first episode finds it (no worker yet).
func BenchmarkNotifyCommandStart(b *testing.B) {
	dir := b.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		b.Skip("no fifo here:", err)
	}
	f, err := os.OpenFile(fifo, os.O_RDWR, 0) // read-write: writers never wait for a reader
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	in := bufio.NewReader(f)
	cfg := Config{Command: `echo started > "$NOTIFY_TEST_DIR/fifo"`, Env: testEnv(dir)}
	var ds []time.Duration
	b.ResetTimer()
	for b.Loop() {
		n := New(cfg, nil)
		t0 := time.Now()
		n.Opened(episode(1, "needs_permission"))
		if _, err := in.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
		b.StopTimer()
		n.Wait(time.Minute)
		b.StartTimer()
	}
	reportLatency(b, ds)
}

// BenchmarkNotifyWebhookArrival is Opened → the webhook's request at a
// receiver on 127.0.0.1, a new notifier (and connection) each run.
func BenchmarkNotifyWebhookArrival(b *testing.B) {
	arrived := make(chan time.Time, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		arrived <- time.Now()
	}))
	defer srv.Close()
	cfg := Config{WebhookURL: srv.URL, WebhookSecret: "s3cret"}
	var ds []time.Duration
	b.ResetTimer()
	for b.Loop() {
		n := New(cfg, nil)
		t0 := time.Now()
		n.Opened(episode(1, "needs_permission"))
		ds = append(ds, (<-arrived).Sub(t0))
		b.StopTimer()
		n.Wait(time.Minute)
		b.StartTimer()
	}
	reportLatency(b, ds)
}

// BenchmarkNotifyOpenedReturns is what Opened costs its caller with every
// notifier configured: the work is queued, not done.
func BenchmarkNotifyOpenedReturns(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	bin := b.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte("#!/bin/sh\n"), 0o700); err != nil {
		b.Fatal(err)
	}
	cfg := Config{Command: "true", WebhookURL: srv.URL, Desktop: true, Env: []string{"PATH=" + bin + ":" + os.Getenv("PATH")}}
	var ds []time.Duration
	b.ResetTimer()
	for b.Loop() {
		n := New(cfg, nil)
		t0 := time.Now()
		n.Opened(episode(1, "needs_permission"))
		ds = append(ds, time.Since(t0))
		b.StopTimer()
		n.Wait(time.Minute)
		b.StartTimer()
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/float64(time.Microsecond), "median-us")
}
