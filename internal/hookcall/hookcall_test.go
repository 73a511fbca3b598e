package hookcall

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
)

// wrapper serves the control socket of a session folder like a live
// `lifeloop run`: each hook call is kept and answered with response.
func wrapper(t *testing.T, response string) (dir string, calls *[]hooks.HookArgs) {
	t.Helper()
	dir = t.TempDir()
	var got []hooks.HookArgs
	srv, err := control.Listen(control.SocketIn(dir), func(_ context.Context, req control.Request) (any, error) {
		var a hooks.HookArgs
		if req.Op != control.OpHook || json.Unmarshal(req.Args, &a) != nil {
			t.Errorf("request %s %s", req.Op, req.Args)
		}
		got = append(got, a)
		return hooks.HookReply{Response: response, Receipts: 1}, nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return dir, &got
}

// fullLifeloop writes a stand-in for lifeloop that notes its arguments
// and stdin and prints "full".
func fullLifeloop(t *testing.T) (prog, argsFile, stdinFile string) {
	t.Helper()
	d := t.TempDir()
	prog, argsFile, stdinFile = filepath.Join(d, "lifeloop"), filepath.Join(d, "args"), filepath.Join(d, "stdin")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >" + argsFile + "\ncat >" + stdinFile + "\nprintf full\n"
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, argsFile, stdinFile
}

func run(t *testing.T, full, sessionDir, stdin string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	env := map[string]string{"LIFELOOP_SESSION_DIR": sessionDir}
	rc := Main(Env{
		Args: append([]string{Program}, args...), Stdin: strings.NewReader(stdin), Stdout: &out,
		Getenv: func(k string) string { return env[k] }, Full: full,
	})
	if rc != 0 {
		t.Errorf("exit %d", rc)
	}
	return out.String()
}

func lines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("lifeloop was not run: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// A call inside a live run goes over the socket and prints the wrapper's
// response; lifeloop itself is not started.
func TestForwardsToTheWrapper(t *testing.T) {
	full, argsFile, _ := fullLifeloop(t)
	dir, calls := wrapper(t, `{"hookSpecificOutput":{}}`)
	out := run(t, full, dir, ` {"session_id":"s1"} `, "host-hook", "--adapter", "claude", "--hook", "SessionStart")
	if out != `{"hookSpecificOutput":{}}` {
		t.Errorf("printed %q", out)
	}
	if len(*calls) != 1 || (*calls)[0].Adapter != "claude" || (*calls)[0].Hook != "SessionStart" || string((*calls)[0].Stdin) != `{"session_id":"s1"}` {
		t.Errorf("wrapper got %+v", *calls)
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Error("lifeloop was started for a call the wrapper took")
	}

	// A hook called as a program gets its JSON as the last argument;
	// stdin is not read.
	out = run(t, full, dir, "", "host-hook", "--adapter", "codex", "--hook", "notify", `{"type":"agent-turn-complete"}`)
	if out != `{"hookSpecificOutput":{}}` || len(*calls) != 2 || !slices.Equal((*calls)[1].Argv, []string{`{"type":"agent-turn-complete"}`}) || (*calls)[1].Stdin != nil {
		t.Errorf("printed %q; wrapper got %+v", out, (*calls)[1])
	}
}

// What it does not do itself goes to lifeloop host-hook with the same
// arguments and input.
func TestHandsOverToLifeloop(t *testing.T) {
	live, _ := wrapper(t, "")
	for _, tc := range []struct {
		name, sessionDir string
		args             []string
		wantArgs         []string
	}{
		{"outside a run", "", []string{"host-hook", "--adapter", "claude", "--hook", "Stop"}, nil},
		{"the user's program to chain", live, []string{"host-hook", "--adapter", "codex", "--hook", "notify", "--chain", `["notify-send"]`}, nil},
		{"not host-hook", live, []string{"status", "--latest"}, nil},
		{"no wrapper listening", t.TempDir(), []string{"host-hook", "--adapter", "claude", "--hook", "Stop", "--timeout", "5s"},
			[]string{"host-hook", "--timeout", "*", "--adapter", "claude", "--hook", "Stop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full, argsFile, stdinFile := fullLifeloop(t)
			out := run(t, full, tc.sessionDir, `{"session_id":"s1"}`, tc.args...)
			if out != "full" {
				t.Errorf("printed %q, want lifeloop's output", out)
			}
			want := tc.wantArgs
			if want == nil {
				want = tc.args
			}
			got := lines(t, argsFile)
			if len(got) != len(want) {
				t.Fatalf("lifeloop %q, want %q", got, want)
			}
			for i := range want {
				if want[i] == "*" {
					if d, err := time.ParseDuration(got[i]); err != nil || d <= 0 || d > 5*time.Second {
						t.Errorf("--timeout %q, want what is left of 5s", got[i])
					}
				} else if got[i] != want[i] {
					t.Errorf("lifeloop %q, want %q", got, want)
				}
			}
			if in := lines(t, stdinFile); len(in) != 1 || in[0] != `{"session_id":"s1"}` {
				t.Errorf("lifeloop's stdin %q", in)
			}
		})
	}
}

func TestBeside(t *testing.T) {
	d := t.TempDir()
	exe := filepath.Join(d, "lifeloop")
	if _, ok := Beside(exe); ok {
		t.Error("found a lifeloop-hook that is not there")
	}
	if err := os.WriteFile(filepath.Join(d, Program), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p, ok := Beside(exe); !ok || p != filepath.Join(d, Program) {
		t.Errorf("Beside = %q, %v", p, ok)
	}
}

// A harness's FrameID waits less than the hook process waits for its
// answer, so the answer still reaches the harness.
func TestFrameIDWaitWithinTheCallsBound(t *testing.T) {
	if hooks.FrameIDWait >= DefaultTimeout {
		t.Fatalf("hooks.FrameIDWait %v, the hook call's bound %v", hooks.FrameIDWait, DefaultTimeout)
	}
}
