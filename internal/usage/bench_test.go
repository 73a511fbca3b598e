package usage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

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
