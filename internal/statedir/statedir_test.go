package statedir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		flag    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"flag wins", "/x/flag", map[string]string{"LIFELOOP_STATE_DIR": "/x/env", "HOME": "/h"}, "/x/flag", ""},
		{"env var", "", map[string]string{"LIFELOOP_STATE_DIR": "/x/env", "XDG_STATE_HOME": "/xdg", "HOME": "/h"}, "/x/env", ""},
		{"xdg", "", map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/h"}, "/xdg/lifeloop", ""},
		{"relative xdg ignored", "", map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/h"}, "/h/.local/state/lifeloop", ""},
		{"home", "", map[string]string{"HOME": "/h"}, "/h/.local/state/lifeloop", ""},
		{"nothing", "", map[string]string{}, "", "HOME is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.flag, envOf(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Resolve = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	t.Run("relative flag made absolute", func(t *testing.T) {
		got, err := Resolve("rel/dir", nil)
		if err != nil || !filepath.IsAbs(got) || !strings.HasSuffix(got, "rel/dir") {
			t.Fatalf("Resolve = %q, %v", got, err)
		}
	})
}

func TestEnsurePermissions(t *testing.T) {
	base := t.TempDir()
	t.Run("creates 0700", func(t *testing.T) {
		dir := filepath.Join(base, "a", "b")
		if err := Ensure(dir); err != nil {
			t.Fatal(err)
		}
		assertPerm(t, dir, DirPerm)
	})
	t.Run("tightens loose folder", func(t *testing.T) {
		dir := filepath.Join(base, "loose")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := Ensure(dir); err != nil {
			t.Fatal(err)
		}
		assertPerm(t, dir, DirPerm)
	})
	t.Run("refuses a file", func(t *testing.T) {
		p := filepath.Join(base, "file")
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Ensure(p); err == nil {
			t.Fatal("Ensure on a file succeeded")
		}
	})
	t.Run("refuses another owner", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to chown a folder to another user")
		}
		dir := filepath.Join(base, "foreign")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, 12345, 12345); err != nil {
			t.Fatal(err)
		}
		err := Ensure(dir)
		if err == nil || !strings.Contains(err.Error(), "owned by uid 12345") {
			t.Fatalf("err = %v, want ownership refusal", err)
		}
	})
}

func assertPerm(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Fatalf("%s mode %o, want %o", path, got, want)
	}
}

func TestValidateSessionID(t *testing.T) {
	tests := []struct {
		id string
		ok bool
	}{
		{"ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F", true},
		{"my-session_1", true},
		{"", false},
		{"..", false},
		{"a/b", false},
		{"../ses_x", false},
		{"ses x", false},
		{strings.Repeat("a", 129), false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if err := ValidateSessionID(tt.id); (err == nil) != tt.ok {
				t.Fatalf("ValidateSessionID(%q) = %v, want ok=%v", tt.id, err, tt.ok)
			}
		})
	}
}

func TestSessionStateIsTerminal(t *testing.T) {
	terminal := map[SessionState]bool{
		StateCompleted: true, StateFailed: true, StateAborted: true, StateRejected: true, StateLost: true,
	}
	for _, s := range SessionStates {
		t.Run(string(s), func(t *testing.T) {
			if s.IsTerminal() != terminal[s] {
				t.Fatalf("IsTerminal = %v, want %v", s.IsTerminal(), terminal[s])
			}
			if !s.Valid() {
				t.Fatal("not Valid")
			}
		})
	}
	if SessionState("bogus").Valid() || SessionState("bogus").IsTerminal() {
		t.Fatal("bogus state accepted")
	}
}

func TestSessionRoundTripAndList(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state")
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	at := func(m int) *time.Time { x := t0.Add(time.Duration(m) * time.Minute); return &x }

	if _, err := Latest(root); !errors.Is(err, ErrSessionNotFound) {
		t.Fatalf("Latest on empty root: %v", err)
	}
	recs := []SessionRecord{
		{ID: "ses_a", State: StateCompleted, AdapterID: "codex", Argv: []string{"codex"}, Pid: 11, StartedAt: at(1), EndedAt: at(2),
			Exit: &ExitInfo{Code: 0, Outcome: "success"}, UpdatedAt: *at(2)},
		{ID: "ses_c", State: StateRunning, AdapterID: "claude", Argv: []string{"claude", "--model", "opus"}, Pid: 12, StartedAt: at(5), UpdatedAt: *at(5)},
		{ID: "ses_b", State: StatePending, AdapterID: "generic", UpdatedAt: *at(3)},
	}
	for _, r := range recs {
		if err := WriteSession(root, r); err != nil {
			t.Fatal(err)
		}
	}
	assertPerm(t, root, DirPerm)
	assertPerm(t, SessionDir(root, "ses_a"), DirPerm)
	if _, err := os.Stat(ContinuationPath(root, "ses_a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("continuation/ exists before any payload is stored (%v)", err)
	}
	assertPerm(t, SessionPath(root, "ses_a"), FilePerm)

	got, err := ReadSession(root, "ses_a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != SessionSchemaV1 || got.Exit == nil || got.Exit.Outcome != "success" || !got.EndedAt.Equal(*at(2)) {
		t.Fatalf("round trip lost data: %+v", got)
	}
	if got, _ := ReadSession(root, "ses_b"); got.Argv == nil || got.HarnessSessionIDs == nil {
		t.Fatalf("nil slices not normalised: %+v", got)
	}
	if _, err := ReadSession(root, "ses_missing"); !errors.Is(err, ErrSessionNotFound) {
		t.Fatalf("missing session: %v", err)
	}

	// An unreadable session is reported but does not hide the others.
	if err := os.MkdirAll(SessionDir(root, "ses_broken"), DirPerm); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(SessionPath(root, "ses_broken"), []byte(`{"schema":"lifeloop.session.v1","surprise":1}`), FilePerm); err != nil {
		t.Fatal(err)
	}
	// A folder without session.json (a session being created) is skipped
	// silently.
	if err := os.MkdirAll(SessionDir(root, "ses_creating"), DirPerm); err != nil {
		t.Fatal(err)
	}
	list, err := ListSessions(root)
	if err != nil && strings.Contains(err.Error(), "ses_creating") {
		t.Fatalf("folder without a record reported: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "ses_broken") {
		t.Fatalf("ListSessions err = %v, want a report of ses_broken", err)
	}
	var order []string
	for _, r := range list {
		order = append(order, r.ID)
	}
	if strings.Join(order, ",") != "ses_c,ses_b,ses_a" {
		t.Fatalf("order = %v, want newest first", order)
	}
	latest, err := Latest(root)
	if err != nil || latest.ID != "ses_c" {
		t.Fatalf("Latest = %v, %v", latest.ID, err)
	}
}

func TestWriteSessionRejects(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name string
		rec  SessionRecord
	}{
		{"bad state", SessionRecord{ID: "ses_x", State: "zombie"}},
		{"bad id", SessionRecord{ID: "../x", State: StateRunning}},
		{"bad schema", SessionRecord{ID: "ses_x", State: StateRunning, Schema: "v9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := WriteSession(root, tt.rec); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestReadSessionFileRejects: every malformed session.json is refused,
// and only one that is not a record at all (empty, torn, not JSON) wraps
// ErrNotARecord — a record a newer lifeloop wrote (a field this one does
// not know) must not be taken for a torn one and rebuilt over.
func TestReadSessionFileRejects(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]struct {
		body     string
		notARecd bool
	}{
		"empty":          {"", true},
		"not json":       {"{", true},
		"torn":           {`{"schema":"lifeloop.session.v1","id":"s","sta`, true},
		"unknown field":  {`{"schema":"lifeloop.session.v1","id":"s","state":"running","extra":true}`, false},
		"unknown schema": {`{"schema":"lifeloop.session.v9","id":"s","state":"running"}`, false},
		"bad state":      {`{"schema":"lifeloop.session.v1","id":"s","state":"weird"}`, false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
			if err := os.WriteFile(p, []byte(tt.body), FilePerm); err != nil {
				t.Fatal(err)
			}
			_, err := ReadSessionFile(p)
			if err == nil {
				t.Fatal("accepted")
			}
			if got := errors.Is(err, ErrNotARecord); got != tt.notARecd {
				t.Fatalf("errors.Is(%v, ErrNotARecord) = %v, want %v", err, got, tt.notARecd)
			}
		})
	}
}

// TestSessionTerminalRoundTrips: the terminal a session was started on is
// written and read back; a record without one has no "terminal" key.
func TestSessionTerminalRoundTrips(t *testing.T) {
	root := t.TempDir()
	term := &Terminal{TTY: "/dev/pts/3", TmuxPane: "%3", TmuxSocket: "/tmp/tmux-1000/default", Screen: "1.pts-3.h"}
	if err := WriteSession(root, SessionRecord{ID: "ses_T", State: StateRunning, Terminal: term}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSession(root, "ses_T")
	if err != nil {
		t.Fatal(err)
	}
	if got.Terminal == nil || *got.Terminal != *term {
		t.Errorf("terminal read back %+v, want %+v", got.Terminal, term)
	}
	if err := WriteSession(root, SessionRecord{ID: "ses_N", State: StateRunning}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(SessionPath(root, "ses_N"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "terminal") {
		t.Errorf("a record without a terminal names one: %s", data)
	}
}
