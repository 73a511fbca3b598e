package telemetry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// watchWrites makes dirs under root, runs dw on it, writes files (paths
// under root, the last one where dw must see it) once dw watches, and
// returns the paths dw notified up to the last file's, with Run ended, so
// that what dw's Skip recorded can be read. It skips the test where
// fsnotify is unavailable.
func watchWrites(t *testing.T, dw *DirWatcher, root string, dirs, files []string) []string {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
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
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	last := filepath.Join(root, files[len(files)-1])
	var seen []string
	deadline := time.After(waitLimit)
	for {
		select {
		case p := <-paths:
			seen = append(seen, p)
			if p == last {
				cancel()
				<-done
				return seen
			}
		case <-deadline:
			t.Fatalf("no notification for %s (got %v)", last, seen)
		}
	}
}

// TestDirWatcherSkipsFolders: a folder Skip names is neither watched nor
// walked: a file written there brings no notification, while one written
// after it in a watched folder does.
func TestDirWatcherSkipsFolders(t *testing.T) {
	root := t.TempDir()
	var walked []string
	dw := &DirWatcher{Roots: []string{root}, SafetyPoll: time.Hour, Skip: func(dir string) bool {
		walked = append(walked, dir) // only from Run's goroutine
		return filepath.Base(dir) == "skip"
	}}
	seen := watchWrites(t, dw, root,
		[]string{"keep", "skip", filepath.Join("skip", "deeper")},
		[]string{filepath.Join("skip", "a.jsonl"), filepath.Join("skip", "deeper", "b.jsonl"), filepath.Join("keep", "c.jsonl")})
	for _, p := range seen {
		if strings.Contains(p, string(filepath.Separator)+"skip") {
			t.Errorf("notified of %s in a skipped folder", p)
		}
	}
	for _, w := range walked {
		if strings.HasSuffix(w, "deeper") {
			t.Errorf("walked %s under a skipped folder", w)
		}
	}
}

// TestDirWatcherFlat: a Flat watcher watches its root alone: a file
// written in a folder below it brings no notification (nor is the folder
// offered to Skip, so it was not listed), while one written after it in
// the root does.
func TestDirWatcherFlat(t *testing.T) {
	root := t.TempDir()
	var listed []string
	dw := &DirWatcher{Roots: []string{root}, SafetyPoll: time.Hour, Flat: true, Skip: func(dir string) bool {
		listed = append(listed, dir) // only from Run's goroutine
		return false
	}}
	seen := watchWrites(t, dw, root,
		[]string{filepath.Join("session", "subagents")},
		[]string{filepath.Join("session", "subagents", "a.jsonl"), filepath.Join("session", "b.jsonl"), "c.jsonl"})
	for _, p := range seen {
		if strings.Contains(p, string(filepath.Separator)+"session") {
			t.Errorf("notified of %s below a flat root", p)
		}
	}
	if len(listed) > 0 {
		t.Errorf("listed %v below a flat root", listed)
	}
}
