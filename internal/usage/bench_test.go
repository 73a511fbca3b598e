package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/opencode"
	"github.com/lifeloop/lifeloop/internal/pricing"
)

// BenchmarkWarm is a run with nothing new over 10,000 one-turn session
// files in ten project folders, grouped by day, in process (the e2e
// BenchmarkUsage/warm measures the whole command).
func BenchmarkWarm(b *testing.B) {
	h := b.TempDir()
	at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	for i := range 10000 {
		dir := filepath.Join(h, ".claude", "projects", fmt.Sprintf("-tmp-project-%d", i%10))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		line := fmt.Sprintf(`{"type":"assistant","sessionId":"s-%d","timestamp":%q,"requestId":"req_%d","message":{"id":"msg_%d","model":"claude-sonnet-4-5","role":"assistant","usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":40}}}`+"\n",
			i, at.Add(time.Duration(i)*time.Minute).Format(time.RFC3339Nano), i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s-%d.jsonl", i)), []byte(line), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	pr, err := pricing.New("")
	if err != nil {
		b.Fatal(err)
	}
	s := &Scanner{Sources: sources[:1], Getenv: func(k string) string {
		if k == "HOME" {
			return h
		}
		return ""
	}, Pricer: pr, StateDir: filepath.Join(h, "state"), Location: time.UTC}
	sc, err := s.Run()
	if err != nil {
		b.Fatal(err)
	}
	if got := sc.Group([]string{"day"}, Filter{}).Total.Calls; got != 10000 {
		b.Fatalf("the cold run counted %d calls, want 10000", got)
	}
	for b.Loop() {
		sc, err := s.Run()
		if err != nil {
			b.Fatal(err)
		}
		if sc.BytesRead != 0 {
			b.Fatalf("a warm run read %d bytes", sc.BytesRead)
		}
		if got := sc.Group([]string{"day"}, Filter{}).Total.Calls; got != 10000 {
			b.Fatalf("a warm run counted %d calls, want 10000", got)
		}
	}
}

// BenchmarkColdClaude reads the Claude samples of testdata, copied into
// 200 files of about 1 MiB, with an empty index each time: the CPU a cold
// run spends per byte, in process (the e2e BenchmarkUsage/cold measures
// the whole command on a generated corpus).
func BenchmarkColdClaude(b *testing.B) {
	var sample []byte
	for _, name := range []string{"compact.jsonl", "tool-turn.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata/home/.claude/projects/-home-dev-project", name))
		if err != nil {
			b.Fatal(err)
		}
		sample = append(sample, data...)
	}
	h := b.TempDir()
	var size int64
	for i := range 200 {
		dir := filepath.Join(h, ".claude", "projects", fmt.Sprintf("-tmp-project-%d", i%10))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		var data []byte
		for len(data) < 1<<20 {
			data = append(data, sample...)
		}
		size += int64(len(data))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s-%d.jsonl", i)), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	pr, err := pricing.New("")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	for b.Loop() {
		s := &Scanner{Sources: sources[:1], Getenv: func(k string) string {
			if k == "HOME" {
				return h
			}
			return ""
		}, Pricer: pr, StateDir: b.TempDir(), Location: time.UTC}
		sc, err := s.Run()
		if err != nil {
			b.Fatal(err)
		}
		if sc.BytesRead != size {
			b.Fatalf("a cold run read %d bytes of %d", sc.BytesRead, size)
		}
	}
}

// BenchmarkOpenCodeDatabase reads an OpenCode database of 40,000 model
// calls (80,000 message events: each call's message written before and
// once completed) with an empty index each time, streamed (the
// adapter's EachUsageSince) and collected (UsageSince: every call held
// at once, as before streaming): peak-heap-MiB is the largest heap in
// use sampled every millisecond of the run.
func BenchmarkOpenCodeDatabase(b *testing.B) {
	const calls = 40000
	h := b.TempDir()
	db := openCodeDB(b, h)
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare("INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, 'message.updated.1', ?)")
	if err != nil {
		b.Fatal(err)
	}
	seq := 0
	for i := range calls {
		ses := fmt.Sprintf("ses_%026d", i/50)
		for _, done := range []string{"", fmt.Sprintf(`,"completed":%d`, 1795442418441+int64(i)*1000)} {
			seq++
			data := fmt.Sprintf(`{"sessionID":%q,"info":{"id":"msg_%026d","sessionID":%q,"role":"assistant","time":{"created":%d%s},"parentID":"msg_p%025d","modelID":"claude-sonnet-4-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/home/dev/work%d","root":"/home/dev/work"},"cost":0.0123,"tokens":{"total":1037,"input":12,"output":5,"reasoning":0,"cache":{"read":1000,"write":20}},"finish":"stop"}}`,
				ses, i, ses, 1795442417628+int64(i)*1000, done, i, i%10)
			if _, err := ins.Exec(fmt.Sprintf("evt_%d", seq), ses, seq, data); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		store adapters.UsageStore
	}{{"streamed", opencode.Harness{}}, {"collected", collectingStore{opencode.Harness{}}}} {
		b.Run(c.name, func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				s := scanner(b, h, nil, nil, Source{Harness: "opencode", Store: c.store})
				s.StateDir = b.TempDir()
				runtime.GC()
				stop, sampled := make(chan struct{}), make(chan uint64)
				go func() {
					var m runtime.MemStats
					var most uint64
					t := time.NewTicker(time.Millisecond)
					defer t.Stop()
					for {
						runtime.ReadMemStats(&m)
						most = max(most, m.HeapInuse)
						select {
						case <-stop:
							sampled <- most
							return
						case <-t.C:
						}
					}
				}()
				sc, err := s.Run()
				close(stop)
				peak = max(peak, <-sampled)
				if err != nil {
					b.Fatal(err)
				}
				if got := sc.Group(nil, Filter{}).Total.Calls; got != calls {
					b.Fatalf("%d calls counted, want %d", got, calls)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
