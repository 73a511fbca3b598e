// Package handofftest checks a harness's handoff reader against golden
// notes: the note of a session file, with fixed session and git facts,
// is compared with testdata/handoff/<name>.golden (rewritten when the
// test runs with -update).
package handofftest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/handoff"
)

// Note returns the note of the session file at path read by r, with
// fixed facts (harness named harness, the file by its base name, so
// that a temporary folder does not change the note) and git state,
// bounded by maxBytes (0: the default).
func Note(t *testing.T, r adapters.HandoffReader, harness, path string, maxBytes int) string {
	t.Helper()
	return NoteAs(t, r, harness, path, filepath.Base(path), maxBytes)
}

// NoteAs is Note with the session file shown as shown.
func NoteAs(t *testing.T, r adapters.HandoffReader, harness, path, shown string, maxBytes int) string {
	t.Helper()
	items, skipped, err := handoff.Collect(r, path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return handoff.Render(handoff.Note{
		Facts: handoff.Facts{
			SessionID: "0000golden", Harness: harness, Cwd: "/home/dev/project",
			Started: "2026-11-21T22:12:16Z", Renewals: 1, SessionFile: shown, Skipped: skipped,
		},
		Items: items,
		Git:   handoff.Git{Branch: "main", Changed: []string{" M README.md", "?? notes.txt"}},
	}, maxBytes)
}

// Golden compares got with testdata/handoff/<name>.golden, or writes it
// there when update is set.
func Golden(t *testing.T, name, got string, update bool) {
	t.Helper()
	path := filepath.Join("testdata", "handoff", name+".golden")
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("the note of %s differs from %s (run with -update after checking it):\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}
