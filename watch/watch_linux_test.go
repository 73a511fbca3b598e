package watch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
)

// TestInterruptRecordsWhatWasWritten: a watch interrupted right after
// the harness appended its turn (the file's events not yet taken) still
// records it: the interrupted watch has as many receipts as one that
// ends after an idle wait.
func TestInterruptRecordsWhatWasWritten(t *testing.T) {
	turn, err := os.ReadFile(filepath.Join("..", "adapters", "claude", "testdata", "claude-tool-turn.transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(interrupt bool) Result {
		dir := t.TempDir()
		path := filepath.Join(dir, "transcript.jsonl")
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		o := Options{
			StateDir: filepath.Join(dir, "state"), Adapter: "claude", Registry: builtin.Default(),
			Path: path, Cwd: dir, Env: []string{"HOME=" + dir},
			OnSession: func(string, string) {
				go func() {
					// Once the watch follows the file, the harness writes its
					// turn and, interrupted, the watch ends at once.
					waitOpened(t, path)
					f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
					if err == nil {
						_, err = f.Write(turn)
						_ = f.Close()
					}
					if err != nil {
						t.Error(err)
					}
					if interrupt {
						cancel()
					}
				}()
			},
		}
		if !interrupt {
			o.UntilIdle = time.Second
		}
		res, err := Run(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	idle, interrupted := run(false), run(true)
	if idle.Reason != "idle" || interrupted.Reason != "interrupted" {
		t.Fatalf("reasons %q and %q", idle.Reason, interrupted.Reason)
	}
	if idle.Receipts < 5 || interrupted.Receipts != idle.Receipts {
		t.Errorf("interrupted at once: %d receipts, after an idle wait: %d", interrupted.Receipts, idle.Receipts)
	}
}

// waitOpened waits until this process holds path open: the watch follows it.
func waitOpened(t *testing.T, path string) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, fd := range fds {
			if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && p == path {
				return
			}
		}
	}
	t.Error("the watch never opened " + path)
}
