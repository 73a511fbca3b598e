package telemetry

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFileClaims(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claims")
	a := &FileClaims{Dir: dir, Owner: "ses_A"}
	b := &FileClaims{Dir: dir, Owner: "ses_B"}
	const p = "/x/t.jsonl"
	if !a.Claim(p) {
		t.Fatal("A cannot claim a free path")
	}
	if !a.Claim(p) {
		t.Fatal("A cannot claim a path it already holds")
	}
	if b.Claim(p) {
		t.Fatal("B claimed a path A holds")
	}
	b.Release(p) // not B's: must not remove A's claim
	if b.Claim(p) {
		t.Fatal("B's Release removed A's claim")
	}
	a.Release(p)
	if !b.Claim(p) {
		t.Fatal("B cannot claim a released path")
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("claims folder mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}

	// A claim held by a process that has exited is stale.
	cmd := exec.CommandContext(t.Context(), "true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	dead := &FileClaims{Dir: dir, Owner: "ses_D", PID: cmd.Process.Pid}
	const q = "/x/u.jsonl"
	if !dead.Claim(q) {
		t.Fatal("cannot claim")
	}
	if !a.Claim(q) {
		t.Error("A could not take over a claim whose process is gone")
	}
}

// TestBornBefore: a birth time finer than a second may trail the launch
// by FineSlack (the kernel's coarse clock) and no more; one in whole
// seconds (a file system that keeps seconds) by DefaultSlack; a slack
// given is used as it is.
func TestBornBefore(t *testing.T) {
	launch := time.Date(2026, 11, 28, 6, 0, 0, 500_000_000, time.UTC)
	for _, c := range []struct {
		name  string
		born  time.Time
		slack time.Duration
		want  bool
	}{
		{"after the launch", launch.Add(time.Millisecond), 0, false},
		{"a clock tick before", launch.Add(-10 * time.Millisecond), 0, false},
		{"the previous one-shot's, a second before", launch.Add(-time.Second), 0, true},
		{"whole seconds, within the coarse slack", time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC), 0, false},
		{"whole seconds, long before", time.Date(2026, 11, 28, 5, 59, 57, 0, time.UTC), 0, true},
		{"a given slack", launch.Add(-time.Second), 2 * time.Second, false},
	} {
		if got := BornBefore(c.born, launch, c.slack); got != c.want {
			t.Errorf("%s: BornBefore = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFileFactsRemembersABirthTime(t *testing.T) {
	p := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var f FileFacts[struct{}]
	born, ok := f.Born(p)
	if !ok || born.IsZero() {
		t.Fatalf("birth time %v, ok %v", born, ok)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if again, ok := f.Born(p); !ok || !again.Equal(born) {
		t.Errorf("asked again: %v, ok %v; want %v from memory", again, ok, born)
	}
	if _, ok := f.Born(p + ".missing"); ok {
		t.Error("a file that does not exist has a birth time")
	}
}

func TestFileFactsReadsOnceComplete(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	reads := 0
	firstLine := func(path string) (string, bool) {
		reads++
		b, err := os.ReadFile(path)
		if err != nil {
			return "", false
		}
		line, _, complete := strings.Cut(string(b), "\n")
		return line, complete
	}
	var f FileFacts[string]
	if _, _, ok := f.Of(p, firstLine); ok {
		t.Fatal("a line still being written was taken")
	}
	if err := os.WriteFile(p, []byte("header\nmore\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	born, v, ok := f.Of(p, firstLine)
	if !ok || v != "header" || born.IsZero() {
		t.Fatalf("complete line: %q, born %v, ok %v", v, born, ok)
	}
	if _, v, ok := f.Of(p, firstLine); !ok || v != "header" || reads != 2 {
		t.Errorf("third ask: %q, ok %v, %d reads; want the remembered line, 2 reads", v, ok, reads)
	}
	// A birth time taken first (Born) stays the file's when it is read.
	q := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(q, []byte("header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	first, _ := f.Born(q)
	later := first.Add(-time.Hour)
	if err := os.Chtimes(q, later, later); err != nil {
		t.Fatal(err)
	}
	if b, v, ok := f.Of(q, firstLine); !ok || v != "header" || !b.Equal(first) {
		t.Errorf("read after Born: %q, born %v, ok %v; want born %v", v, b, ok, first)
	}
}
