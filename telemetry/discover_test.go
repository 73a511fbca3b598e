package telemetry

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
			if got := ClaudeProjectDirName(tc.cwd); got != tc.want {
				t.Errorf("ClaudeProjectDirName(%q) = %q, want %q", tc.cwd, got, tc.want)
			}
		})
	}
}

// launchAfter creates the given files, returns a launch time after them,
// and makes sure files created afterwards are born later (file system
// clocks are coarse; the pause orders events, it asserts nothing).
func launchAfter(t *testing.T, paths ...string) time.Time {
	t.Helper()
	for _, p := range paths {
		writeFile(t, p, "{}\n")
	}
	launch := time.Now()
	time.Sleep(30 * time.Millisecond)
	return launch
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func candPaths(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, filepath.Base(c.Path))
	}
	return out
}

func TestClaudeDiscoverer(t *testing.T) {
	cfgDir := t.TempDir()
	cwd := filepath.Join(t.TempDir(), "my.proj_1")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cfgDir, "projects", ClaudeProjectDirName(cwd))
	launch := launchAfter(t, filepath.Join(dir, "old.jsonl"))
	writeFile(t, filepath.Join(dir, "aaa.jsonl"), `{"type":"mode","sessionId":"aaa"}`+"\n")
	time.Sleep(10 * time.Millisecond)
	writeFile(t, filepath.Join(dir, "renamed.jsonl"), `{"type":"mode","sessionId":"bbb"}`+"\n")
	writeFile(t, filepath.Join(dir, "notes.txt"), "x")

	tests := []struct {
		name      string
		sessionID string
		want      string
	}{
		{"after launch, oldest first", "", "aaa.jsonl renamed.jsonl"},
		{"known id by file name", "aaa", "aaa.jsonl"},
		{"known id by content", "bbb", "renamed.jsonl"},
		{"known id even before launch", "old", "old.jsonl"},
		{"unknown id", "zzz", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &ClaudeDiscoverer{ConfigDir: cfgDir, Cwd: cwd, Launch: launch, Slack: time.Nanosecond, SessionID: tc.sessionID}
			got, err := d.Candidates()
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(candPaths(got), " "); s != tc.want {
				t.Errorf("candidates %q, want %q", s, tc.want)
			}
		})
	}
}

func codexMetaLine(id, cwd string) string {
	return `{"timestamp":"2026-11-21T22:12:19.204Z","ordinal":0,"type":"session_meta","payload":{"id":"` + id + `","cwd":"` + cwd + `","originator":"codex_exec"}}` + "\n"
}

func TestCodexDiscoverer(t *testing.T) {
	home := t.TempDir()
	cwd := t.TempDir()
	now := time.Now()
	day := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	launch := launchAfter(t, filepath.Join(day, "rollout-old.jsonl"))
	writeFile(t, filepath.Join(day, "rollout-a.jsonl"), codexMetaLine("th-a", cwd))
	writeFile(t, filepath.Join(day, "rollout-other.jsonl"), codexMetaLine("th-o", "/elsewhere"))
	writeFile(t, filepath.Join(day, "rollout-partial.jsonl"), strings.TrimSuffix(codexMetaLine("th-p", cwd), "\n"))
	writeFile(t, filepath.Join(day, "unrelated.jsonl"), codexMetaLine("th-u", cwd))
	time.Sleep(10 * time.Millisecond)
	writeFile(t, filepath.Join(day, "rollout-b.jsonl"), codexMetaLine("th-b", cwd))

	tests := []struct {
		name      string
		sessionID string
		want      string
	}{
		{"cwd matches, complete first line, after launch", "", "rollout-a.jsonl rollout-b.jsonl"},
		{"known thread id", "th-b", "rollout-b.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &CodexDiscoverer{Home: home, Cwd: cwd, Launch: launch, Slack: time.Nanosecond, SessionID: tc.sessionID}
			got, err := d.Candidates()
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(candPaths(got), " "); s != tc.want {
				t.Errorf("candidates %q, want %q", s, tc.want)
			}
			for _, c := range got {
				if c.SessionID == "" {
					t.Errorf("%s: no session id", c.Path)
				}
			}
		})
	}
}

func TestDiscoverConcurrentSessionsWithClaims(t *testing.T) {
	cfgDir, cwd := t.TempDir(), t.TempDir()
	dir := filepath.Join(cfgDir, "projects", ClaudeProjectDirName(cwd))
	launch := launchAfter(t)
	writeFile(t, filepath.Join(dir, "one.jsonl"), "{}\n")
	time.Sleep(10 * time.Millisecond)
	writeFile(t, filepath.Join(dir, "two.jsonl"), "{}\n")

	var set ClaimSet
	tests := []struct{ owner, want string }{
		{"ses_A", "one.jsonl"},
		{"ses_B", "two.jsonl"},
		{"ses_A", "one.jsonl"}, // re-discovery by the holder finds its own file
	}
	for _, tc := range tests {
		t.Run(tc.owner, func(t *testing.T) {
			d := &ClaudeDiscoverer{ConfigDir: cfgDir, Cwd: cwd, Launch: launch, Slack: time.Nanosecond}
			c, err := Discover(context.Background(), DiscoverConfig{Discoverer: d, Claims: set.For(tc.owner), Within: time.Second, Poll: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(c.Path) != tc.want {
				t.Errorf("%s got %s, want %s", tc.owner, c.Path, tc.want)
			}
		})
	}
	// A third session finds nothing left.
	d := &ClaudeDiscoverer{ConfigDir: cfgDir, Cwd: cwd, Launch: launch, Slack: time.Nanosecond}
	_, err := Discover(context.Background(), DiscoverConfig{Discoverer: d, Claims: set.For("ses_C"), Within: 50 * time.Millisecond, Poll: 10 * time.Millisecond})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("third session: err %v, want ErrNotFound", err)
	}
}

func TestDiscoverWaitsForNewFolders(t *testing.T) {
	for _, m := range tailModes {
		t.Run(m.name, func(t *testing.T) {
			home, cwd := t.TempDir(), t.TempDir()
			launch := launchAfter(t)
			d := &CodexDiscoverer{Home: home, Cwd: cwd, Launch: launch, Slack: time.Nanosecond}
			poll := time.Hour // fsnotify mode must find it through the recursive watch alone
			if m.cfg.ForcePoll {
				poll = 10 * time.Millisecond
			}
			type res struct {
				c   Candidate
				err error
			}
			ch := make(chan res, 1)
			go func() {
				c, err := Discover(context.Background(), DiscoverConfig{Discoverer: d, Within: waitLimit, Poll: poll, ForcePoll: m.cfg.ForcePoll})
				ch <- res{c, err}
			}()
			time.Sleep(50 * time.Millisecond) // let the watcher start on the missing root
			now := time.Now()
			day := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
			if err := os.MkdirAll(day, 0o700); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(day, "rollout-x.jsonl"), codexMetaLine("th-x", cwd))
			r := <-ch
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.c.SessionID != "th-x" {
				t.Errorf("found %+v", r.c)
			}
		})
	}
}

func TestDiscoverCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &CodexDiscoverer{Home: t.TempDir(), Cwd: "/x"}
	_, err := Discover(ctx, DiscoverConfig{Discoverer: d, Within: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestFileClaims(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "claims")
	a := &FileClaims{Dir: dir, Owner: "ses_A"}
	b := &FileClaims{Dir: dir, Owner: "ses_B"}
	const p = "/x/t.jsonl"
	if !a.Claim(p) {
		t.Fatal("A cannot claim a free path")
	}
	if !a.Claim(p) {
		t.Fatal("A cannot claim a path it already holds")
	}
	if b.Claim(p) {
		t.Fatal("B claimed a path A holds")
	}
	b.Release(p) // not B's: must not remove A's claim
	if b.Claim(p) {
		t.Fatal("B's Release removed A's claim")
	}
	a.Release(p)
	if !b.Claim(p) {
		t.Fatal("B cannot claim a released path")
	}
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("claims folder mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}

	// A claim held by a process that has exited is stale.
	cmd := exec.CommandContext(t.Context(), "true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	dead := &FileClaims{Dir: dir, Owner: "ses_D", PID: cmd.Process.Pid}
	const q = "/x/u.jsonl"
	if !dead.Claim(q) {
		t.Fatal("cannot claim")
	}
	if !a.Claim(q) {
		t.Error("A could not take over a claim whose process is gone")
	}
}
