package callback

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// fakeClient is the path of the test client built once by TestMain.
var fakeClient string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lifeloop-callback-test-")
	if err != nil {
		panic(err)
	}
	fakeClient = filepath.Join(dir, "fakeclient")
	build := exec.CommandContext(context.Background(), "go", "build", "-o", fakeClient, "./testdata/fakeclient")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		_ = os.RemoveAll(dir)
		panic("building the fake client: " + err.Error())
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

func testLimits() limits {
	return limits{timeout: 5 * time.Second, stdoutCap: 1 << 20, exitGrace: 300 * time.Millisecond}
}

func TestRunChild(t *testing.T) {
	stdin := []byte(`{"hello":"world"}` + "\n")
	big := []byte(strings.Repeat(" ", 256<<10) + "{}\n")
	tests := []struct {
		name  string
		mode  string
		stdin []byte
		lim   func(*limits)
		check func(t *testing.T, r childResult)
	}{
		{name: "good", mode: "good", stdin: stdin, check: func(t *testing.T, r childResult) {
			if r.exitCode != 0 || r.stdinUnread || r.timedOut || r.overCap || r.heldOpen {
				t.Fatalf("unexpected flags: %+v", r)
			}
			if !strings.Contains(string(r.stdout), `"delivered"`) {
				t.Fatalf("stdout = %q", r.stdout)
			}
		}},
		{name: "exit 1", mode: "exit1", stdin: stdin, check: func(t *testing.T, r childResult) {
			if r.exitCode != 1 {
				t.Fatalf("exitCode = %d", r.exitCode)
			}
		}},
		{name: "exit 0 without reading small stdin", mode: "noread", stdin: stdin, check: func(t *testing.T, r childResult) {
			if !r.stdinUnread {
				t.Fatalf("stdinUnread not detected: %+v", r)
			}
		}},
		{name: "exit 0 without reading stdin larger than a pipe", mode: "noread", stdin: big, check: func(t *testing.T, r childResult) {
			if !r.stdinUnread {
				t.Fatalf("stdinUnread not detected: %+v", r)
			}
		}},
		{name: "large stdin read fully", mode: "good", stdin: big, check: func(t *testing.T, r childResult) {
			if r.stdinUnread || r.exitCode != 0 {
				t.Fatalf("unexpected: %+v", r)
			}
		}},
		{name: "hang past timeout", mode: "hang", stdin: stdin, lim: func(l *limits) { l.timeout = 200 * time.Millisecond }, check: func(t *testing.T, r childResult) {
			if !r.timedOut || !r.signaled {
				t.Fatalf("want timed out and signaled: %+v", r)
			}
		}},
		{name: "stdout over cap", mode: "bigout", stdin: stdin, lim: func(l *limits) { l.stdoutCap = 1000 }, check: func(t *testing.T, r childResult) {
			if !r.overCap || len(r.stdout) != 1000 {
				t.Fatalf("want overCap with 1000 bytes: overCap=%v len=%d", r.overCap, len(r.stdout))
			}
		}},
		{name: "grandchild holds stdout", mode: "grandchild", stdin: stdin, check: func(t *testing.T, r childResult) {
			if !r.heldOpen || r.exitCode != 0 {
				t.Fatalf("want heldOpen: %+v", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := testLimits()
			if tt.lim != nil {
				tt.lim(&lim)
			}
			r := runChild(context.Background(), fakeClient, []string{tt.mode}, []string{"PATH=/usr/bin:/bin"}, tt.stdin, lim)
			if r.startErr != nil {
				t.Fatalf("start: %v", r.startErr)
			}
			tt.check(t, r)
		})
	}
}

func TestRunChildStartErrors(t *testing.T) {
	r := runChild(context.Background(), filepath.Join(t.TempDir(), "missing"), nil, nil, nil, testLimits())
	if r.startErr == nil || !isNotFound(r.startErr) {
		t.Fatalf("startErr = %v, want not found", r.startErr)
	}
}

// TestRunChildLeavesNoGroup proves the grandchild left by a misbehaving
// client is killed with its group.
func TestRunChildLeavesNoGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := "echo $$ > " + pidFile + "; sleep 3600 & echo '{}'; wait"
	// /bin/sh is the child; sleep is the grandchild holding stdout.
	lim := testLimits()
	lim.timeout = 300 * time.Millisecond
	r := runChild(context.Background(), "/bin/sh", []string{"-c", script}, nil, nil, lim)
	if !r.timedOut {
		t.Fatalf("want timeout: %+v", r)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The group id equals the child's pid; no live member may remain
	// (killed members can linger as zombies until their reaper runs; give
	// the kernel a bounded moment to deliver the SIGKILL).
	deadline := time.Now().Add(5 * time.Second)
	for {
		live := liveGroupMembers(t, n)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has live members %v", n, live)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// liveGroupMembers lists the pids of non-zombie processes in group pgid.
func liveGroupMembers(t *testing.T, pgid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var live []string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		// f[0] state, f[1] ppid, f[2] pgrp
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, e.Name())
		}
	}
	return live
}
