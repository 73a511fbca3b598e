package fleet

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestListenerStoppedMidCommand: a listener stopped while its command
// was being done neither answers nor keeps a failure, so the next
// listener does the command (or finds the wrapper's kept answer).
func TestListenerStoppedMidCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "answers"), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := ListenerConfig{Machine: "m1", Secret: []byte("s"), Dir: dir, Now: time.Now,
		Do: func(ctx context.Context, _ Command) (string, error) { cancel(); <-ctx.Done(); return "", ctx.Err() }}
	b, err := Seal(Command{ID: "c1", Machine: "m1", Session: "ses_A", Op: "abort"}, []byte("s"))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := handle(ctx, cfg, b); ok {
		t.Fatalf("stopped mid-command, handle answered %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "answers", "c1.json")); !os.IsNotExist(err) {
		t.Errorf("an answer was kept for a command stopped mid-way: %v", err)
	}
	cfg.Do = func(context.Context, Command) (string, error) { return "aborting", nil }
	if r := handled(t, cfg, b); r.Status != ResultDone || r.Repeat {
		t.Errorf("the next listener: %+v, want done, not a repeat", r)
	}
}

// TestListenerLockOnePerFolder: one holder of a folder's listener lock
// at a time (two opens in one process conflict as two processes do);
// closing it lets the next take it, and ListenWhenFree waits for it.
func TestListenerLockOnePerFolder(t *testing.T) {
	dir := t.TempDir()
	f, held, err := TryListenerLock(dir)
	if err != nil || !held {
		t.Fatalf("first: held %v, err %v", held, err)
	}
	if _, held2, err := TryListenerLock(dir); err != nil || held2 {
		t.Fatalf("second while the first holds it: held %v, err %v", held2, err)
	}
	var logs strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cfg := ListenerConfig{Dir: dir, Logger: newTextLogger(&logs)}
	if err := ListenWhenFree(ctx, cfg, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "waiting for its lock"); n != 1 {
		t.Errorf("%d waiting lines, want 1:\n%s", n, logs.String())
	}
	_ = f.Close()
	g, held, err := TryListenerLock(dir)
	if err != nil || !held {
		t.Fatalf("after the first let go: held %v, err %v", held, err)
	}
	_ = g.Close()
	if fi, err := os.Stat(filepath.Join(dir, ListenerLock)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v %v, want 0600", fi, err)
	}
}

func newTextLogger(w *strings.Builder) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }
