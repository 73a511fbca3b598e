package testharness

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitLong = time.Minute

func runFake(t *testing.T, stdin string, steps ...string) (stdout, stderr string, code int, sig syscall.Signal) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), BuildFakeHarness(t), steps...)
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err = cmd.Wait()
	code, sig = exitStatus(cmd.ProcessState, err)
	return out.String(), errb.String(), code, sig
}

func TestFakeHarnessPlain(t *testing.T) {
	t.Setenv("FAKE_TEST_VAR", "v1")
	tests := []struct {
		name       string
		stdin      string
		steps      []string
		wantOut    string
		wantErr    string
		wantCode   int
		wantSignal syscall.Signal
	}{
		{"print and exit code", "", []string{"print:hello\\tworld", "exit:3", "print:never"}, "hello\tworld\n", "", 3, 0},
		{"default exit 0", "", []string{"print:a", "sleep:1ms"}, "a\n", "", 0, 0},
		{"read-line and expect", "one\ntwo\n/exit\n", []string{"read-line", "expect:/exit"}, "read: one\ngot: /exit\n", "", 0, 0},
		{"expect hits end of input", "x\n", []string{"expect:/exit"}, "", "", 4, 0},
		{"echo-stdin", "abc\ndef", []string{"echo-stdin"}, "abc\ndef", "", 0, 0},
		{"print-env", "", []string{"print-env:FAKE_TEST_VAR", "print-env:FAKE_UNSET_VAR"}, "env: FAKE_TEST_VAR=v1\nenv: FAKE_UNSET_VAR unset\n", "", 0, 0},
		{"kills itself", "", []string{"print:bye", "signal:TERM"}, "bye\n", "", -1, syscall.SIGTERM},
		{"catches a signal it sends", "", []string{"catch:USR1", "signal:USR1"}, "", "", -1, syscall.SIGUSR1},
		{"unknown step", "", []string{"frobnicate"}, "", "unknown step \"frobnicate\"", 2, 0},
		{"bad exit code", "", []string{"exit:300"}, "", "want a code 0..255", 2, 0},
		{"bad signal", "", []string{"catch:NOPE"}, "", "unknown signal", 2, 0},
		{"ready-parent without a parent", "", []string{"ready-parent"}, "", "not started by a spawn step", 2, 0},
		{"stty-size without a terminal", "", []string{"stty-size"}, "", "stdin must be a terminal", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code, sig := runFake(t, tc.stdin, tc.steps...)
			if out != tc.wantOut || code != tc.wantCode || sig != tc.wantSignal || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("got out %q err %q code %d signal %v; want out %q err ~%q code %d signal %v",
					out, errOut, code, sig, tc.wantOut, tc.wantErr, tc.wantCode, tc.wantSignal)
			}
		})
	}
}

func TestFakeHarnessSpawnWaitsForReadyParent(t *testing.T) {
	out, errOut, code, _ := runFake(t, "", "spawn:print:child,ready-parent,print:child done", "print:parent", "wait-children", "print:end")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// "child" comes before "spawned" because spawn waits for ready-parent;
	// "child done" may come before or after the parent's lines but precedes
	// "end" (wait-children).
	if !strings.HasPrefix(out, "child\n") || !regexp.MustCompile(`\nspawned: \d+\n`).MatchString(out) ||
		!strings.HasSuffix(out, "end\n") || !strings.Contains(out, "child done\n") {
		t.Errorf("output %q", out)
	}
}

func fakeTerminal(t *testing.T, cols, rows int, steps ...string) *Terminal {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), BuildFakeHarness(t), steps...)
	cmd.Dir = t.TempDir()
	return StartTerminal(t, cmd, cols, rows)
}

func mustWait(t *testing.T, term *Terminal, pattern any) {
	t.Helper()
	if err := term.WaitFor(pattern, waitLong); err != nil {
		t.Fatal(err)
	}
}

func TestFakeHarnessUnderTerminal(t *testing.T) {
	t.Run("typing, expect and exit", func(t *testing.T) {
		term := fakeTerminal(t, 80, 24, "print:ready", "read-line", "expect:/exit", "exit:5")
		mustWait(t, term, "ready")
		term.Type("abc\r")
		mustWait(t, term, "read: abc")
		term.Type("/exit\r")
		mustWait(t, term, "got: /exit")
		if code, sig := term.Wait(); code != 5 || sig != 0 {
			t.Errorf("exit %d signal %v, want 5", code, sig)
		}
	})
	t.Run("size and resize", func(t *testing.T) {
		term := fakeTerminal(t, 100, 30, "stty-size", "print:ready", "wait-winch")
		mustWait(t, term, "size: 30 100")
		mustWait(t, term, "ready")
		term.Resize(81, 23)
		mustWait(t, term, "winch: 23 81")
		if code, _ := term.Wait(); code != 0 {
			t.Errorf("exit %d", code)
		}
	})
	t.Run("caught signal is reported", func(t *testing.T) {
		term := fakeTerminal(t, 80, 24, "catch:TERM", "print:ready", "wait-signal", "exit:7")
		mustWait(t, term, "ready")
		if err := term.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		mustWait(t, term, "caught: SIGTERM")
		if code, sig := term.Wait(); code != 7 || sig != 0 {
			t.Errorf("exit %d signal %v, want 7", code, sig)
		}
	})
	t.Run("ignored signal", func(t *testing.T) {
		term := fakeTerminal(t, 80, 24, "ignore:TERM", "print:ready", "read-line", "print:alive", "exit:9")
		mustWait(t, term, "ready")
		if err := term.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// Still reading: the line typed after the signal is answered.
		term.Type("after\r")
		mustWait(t, term, "alive")
		if code, sig := term.Wait(); code != 9 || sig != 0 {
			t.Errorf("exit %d signal %v, want 9", code, sig)
		}
	})
	t.Run("grandchild ignoring SIGTERM stays in the group", func(t *testing.T) {
		term := fakeTerminal(t, 80, 24, "spawn-grandchild", "child-ignore-term", "print:ready", "sleep:1h")
		mustWait(t, term, "ready")
		m := regexp.MustCompile(`grandchild: (\d+)`).FindStringSubmatch(term.Output())
		c := regexp.MustCompile(`spawned: (\d+)`).FindStringSubmatch(term.Output())
		if m == nil || c == nil {
			t.Fatalf("no grandchild/child pid in output:\n%s", term.Output())
		}
		grandchild, _ := strconv.Atoi(m[1])
		child, _ := strconv.Atoi(c[1])
		_ = term.Signal(syscall.SIGTERM)
		if _, sig := term.Wait(); sig != syscall.SIGTERM {
			t.Errorf("leader died of %v, want SIGTERM", sig)
		}
		members := ProcessGroupMembers(term.Pid())
		pids := []int{}
		for _, p := range members {
			pids = append(pids, p.PID)
		}
		if !slices.Contains(pids, grandchild) || !slices.Contains(pids, child) {
			t.Errorf("after SIGTERM the group has %v; want the SIGTERM-ignoring child %d and grandchild %d", members, child, grandchild)
		}
		_ = term.Signal(syscall.SIGKILL)
		if left := WaitProcessGroupGone(term.Pid(), waitLong); len(left) > 0 {
			t.Errorf("still alive after SIGKILL: %v", left)
		}
	})
	t.Run("terminal queries are answered", func(t *testing.T) {
		term := fakeTerminal(t, 80, 24, `print:\e[6nask`, "read-line")
		mustWait(t, term, "ask")
		term.Type("\r")
		mustWait(t, term, "read: ")
		// StripANSI hides the answer, which is itself an escape sequence.
		if raw := string(term.RawOutput()); !strings.Contains(raw, "read: \x1b[1;1R") {
			t.Errorf("the program did not read the cursor position answer; raw output %q", raw)
		}
	})
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func get(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func TestFakeHarnessTranscripts(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FAKE_DIR", dir)
	claude := filepath.Join(dir, "projects", "p", "s1.jsonl")
	codex := filepath.Join(dir, "sessions", "2026", "11", "22", "rollout-x.jsonl")
	if _, errOut, code, _ := runFake(t, "", "session:s1", "usage:100,7,20,30", "write-claude:$FAKE_DIR/projects/p/s1.jsonl",
		"claude-compact:"+claude, "window:10000", "write-codex:"+codex); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, errOut, code, _ := runFake(t, "", "session:s1", "usage:5000,9", "write-codex:"+codex, "codex-compact:"+codex); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, p := range []string{claude, codex} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v", p, fi.Mode().Perm())
		}
	}

	cl := readLines(t, claude)
	types := []string{}
	for _, l := range cl {
		types = append(types, l["type"].(string))
		if l["sessionId"] != "s1" {
			t.Errorf("sessionId %v", l["sessionId"])
		}
	}
	if got := strings.Join(types, ","); got != "user,assistant,system,user" {
		t.Errorf("claude line types %s", got)
	}
	if u := get(cl[1], "message", "usage"); get(u, "input_tokens") != 100.0 || get(u, "output_tokens") != 7.0 ||
		get(u, "cache_creation_input_tokens") != 20.0 || get(u, "cache_read_input_tokens") != 30.0 {
		t.Errorf("assistant usage %v", u)
	}
	if cl[1]["parentUuid"] != cl[0]["uuid"] || cl[0]["parentUuid"] != nil {
		t.Errorf("lines are not chained: %v -> %v", cl[0]["uuid"], cl[1]["parentUuid"])
	}
	if get(cl[2], "subtype") != "compact_boundary" || get(cl[2], "compactMetadata", "preTokens") != 150.0 || cl[3]["isCompactSummary"] != true {
		t.Errorf("compaction lines %v %v", cl[2], cl[3])
	}

	cx := readLines(t, codex)
	var kinds []string
	for i, l := range cx {
		if l["ordinal"] != float64(i) {
			t.Errorf("line %d has ordinal %v", i, l["ordinal"])
		}
		k := l["type"].(string)
		if pt, ok := get(l, "payload", "type").(string); ok {
			k += "/" + pt
		}
		kinds = append(kinds, k)
	}
	want := "session_meta,event_msg/task_started,event_msg/user_message,event_msg/agent_message,event_msg/token_count,event_msg/task_complete," +
		"event_msg/task_started,event_msg/user_message,event_msg/agent_message,event_msg/token_count,event_msg/task_complete,compacted,event_msg/token_count"
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("codex lines\n got %s\nwant %s", got, want)
	}
	if get(cx[0], "payload", "id") != "s1" {
		t.Errorf("session_meta id %v", get(cx[0], "payload", "id"))
	}
	last := get(cx[9], "payload", "info", "last_token_usage")
	if get(last, "input_tokens") != 5000.0 || get(last, "total_tokens") != 5009.0 || get(cx[4], "payload", "info", "model_context_window") != 10000.0 {
		t.Errorf("token_count %v / window %v", last, get(cx[4], "payload", "info", "model_context_window"))
	}
}

func TestStripANSI(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"colors", "\x1b[1;31mred\x1b[0m text", "red text"},
		{"cursor forward", "a\x1b[3Cb", "a   b"},
		{"column move", "Claude\x1b[19GCode", "Claude Code"},
		{"osc title", "\x1b]0;title\x07hi", "hi"},
		{"private modes", "\x1b[?25l\x1b[?2004hok", "ok"},
		{"crlf", "a\r\nb\rc", "a\nb\nc"},
		{"charset", "\x1b(Bx", "x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := StripANSI(tc.in); got != tc.want {
				t.Errorf("StripANSI(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// The binary the tests build is the one `make build` makes.
func TestBuildTagsMatchTheMakefile(t *testing.T) {
	mk, err := os.ReadFile(filepath.Join(ModuleRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^BUILDTAGS\s*:=\s*(\S+)\s*$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("no BUILDTAGS := line in the Makefile")
	}
	if string(m[1]) != BuildTags {
		t.Errorf("Makefile BUILDTAGS = %s, testharness.BuildTags = %s: keep them equal", m[1], BuildTags)
	}
}
