package telemetry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDirWatcherSkipsFolders: a folder Skip names is neither watched nor
// walked: a file written there brings no notification, while one written
// after it in a watched folder does.
func TestDirWatcherSkipsFolders(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"keep", "skip", filepath.Join("skip", "deeper")} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var walked []string
	dw := &DirWatcher{Roots: []string{root}, SafetyPoll: time.Hour, Skip: func(dir string) bool {
		walked = append(walked, dir) // only from Run's goroutine
		return filepath.Base(dir) == "skip"
	}}
	ctx, cancel := context.WithCancel(context.Background())
	ready, paths, done := make(chan TailMode, 1), make(chan string, 64), make(chan struct{})
	go func() {
		defer close(done)
		_ = dw.Run(ctx, func(m TailMode, _ error) { ready <- m }, func(p string) { paths <- p })
	}()
	defer func() { cancel(); <-done }()
	if m := <-ready; m != ModeNotify {
		t.Skipf("fsnotify unavailable here (mode %v)", m)
	}
	for _, f := range []string{filepath.Join("skip", "a.jsonl"), filepath.Join("skip", "deeper", "b.jsonl"), filepath.Join("keep", "c.jsonl")} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(waitLimit)
	for {
		select {
		case p := <-paths:
			if strings.Contains(p, string(filepath.Separator)+"skip") {
				t.Fatalf("notified of %s in a skipped folder", p)
			}
			if filepath.Base(p) == "c.jsonl" {
				cancel()
				<-done
				for _, w := range walked {
					if strings.HasSuffix(w, "deeper") {
						t.Errorf("walked %s under a skipped folder", w)
					}
				}
				return
			}
		case <-deadline:
			t.Fatal("no notification for the file in the watched folder")
		}
	}
}

// TestDirWatcherFlat: a Flat watcher watches its root alone: a file
// written in a folder below it brings no notification (nor is the folder
// offered to Skip, so it was not listed), while one written after it in
// the root does.
func TestDirWatcherFlat(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "session", "subagents"), 0o700); err != nil {
		t.Fatal(err)
	}
	var listed []string
	dw := &DirWatcher{Roots: []string{root}, SafetyPoll: time.Hour, Flat: true, Skip: func(dir string) bool {
		listed = append(listed, dir) // only from Run's goroutine
		return false
	}}
	ctx, cancel := context.WithCancel(context.Background())
	ready, paths, done := make(chan TailMode, 1), make(chan string, 64), make(chan struct{})
	go func() {
		defer close(done)
		_ = dw.Run(ctx, func(m TailMode, _ error) { ready <- m }, func(p string) { paths <- p })
	}()
	defer func() { cancel(); <-done }()
	if m := <-ready; m != ModeNotify {
		t.Skipf("fsnotify unavailable here (mode %v)", m)
	}
	for _, f := range []string{filepath.Join("session", "subagents", "a.jsonl"), filepath.Join("session", "b.jsonl"), "c.jsonl"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(waitLimit)
	for {
		select {
		case p := <-paths:
			if strings.Contains(p, string(filepath.Separator)+"session"+string(filepath.Separator)) {
				t.Fatalf("notified of %s below a flat root", p)
			}
			if filepath.Base(p) == "c.jsonl" {
				cancel()
				<-done
				if len(listed) > 0 {
					t.Errorf("listed %v below a flat root", listed)
				}
				return
			}
		case <-deadline:
			t.Fatal("no notification for the file in the root")
		}
	}
}
