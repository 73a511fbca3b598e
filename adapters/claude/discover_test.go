package claude_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

func TestClaudeProjectDirName(t *testing.T) {
	// Expected names were measured with Claude Code 2.1.197 (`claude -p hi`
	// run in each folder).
	tests := []struct{ cwd, want string }{
		{"/home/dev/project", "-home-dev-project"},
		{"/tmp/x.y_z w+a@b~c", "-tmp-x-y-z-w-a-b-c"},
		{"/tmp/h4é-Ü", "-tmp-h4---"},
		{"/tmp/h4" + strings.Repeat("a", 230), "-tmp-h4" + strings.Repeat("a", 193) + "-u1drkj"},
	}
	for _, tc := range tests {
		t.Run(tc.cwd[:min(len(tc.cwd), 24)], func(t *testing.T) {
			if got := claude.ProjectDirName(tc.cwd); got != tc.want {
				t.Errorf("ProjectDirName(%q) = %q, want %q", tc.cwd, got, tc.want)
			}
		})
	}
}

func TestClaudeDiscoverer(t *testing.T) {
	cfgDir := t.TempDir()
	cwd := filepath.Join(t.TempDir(), "my.proj_1")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cfgDir, "projects", claude.ProjectDirName(cwd))
	telemetrytest.WriteFile(t, filepath.Join(dir, "oldfork.jsonl"), `{"type":"mode","sessionId":"ccc"}`+"\n")
	launch := telemetrytest.LaunchAfter(t, filepath.Join(dir, "old.jsonl"))
	telemetrytest.WriteFile(t, filepath.Join(dir, "aaa.jsonl"), `{"type":"mode","sessionId":"aaa"}`+"\n")
	time.Sleep(10 * time.Millisecond)
	telemetrytest.WriteFile(t, filepath.Join(dir, "renamed.jsonl"), `{"type":"mode","sessionId":"bbb"}`+"\n")
	telemetrytest.WriteFile(t, filepath.Join(dir, "notes.txt"), "x")

	tests := []struct {
		name      string
		sessionID string
		want      string
	}{
		{"after launch, oldest first", "", "aaa.jsonl renamed.jsonl"},
		{"known id by file name", "aaa", "aaa.jsonl"},
		{"known id even before launch", "old", "old.jsonl"},
		// Claude names a transcript by its session id: another file whose
		// lines carry the id is not the session's (and is not read).
		{"known id not by content", "bbb", ""},
		{"known id not by content before launch", "ccc", ""},
		{"unknown id", "zzz", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &claude.Discoverer{ConfigDir: cfgDir, Cwd: cwd, Launch: launch, Slack: time.Nanosecond, SessionID: tc.sessionID}
			got, err := d.Candidates()
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(telemetrytest.CandPaths(got), " "); s != tc.want {
				t.Errorf("candidates %q, want %q", s, tc.want)
			}
		})
	}
}

func TestDiscoverConcurrentSessionsWithClaims(t *testing.T) {
	cfgDir, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(cfgDir, "projects", claude.ProjectDirName(cwd))
	launch := telemetrytest.LaunchAfter(t)
	telemetrytest.WriteFile(t, filepath.Join(dir, "one.jsonl"), "{}\n")
	time.Sleep(10 * time.Millisecond)
	telemetrytest.WriteFile(t, filepath.Join(dir, "two.jsonl"), "{}\n")

	var set telemetry.ClaimSet
	tests := []struct{ owner, want string }{
		{"ses_A", "one.jsonl"},
		{"ses_B", "two.jsonl"},
		{"ses_A", "one.jsonl"}, // re-discovery by the holder finds its own file
	}
	for _, tc := range tests {
		t.Run(tc.owner, func(t *testing.T) {
			d := &claude.Discoverer{ConfigDir: cfgDir, Cwd: cwd, Launch: launch, Slack: time.Nanosecond}
			c, err := telemetry.Discover(context.Background(), telemetry.DiscoverConfig{Discoverer: d, Claims: set.For(tc.owner), Within: time.Second, Poll: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(c.Path) != tc.want {
				t.Errorf("%s got %s, want %s", tc.owner, c.Path, tc.want)
			}
		})
	}
	// A third session finds nothing left.
	d := &claude.Discoverer{ConfigDir: cfgDir, Cwd: cwd, Launch: launch, Slack: time.Nanosecond}
	_, err := telemetry.Discover(context.Background(), telemetry.DiscoverConfig{Discoverer: d, Claims: set.For("ses_C"), Within: 50 * time.Millisecond, Poll: 10 * time.Millisecond})
	if !errors.Is(err, telemetry.ErrNotFound) {
		t.Errorf("third session: err %v, want ErrNotFound", err)
	}
}

// TestProjectDirNameVariable: CLAUDE_CODE_PROJECT_DIR_NAME (2.1.331)
// renames the project folder discovery reads, when CLAUDE_CONFIG_DIR is
// set and the name is one Claude Code takes; otherwise the folder is
// named after the working folder.
func TestProjectDirNameVariable(t *testing.T) {
	cfgDir, home, cwd := t.TempDir(), t.TempDir(), t.TempDir()
	def := func(base string) string { return filepath.Join(base, "projects", claude.ProjectDirName(cwd)) }
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"CLAUDE_CONFIG_DIR=" + cfgDir, "CLAUDE_CODE_PROJECT_DIR_NAME=team_proj-1"}, filepath.Join(cfgDir, "projects", "team_proj-1")},
		{[]string{"CLAUDE_CONFIG_DIR=" + cfgDir}, def(cfgDir)},
		{[]string{"HOME=" + home, "CLAUDE_CODE_PROJECT_DIR_NAME=team"}, def(filepath.Join(home, ".claude"))},
		{[]string{"CLAUDE_CONFIG_DIR=" + cfgDir, "CLAUDE_CODE_PROJECT_DIR_NAME=a.b"}, def(cfgDir)},
		{[]string{"CLAUDE_CONFIG_DIR=" + cfgDir, "CLAUDE_CODE_PROJECT_DIR_NAME=COM1"}, def(cfgDir)},
		{[]string{"CLAUDE_CONFIG_DIR=" + cfgDir, "CLAUDE_CODE_PROJECT_DIR_NAME=" + strings.Repeat("x", 65)}, def(cfgDir)},
	} {
		src, err := claude.Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: tc.env, Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		if got := src.Discoverer.Roots(); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%v: roots %v, want %s", tc.env, got, tc.want)
		}
	}
}

// TestClaudeTranscriptRootsAreFlat: the folder watchers watch Claude's
// project folder alone and never list it: a transcript is a file of the
// folder itself, and the folders beside it (a session's subagents and
// tool results) hold none that lifeloop follows.
func TestClaudeTranscriptRootsAreFlat(t *testing.T) {
	src, err := claude.Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=" + t.TempDir()}, Cwd: t.TempDir(), SessionID: "0b4bb0f4-4ef4-4c1e-9c55-0d5b2e4c9a11"})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := src.Discoverer.(telemetry.FlatRoots); !ok || !f.FlatRoots() {
		t.Fatalf("Claude's transcript discoverer (%T) does not say its roots are flat", src.Discoverer)
	}
}
