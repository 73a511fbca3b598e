package telemetry

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHeadCacheRereadsOnlyChangedFiles: a miss is remembered until the
// file's size or modification time changes.
func TestHeadCacheRereadsOnlyChangedFiles(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	needle := []byte(`"sessionId":"abc"`)
	if err := os.WriteFile(p, []byte(`{"sessionId":"xyz"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	var h HeadCache
	if h.Contains(p, needle) {
		t.Fatal("needle found in a file without it")
	}
	// Same size, same time: the remembered miss stands, the file is not read.
	if err := os.WriteFile(p, []byte(`{"sessionId":"abc"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, at, at); err != nil {
		t.Fatal(err)
	}
	if h.Contains(p, needle) {
		t.Fatal("an unchanged file was read again")
	}
	if !HeadContains(p, needle) {
		t.Fatal("HeadContains misses the needle")
	}
	// A new modification time: read again.
	if err := os.Chtimes(p, at.Add(time.Minute), at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if !h.Contains(p, needle) {
		t.Fatal("a changed file was not read again")
	}
	if h.Contains(filepath.Join(t.TempDir(), "missing"), needle) {
		t.Fatal("a missing file contains the needle")
	}
}
