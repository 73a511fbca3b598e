package notify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/internal/testutil"
)

func TestCommandRunsOnceWithTheEpisodesFacts(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "notify.log")
	cfg := Config{
		Command: `echo run >> "$NOTIFY_TEST_DIR/runs"; env > "$NOTIFY_TEST_DIR/env"; echo said-on-stdout; echo said-on-stderr >&2; test -t 0 && echo STDIN-IS-A-TERMINAL; true`,
		Env:     testEnv(dir, "LIFELOOP_NOTIFY_SECRET=s3cret", "LIFELOOP_SESSION_ID=stale", "KEPT=yes"),
		LogPath: logPath,
	}
	log, logged := logger()
	n := New(cfg, log)
	n.Opened(episode(7, "needs_permission"))
	n.Wait(time.Minute)

	if runs := lines(t, filepath.Join(dir, "runs")); len(runs) != 1 {
		t.Fatalf("the command ran %d times, want once", len(runs))
	}
	data, err := os.ReadFile(filepath.Join(dir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	want := map[string]string{
		EnvSession: "lls_test", EnvHarness: "fakeharness", EnvCwd: "/work/proj",
		EnvKind: "needs_permission", EnvSince: "2026-12-02T15:04:05.678Z", EnvDetail: "Bash: ls -la",
		EnvSource: "hook", EnvEvidence: "PermissionRequest", EnvEpisode: "7", EnvTurn: "2", "KEPT": "yes",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("$%s = %q, want %q", k, env[k], v)
		}
	}
	if _, ok := env[EnvSecret]; ok {
		t.Errorf("the command's environment holds $%s", EnvSecret)
	}
	out, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"episode 7 needs_permission", "said-on-stdout", "said-on-stderr"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("notify.log lacks %q: %q", s, out)
		}
	}
	if strings.Contains(string(out), "STDIN-IS-A-TERMINAL") {
		t.Error("the command's stdin is a terminal")
	}
	if st, err := os.Stat(logPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("notify.log mode: %v %v, want 0600", st.Mode().Perm(), err)
	}
	if s := logged.String(); s != "" {
		t.Errorf("a command that succeeded was logged: %s", s)
	}
}

func TestCommandHasNoTerminalAndItsOwnSession(t *testing.T) {
	dir := t.TempDir()
	n := New(Config{
		Command: `ps -o sid= -p $$ > "$NOTIFY_TEST_DIR/sid"; (: < /dev/tty) 2>/dev/null && echo yes > "$NOTIFY_TEST_DIR/tty"; true`,
		Env:     testEnv(dir),
	}, nil)
	n.Opened(episode(1, "waiting_for_input"))
	n.Wait(time.Minute)
	if _, err := os.Stat(filepath.Join(dir, "tty")); err == nil {
		t.Error("the command could open /dev/tty")
	}
	sid := lines(t, filepath.Join(dir, "sid"))
	if len(sid) != 1 {
		t.Skip("ps cannot tell the session here")
	}
	own, _ := unix.Getsid(0)
	if sid[0] == strconv.Itoa(own) {
		t.Errorf("the command runs in lifeloop's session %d", own)
	}
}

func TestFailingCommandIsLoggedOnce(t *testing.T) {
	dir := t.TempDir()
	log, logged := logger()
	n := New(Config{Command: `echo run >> "$NOTIFY_TEST_DIR/runs"; exit 3`, Env: testEnv(dir)}, log)
	for id := 1; id <= 3; id++ {
		n.Opened(episode(id, "needs_answer"))
	}
	n.Wait(time.Minute)
	if runs := lines(t, filepath.Join(dir, "runs")); len(runs) != 3 {
		t.Fatalf("the command ran %d times, want 3 (once per episode)", len(runs))
	}
	if c := strings.Count(logged.String(), "notifier failed"); c != 1 {
		t.Fatalf("logged %d failures, want 1:\n%s", c, logged)
	}
	if !strings.Contains(logged.String(), "exit status 3") || !strings.Contains(logged.String(), "notifier=command") {
		t.Errorf("the failure does not say which notifier and why: %s", logged)
	}
}

func TestMissingCommandIsLoggedOnce(t *testing.T) {
	log, logged := logger()
	n := New(Config{Command: "no-such-notifier-program", Env: testEnv(t.TempDir())}, log)
	n.Opened(episode(1, "needs_answer"))
	n.Opened(episode(2, "needs_answer"))
	n.Wait(time.Minute)
	if c := strings.Count(logged.String(), "notifier failed"); c != 1 || !strings.Contains(logged.String(), "127") {
		t.Fatalf("want one failure with exit status 127, got %d:\n%s", c, logged)
	}
}

func TestCommandPastItsTimeIsKilledWithItsGroup(t *testing.T) {
	dir := t.TempDir()
	log, logged := logger()
	n := New(Config{
		Command:        `sleep 60 & echo $! > "$NOTIFY_TEST_DIR/pid"; wait`,
		Env:            testEnv(dir),
		CommandTimeout: 2 * time.Second, // ample for sh to write the pid first, on a loaded machine too
	}, log)
	n.Opened(episode(1, "stopped_on_error"))
	n.Wait(time.Minute)
	if !strings.Contains(logged.String(), "ran longer than 2s") {
		t.Fatalf("the timeout is not logged: %s", logged)
	}
	pid := lines(t, filepath.Join(dir, "pid"))
	if len(pid) != 1 {
		t.Fatal("the command did not write its child's pid")
	}
	p, _ := strconv.Atoi(pid[0])
	testutil.WaitFor(t, func() bool { return !alive(p) })
}

// alive reports whether process pid runs (a zombie does not: killed, not
// yet reaped by its new parent).
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	_, after, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(after, "Z")
}

func TestWaitStopsWhatStillRuns(t *testing.T) {
	dir := t.TempDir()
	log, logged := logger()
	n := New(Config{Command: `echo started > "$NOTIFY_TEST_DIR/started"; exec sleep 60`, Env: testEnv(dir)}, log)
	n.Opened(episode(1, "needs_permission"))
	testutil.WaitFor(t, func() bool { return len(lines(t, filepath.Join(dir, "started"))) == 1 })
	n.Wait(0)
	if !strings.Contains(logged.String(), "stopped") {
		t.Fatalf("the stop at the session's end is not logged: %s", logged)
	}
	if strings.Contains(logged.String(), "notifier failed") {
		t.Errorf("a command stopped at the session's end is logged as failed: %s", logged)
	}
	n.Opened(episode(2, "needs_permission")) // after Wait: nothing runs (goleak checks)
	n.Wait(time.Minute)
	if got := lines(t, filepath.Join(dir, "started")); len(got) != 1 {
		t.Fatalf("the command ran %d times, want once", len(got))
	}
}

func TestKindsChooseWhatIsAnnounced(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kinds []string
		want  []string
	}{
		{"default: every waiting kind", nil, []string{"needs_permission", "waiting_for_input", "stopped_on_error"}},
		{"only permission", []string{"needs_permission"}, []string{"needs_permission"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			n := New(Config{Command: `echo $LIFELOOP_ATTENTION >> "$NOTIFY_TEST_DIR/kinds"`, Env: testEnv(dir), Kinds: tc.kinds}, nil)
			for i, k := range []string{"working", "needs_permission", "unknown", "waiting_for_input", "stopped_on_error"} {
				n.Opened(episode(i+1, k))
			}
			n.Wait(time.Minute)
			got := lines(t, filepath.Join(dir, "kinds"))
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("announced %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds(" needs_permission,needs_answer,,needs_permission ")
	if err != nil || strings.Join(got, ",") != "needs_permission,needs_answer" {
		t.Fatalf("ParseKinds = %v, %v", got, err)
	}
	if got, err := ParseKinds(""); err != nil || got != nil {
		t.Fatalf("ParseKinds(\"\") = %v, %v; want every kind (nil)", got, err)
	}
	_, err = ParseKinds("needs_permission,working")
	if err == nil || !strings.Contains(err.Error(), `"working"`) || !strings.Contains(err.Error(), "stopped_on_error") {
		t.Fatalf("ParseKinds(working) error = %v; want one naming the kind and the choices", err)
	}
	for _, k := range Kinds {
		if !waitingKind(k) {
			t.Errorf("kind %q is not a waiting state", k)
		}
	}
}

func TestNothingConfiguredIsANilNotifier(t *testing.T) {
	n := New(Config{Kinds: []string{"needs_answer"}}, nil)
	if n != nil {
		t.Fatal("New with no notifier returned one")
	}
	n.Opened(episode(1, "needs_answer"))
	n.Closed(episode(1, "needs_answer"))
	n.Wait(time.Second)
}
