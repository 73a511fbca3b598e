package claude_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
)

// The command lines Claude Code 2.1.332 started through a logging process
// wrapper (testdata/background, from two `claude --bg`): the daemon and
// the PTY hosts pass through, the cold session and the spares are
// sessions, the cold one with its id.
func TestWrappedStartMeasured(t *testing.T) {
	f, err := os.Open("testdata/background/claude-bg-launcher.argv-env.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[int]string{7474: "", 7482: "", 7483: "", 7493: "spare", 7496: "fe2d93ad-d1d4-4e1d-9c1e-3e34acf6a218", 7560: "", 7569: "spare"}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var rec struct {
			Pid  int               `json:"pid"`
			Argv []string          `json:"argv"`
			Env  map[string]string `json:"env"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		var env []string
		for k, v := range rec.Env {
			env = append(env, k+"="+v)
		}
		st := claude.Harness{}.WrappedStart(rec.Argv[1:], env) // past the wrapper
		got := ""
		switch {
		case st.Session && st.SessionID == "":
			got = "spare"
		case st.Session:
			got = st.SessionID
		}
		if got != want[rec.Pid] {
			t.Errorf("pid %d %q: got %q, want %q", rec.Pid, rec.Argv[2:min(4, len(rec.Argv))], got, want[rec.Pid])
		}
		if len(st.LaunchedBy) > 0 {
			t.Errorf("pid %d: launched by %v, want none (started from a shell)", rec.Pid, st.LaunchedBy)
		}
		n++
	}
	if n != len(want) {
		t.Fatalf("read %d command lines, want %d", n, len(want))
	}
}

func TestWrappedStartLaunchedBy(t *testing.T) {
	parent := "0b5c8a3e-6f1d-4d2e-9a7b-1c2d3e4f5a6b"
	st := claude.Harness{}.WrappedStart(
		[]string{"/opt/claude", "--session-id", "fe2d93ad-d1d4-4e1d-9c1e-3e34acf6a218", "hi"},
		[]string{"CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS=" + parent + ",unknown"})
	if !st.Session || !slices.Equal(st.LaunchedBy, []string{parent}) {
		t.Fatalf("got %+v, want a session launched by %s", st, parent)
	}
	for _, argv := range [][]string{
		{"/opt/claude", "--bg-pty-host", "/tmp/s.sock", "200", "50", "--", "/w", "/opt/claude", "--bg-spare", "/tmp/c.sock"},
		{"/opt/claude", "completion", "bash", "--output", "/tmp/x"},
		{"/opt/claude", "--daemon-worker", "x"},
		{"/opt/claude"},
	} {
		if st := (claude.Harness{}).WrappedStart(argv, nil); st.Session {
			t.Errorf("%q: a session, want a pass-through", argv)
		}
	}
}

// A spare's session is read from Claude's registry,
// <config>/sessions/<pid>.json, and who started it from the daemon's
// roster, <config>/daemon/roster.json (real ones, testdata/background:
// the roster of a spare claimed by a `claude --bg` whose environment named
// a launching session, its socket keys removed).
func TestWrappedSessionRegistry(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home}
	if _, ok := (claude.Harness{}).WrappedSession(env, 7496); ok {
		t.Fatal("a session before the registry names one")
	}
	b, err := os.ReadFile("testdata/background/claude-bg-session-registry.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "7496.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok := claude.Harness{}.WrappedSession(env, 7496)
	if !ok || c.ID != "fe2d93ad-d1d4-4e1d-9c1e-3e34acf6a218" || c.Cwd != "/home/dev/project" || c.LaunchedBy != nil {
		t.Fatalf("got %+v %v", c, ok)
	}
	// No roster: the session was asked for before the registry's
	// startedAt (1796187693764), with a margin.
	if want := time.UnixMilli(1796187693764).Add(-5 * time.Second); !c.Since.Equal(want) {
		t.Errorf("since %v, want %v (the registry's start less its lag)", c.Since, want)
	}
	if _, ok := (claude.Harness{}).WrappedSession(env, 7497); ok {
		t.Fatal("another pid's session")
	}

	// The spare 18496 became session a2478f94-…, which the roster says
	// a session 22222222-… asked for.
	const spare = `{"pid":18496,"sessionId":"a2478f94-6d67-431b-90db-7bb3bbdc621e","cwd":"/home/dev/project","kind":"bg","status":"idle"}`
	if err := os.WriteFile(filepath.Join(dir, "18496.json"), []byte(spare), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, ok := (claude.Harness{}).WrappedSession(env, 18496); !ok || c.LaunchedBy != nil {
		t.Fatalf("before the roster: %+v %v, want the session and no launcher", c, ok)
	}
	if b, err = os.ReadFile("testdata/background/claude-bg-roster.json"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude", "daemon"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "daemon", "roster.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, ok = claude.Harness{}.WrappedSession(env, 18496)
	if !ok || c.ID != "a2478f94-6d67-431b-90db-7bb3bbdc621e" || !slices.Equal(c.LaunchedBy, []string{"22222222-2222-4222-8222-222222222222"}) {
		t.Fatalf("got %+v %v, want the launcher the roster's dispatch names", c, ok)
	}
	// The roster's dispatch says when the `claude --bg` asked for it.
	if want := time.UnixMilli(1796264030542); !c.Since.Equal(want) {
		t.Errorf("since %v, want the dispatch's createdAt %v", c.Since, want)
	}
	// The registry's session served by another process than the
	// roster's worker: no launcher taken from it.
	const other = `{"pid":555,"sessionId":"a2478f94-6d67-431b-90db-7bb3bbdc621e","cwd":"/home/dev/project"}`
	if err := os.WriteFile(filepath.Join(dir, "555.json"), []byte(other), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, ok := (claude.Harness{}).WrappedSession(env, 555); !ok || c.LaunchedBy != nil {
		t.Fatalf("pid 555: %+v %v, want no launcher", c, ok)
	}
}

func TestParseProcessWrapper(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{in: "", want: nil},
		{in: `["/usr/local/bin/corp-launch","--profile","x"]`, want: []string{"/usr/local/bin/corp-launch", "--profile", "x"}},
		{in: `/usr/bin/l --name "a b"`, want: []string{"/usr/bin/l", "--name", "a b"}},
		{in: `launcher`, bad: true},
		{in: `["/l",""]`, bad: true},
		{in: `/l "open`, bad: true},
	} {
		got, err := claude.ParseProcessWrapper(tc.in)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, %v", tc.in, got, err)
		}
	}
}

// run sets lifeloop's prefix as a JSON array, chaining the person's own
// wrapper from the variable, else from the user's settings; a value that
// is lifeloop's already is kept.
func TestWrapperEnvChains(t *testing.T) {
	prefix := func(chain []string) []string {
		out := []string{"/opt/lifeloop", "procwrap", "--adapter", "claude"}
		if len(chain) > 0 {
			b, _ := json.Marshal(chain)
			out = append(out, "--chain", string(b))
		}
		return out
	}
	value := func(vars []string) []string {
		t.Helper()
		if len(vars) != 1 || !strings.HasPrefix(vars[0], "CLAUDE_CODE_PROCESS_WRAPPER=") {
			t.Fatalf("vars %q", vars)
		}
		var words []string
		if err := json.Unmarshal([]byte(strings.TrimPrefix(vars[0], "CLAUDE_CODE_PROCESS_WRAPPER=")), &words); err != nil {
			t.Fatal(err)
		}
		return words
	}
	home := t.TempDir()
	vars, err := claude.Harness{}.WrapperEnv(prefix, []string{"HOME=" + home})
	if err != nil || !slices.Equal(value(vars), prefix(nil)) {
		t.Fatalf("no wrapper of the person's: %q %v", vars, err)
	}
	vars, _ = claude.Harness{}.WrapperEnv(prefix, []string{"HOME=" + home, "CLAUDE_CODE_PROCESS_WRAPPER=/corp/launch --x"})
	if got := value(vars); !slices.Equal(got, prefix([]string{"/corp/launch", "--x"})) {
		t.Errorf("the variable's wrapper: %q", got)
	}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"processWrapper":["/corp/own"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	vars, _ = claude.Harness{}.WrapperEnv(prefix, []string{"HOME=" + home})
	if got := value(vars); !slices.Equal(got, prefix([]string{"/corp/own"})) {
		t.Errorf("the settings' wrapper: %q", got)
	}
	own, _ := json.Marshal(prefix([]string{"/corp/own"}))
	if vars, _ := (claude.Harness{}).WrapperEnv(prefix, []string{"HOME=" + home, "CLAUDE_CODE_PROCESS_WRAPPER=" + string(own)}); vars != nil {
		t.Errorf("lifeloop's own value replaced: %q", vars)
	}
	if _, err := (claude.Harness{}).WrapperEnv(prefix, []string{"HOME=" + home, "CLAUDE_CODE_PROCESS_WRAPPER=relative"}); err == nil {
		t.Error("a value Claude refuses was chained")
	}
}

// host apply --process-wrapper: lifeloop's prefix in the user's
// settings, chaining the value there, the other keys untouched; remove
// puts the chained value back; both are idempotent.
func TestInstallWrapperChainsAndRestores(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	orig := "{\n  \"model\": \"x\",\n  \"processWrapper\": \"/corp/own\",\n  \"hooks\": {\"a\": 1}\n}\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	w := adapters.WrapperInstall{
		Prefix: func(chain []string) []string {
			b, _ := json.Marshal(chain)
			return []string{"/opt/lifeloop", "procwrap", "--chain", string(b)}
		},
		Unchain: func(words []string) ([]string, bool) {
			if len(words) != 4 || words[1] != "procwrap" {
				return nil, false
			}
			var chain []string
			return chain, json.Unmarshal([]byte(words[3]), &chain) == nil
		},
	}
	env := []string{"HOME=" + home}
	for i, wantChanged := range []bool{true, false} {
		if _, changed, err := (claude.Harness{}).InstallWrapper(env, w); err != nil || changed != wantChanged {
			t.Fatalf("apply %d: changed %v, %v", i, changed, err)
		}
	}
	b, _ := os.ReadFile(path)
	want := "{\n  \"model\": \"x\",\n  \"processWrapper\": \"[\\\"/opt/lifeloop\\\",\\\"procwrap\\\",\\\"--chain\\\",\\\"[\\\\\\\"/corp/own\\\\\\\"]\\\"]\",\n  \"hooks\": {\"a\": 1}\n}\n"
	if string(b) != want {
		t.Fatalf("after apply:\n%s\nwant:\n%s", b, want)
	}
	w.Remove = true
	for i, wantChanged := range []bool{true, false} {
		if _, changed, err := (claude.Harness{}).InstallWrapper(env, w); err != nil || changed != wantChanged {
			t.Fatalf("remove %d: changed %v, %v", i, changed, err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Fatalf("after remove:\n%s\nwant:\n%s", b, orig)
	}
}
