package claude_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
)

// TestParseAgents: `claude agents --json` as Claude 2.1.332 printed it
// for two of a person's own `claude --bg` sessions (recorded offline
// against the mock by e2e TestClaudeAgentsInTop, folder rewritten).
func TestParseAgents(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "agents.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := claude.ParseAgents(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []adapters.ExternalSession{
		{ID: "f06bddaa", SessionID: "f06bddaa-562a-4885-bc56-08ab67d7681e", Pid: 32738, Cwd: "/home/dev/project", Name: "say hi",
			State: "working", Status: "busy", StartedAt: time.UnixMilli(1796282990160).UTC(), Source: "claude agents", Attach: "claude attach f06bddaa"},
		{ID: "bd0b28a8", SessionID: "bd0b28a8-e6e6-4ad4-9204-c280ef145baf", Pid: 32742, Cwd: "/home/dev/project", Name: "agents reply from the mock",
			State: "working", Status: "idle", StartedAt: time.UnixMilli(1796282990232).UTC(), Source: "claude agents", Attach: "claude attach bd0b28a8"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

// TestParseAgentsShapes: the other shapes Claude 2.1.332's
// printAgentsJson writes (read from its code, not recorded here): an
// interactive session (left out: a TUI, not a background session), a
// job Claude counts as working whose process is not registered (no
// pid), a registered background session the daemon runs as no job (no
// id, no state: named by its session id, no attach command), one
// waiting for a person (status waiting, waitingFor).
func TestParseAgentsShapes(t *testing.T) {
	const out = `[
  {"pid": 4396, "cwd": "/home/dev/project", "kind": "interactive", "startedAt": 1796187600000, "sessionId": "11111111-1111-4111-8111-111111111111", "name": "project-f8", "status": "idle"},
  {"id": "2c890b76", "cwd": "/home/dev/project", "kind": "background", "startedAt": 1796187693764, "sessionId": "2c890b76-0000-4000-8000-000000000000", "name": "queued", "state": "working"},
  {"pid": 7501, "cwd": "/home/dev/other", "kind": "background", "startedAt": 1796187699000, "sessionId": "33333333-3333-4333-8333-333333333333", "status": "busy"},
  {"pid": 7502, "id": "44444444", "cwd": "/home/dev/project", "kind": "background", "startedAt": 1796187699500, "sessionId": "44444444-4444-4444-8444-444444444444", "status": "waiting", "waitingFor": "permission", "state": "blocked"}
]`
	got, err := claude.ParseAgents([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d sessions, want 3 (the interactive one left out): %+v", len(got), got)
	}
	if s := got[0]; s.ID != "2c890b76" || s.Pid != 0 || s.State != "working" || s.Attach != "claude attach 2c890b76" {
		t.Errorf("the job without a process: %+v", s)
	}
	if s := got[1]; s.ID != s.SessionID || s.Attach != "" || s.State != "" || s.Status != "busy" || s.Cwd != "/home/dev/other" {
		t.Errorf("the session that is no job: %+v", s)
	}
	if s := got[2]; s.Status != "waiting" || s.WaitingFor != "permission" || s.State != "blocked" {
		t.Errorf("the waiting session: %+v", s)
	}
	if _, err := claude.ParseAgents([]byte("Usage: claude agents ...")); err == nil || !strings.Contains(err.Error(), "claude agents --json") {
		t.Errorf("not JSON: %v", err)
	}
}

// fakeClaude writes a claude program into a folder of its own that runs
// script, and returns the folder.
func fakeClaude(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "claude"), []byte("#!/bin/sh\n"+script), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestListExternal: claude runs (its `agents --json`) only when Claude's
// session registry names a background session (kind "bg", as 2.1.332
// writes it: testdata/background/claude-bg-session-registry.json); its answer is parsed; one that
// does not come within the caller's bound is an error that says so,
// returned once the bound is over; a failing claude's first line of
// errors is said.
func TestListExternal(t *testing.T) {
	home := t.TempDir()
	ran := filepath.Join(home, "ran")
	bin := fakeClaude(t, `echo "$@" > `+ran+`
printf '%s\n' '[{"pid": 7, "id": "abcdef01", "cwd": "/w", "kind": "background", "startedAt": 1, "sessionId": "abcdef01-0000-4000-8000-000000000000", "status": "idle", "state": "working"}]'
`)
	env := []string{"HOME=" + home, "PATH=" + bin}
	h := claude.Harness{}
	got, err := h.ListExternal(context.Background(), env)
	if err != nil || got != nil {
		t.Fatalf("no registry: %+v, %v", got, err)
	}
	if _, err := os.Stat(ran); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("claude ran with no session registered: %v", err)
	}
	reg := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(reg, 0o700); err != nil {
		t.Fatal(err)
	}
	// An interactive session only: nothing runs.
	if err := os.WriteFile(filepath.Join(reg, "6.json"), []byte(`{"pid":6,"kind":"interactive"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := h.ListExternal(context.Background(), env); err != nil || got != nil {
		t.Fatalf("interactive only: %+v, %v", got, err)
	}
	if _, err := os.Stat(ran); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("claude ran with no background session registered: %v", err)
	}
	recorded, err := os.ReadFile(filepath.Join("testdata", "background", "claude-bg-session-registry.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reg, "7.json"), recorded, 0o600); err != nil {
		t.Fatal(err)
	}
	// The stamp follows the registry (and the jobs' states).
	stamp := h.ExternalStamp(env)
	if stamp == "" || h.ExternalStamp(env) != stamp {
		t.Errorf("stamp %q, then %q", stamp, h.ExternalStamp(env))
	}
	if err := os.WriteFile(filepath.Join(reg, "7.json"), []byte(`{"pid":7,"kind":"bg","status":"busy"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if h.ExternalStamp(env) == stamp {
		t.Error("the stamp did not change with the registry file")
	}
	job := filepath.Join(home, ".claude", "jobs", "abcdef01")
	if err := os.MkdirAll(job, 0o700); err != nil {
		t.Fatal(err)
	}
	stamp = h.ExternalStamp(env)
	if err := os.WriteFile(filepath.Join(job, "state.json"), []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if h.ExternalStamp(env) == stamp {
		t.Error("the stamp did not change with a job's state")
	}
	if got, err := h.ListExternal(context.Background(), []string{"HOME=" + home, "PATH=/nonexistent"}); err != nil || got != nil {
		t.Fatalf("no claude on PATH: %+v, %v", got, err)
	}
	got, err = h.ListExternal(context.Background(), env)
	if err != nil || len(got) != 1 || got[0].ID != "abcdef01" || got[0].Pid != 7 {
		t.Fatalf("listed %+v, %v", got, err)
	}
	if b, _ := os.ReadFile(ran); strings.TrimSpace(string(b)) != "agents --json" {
		t.Errorf("claude ran with %q", b)
	}

	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	slow := fakeClaude(t, "exec "+sleep+" 30\n")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = h.ListExternal(ctx, []string{"HOME=" + home, "PATH=" + slow})
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("slow claude: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("slow claude held the listing %s", d)
	}

	failing := fakeClaude(t, "echo 'error: no such command' >&2\necho more >&2\nexit 3\n")
	_, err = h.ListExternal(context.Background(), []string{"HOME=" + home, "PATH=" + failing})
	if err == nil || !strings.Contains(err.Error(), "exit 3: error: no such command") {
		t.Errorf("failing claude: %v", err)
	}
}

// BenchmarkExternalStamp: what top's live view pays every 2 s to know
// whether to run `claude agents` again, with 10 live sessions and 200
// jobs' states in Claude's folder (one `claude agents --json` costs
// about 0.35 s of processor time: README "lifeloop top").
func BenchmarkExternalStamp(b *testing.B) {
	home := b.TempDir()
	for i := range 10 {
		dir := filepath.Join(home, ".claude", "sessions")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(1000+i)+".json"), []byte(`{}`), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 200 {
		dir := filepath.Join(home, ".claude", "jobs", strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{}`), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	env := []string{"HOME=" + home}
	h := claude.Harness{}
	for b.Loop() {
		_ = h.ExternalStamp(env)
	}
}
