package handoff

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// lineReader is a HandoffReader whose every line is a prompt.
type lineReader struct{}

func (lineReader) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	return adapters.ScanHandoffLines(path, func(b []byte) bool {
		if strings.HasPrefix(string(b), "bad") {
			return false
		}
		add(adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: string(b)})
		return true
	})
}

// session records a session whose ledger holds summaries, in order.
func session(t *testing.T, summaries ...map[string]any) (string, statedir.SessionRecord) {
	t.Helper()
	root := t.TempDir()
	started := time.Date(2026, 12, 1, 10, 0, 0, 0, time.FixedZone("x", 3600))
	rec := statedir.SessionRecord{ID: "ses_test", State: statedir.StateRunning, AdapterID: "h", Cwd: "/w", StartedAt: &started}
	if _, err := statedir.CreateSessionDir(root, rec.ID); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(statedir.ReceiptsPath(root, rec.ID), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, s := range summaries {
		ev := contract.EventFrameEnded
		if s["reason"] == "renewal" {
			ev = contract.EventSessionStarted
		}
		r := contract.LifecycleReceipt{ClientID: "c", AdapterID: "h", InvocationID: "inv", Event: ev, EventID: "e", IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, TelemetrySummary: s}
		if _, _, err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	return root, rec
}

// TestLedgerFacts: the last session file a receipt names (after a
// renewal, the new one), the renewals started, the start in UTC.
func TestLedgerFacts(t *testing.T) {
	root, rec := session(t,
		map[string]any{"source": "transcript", "path": "/old.jsonl"},
		map[string]any{"reason": "renewal", "renewal_step": "started"},
		map[string]any{"source": "transcript", "path": "/new.jsonl"},
		map[string]any{"reason": "renewal", "renewal_step": "started"},
		map[string]any{"source": "operator"},
	)
	f := LedgerFacts(root, rec)
	want := Facts{SessionID: "ses_test", Harness: "h", Cwd: "/w", Started: "2026-12-01T09:00:00Z", Renewals: 2, SessionFile: "/new.jsonl"}
	if f != want {
		t.Errorf("facts %+v, want %+v", f, want)
	}
}

// TestSessionNote: the note of the file the ledger names, its bad line
// counted; a ledger naming no file and a file that cannot be read are
// the errors the command tells apart.
func TestSessionNote(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte("first prompt\nbad line\nsecond prompt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noGit := func(context.Context, string) Git { return Git{Unavailable: "test"} }
	root, rec := session(t, map[string]any{"source": "transcript", "path": file})
	w, err := SessionNote(t.Context(), root, rec, lineReader{}, Options{Git: noGit})
	if err != nil || w.CommandFailed != nil {
		t.Fatal(err, w.CommandFailed)
	}
	note := w.Note
	for _, want := range []string{"- session file: " + file + "\n", "- unreadable lines skipped: 1\n", "> first prompt\n\n> second prompt\n"} {
		if !strings.Contains(note, want) {
			t.Errorf("note lacks %q:\n%s", want, note)
		}
	}
	root, rec = session(t, map[string]any{"source": "operator"})
	if _, err := SessionNote(t.Context(), root, rec, lineReader{}, Options{Git: noGit}); !errors.Is(err, ErrNoSessionFile) {
		t.Errorf("no file named: %v, want ErrNoSessionFile", err)
	}
	if _, err := SessionNote(t.Context(), root, rec, lineReader{}, Options{Git: noGit, SessionFile: file + ".gone"}); !errors.Is(err, adapters.ErrHandoffUnreadable) {
		t.Errorf("missing file: %v, want ErrHandoffUnreadable", err)
	}
}

// TestGitState: a repository's branch before its first commit and its
// changed files; a folder outside any repository says why.
func TestGitState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Setenv("HOME", t.TempDir()) // no configuration of the machine's
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	if g := GitState(t.Context(), dir); g.Unavailable == "" || !strings.Contains(g.Unavailable, "not a git repository") {
		t.Errorf("outside a repository: %+v", g)
	}
	cmd := exec.CommandContext(t.Context(), "git", "init", "-q", "-b", "topic", dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := GitState(t.Context(), dir)
	if g.Unavailable != "" || g.Branch != "topic" || len(g.Changed) != 1 || g.Changed[0] != "?? new.txt" {
		t.Errorf("git state %+v", g)
	}
}

// A harness with no HandoffReader gets its note from the command alone:
// the command's note when it succeeds, ErrNoReader (and the command's
// failure) when it fails or none was given.
func TestSessionNoteWithoutReader(t *testing.T) {
	root, rec := session(t)
	rec.Cwd = t.TempDir() // the command runs in the session's folder
	ok := &Command{Script: `printf '# from the command\n'`, MaxBytes: 1024, Timeout: 5 * time.Second}
	w, err := SessionNote(context.Background(), root, rec, nil, Options{Command: ok})
	if err != nil || w.Note != "# from the command\n" || w.CommandFailed != nil {
		t.Fatalf("with a command: note %q, failed %v, err %v", w.Note, w.CommandFailed, err)
	}
	bad := &Command{Script: `exit 3`, MaxBytes: 1024, Timeout: 5 * time.Second}
	w, err = SessionNote(context.Background(), root, rec, nil, Options{Command: bad})
	if !errors.Is(err, ErrNoReader) || w.CommandFailed == nil || w.Note != "" {
		t.Fatalf("with a failing command: note %q, failed %v, err %v", w.Note, w.CommandFailed, err)
	}
	if _, err := SessionNote(context.Background(), root, rec, nil, Options{}); !errors.Is(err, ErrNoReader) {
		t.Fatalf("with no command: err %v, want ErrNoReader", err)
	}
}
