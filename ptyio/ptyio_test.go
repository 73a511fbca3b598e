package ptyio

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/term"

	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

func TestMain(m *testing.M) {
	if os.Getenv(strings.Split(fakeTUIEnv, "=")[0]) == "1" {
		os.Exit(fakeTUI()) // a child of TestHeldKeysWaitForRawMode
	}
	goleak.VerifyTestMain(m)
}

// safety bounds a test that would otherwise hang on a bug; it is not a
// timing assertion.
const safety = 60 * time.Second

// testEnv is the environment given to children in tests.
func testEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "TERM=xterm", "LC_ALL=C"}
}

// openTerm opens a Terminal and closes it at cleanup.
func openTerm(t *testing.T, cfg TerminalConfig) *Terminal {
	t.Helper()
	term, err := OpenTerminal(cfg)
	if err != nil {
		t.Fatalf("OpenTerminal: %v", err)
	}
	t.Cleanup(func() {
		if err := term.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return term
}

// stdinPipe returns a pipe whose read end is the Terminal's In.
func stdinPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close(); _ = r.Close() })
	return r, w
}

// start starts a child and makes sure its group is killed and reaped at
// cleanup (registered after the Terminal's, so it runs first).
func start(t *testing.T, term *Terminal, spec ChildSpec) *Child {
	t.Helper()
	c, err := term.Start(spec)
	if err != nil {
		t.Fatalf("Start(%v): %v", spec.Args, err)
	}
	t.Cleanup(func() {
		_ = c.SignalGroup(syscall.SIGKILL)
		<-c.Done()
	})
	return c
}

// sh runs script with sh -c in a temp working directory (where a core
// dump of the signal tests would land).
func sh(t *testing.T, script string) ChildSpec {
	return ChildSpec{Path: "sh", Args: []string{"-c", script}, Env: testEnv(t), Dir: t.TempDir()}
}

// wait returns the child's status, failing if it never ends.
func wait(t *testing.T, c *Child) ExitStatus {
	t.Helper()
	select {
	case <-c.Done():
		return c.Wait()
	case <-time.After(safety):
		_ = c.SignalGroup(syscall.SIGKILL)
		t.Fatalf("child %d never finished", c.Pid())
		return ExitStatus{}
	}
}

func TestExitCodePassthrough(t *testing.T) {
	for _, code := range []int{0, 1, 3, 255} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			in, _ := stdinPipe(t)
			term := openTerm(t, TerminalConfig{In: in, Out: io.Discard})
			c := start(t, term, sh(t, fmt.Sprintf("exit %d", code)))
			st := wait(t, c)
			if st.Code != code || st.Signaled || st.ExitCode() != code {
				t.Fatalf("status = %+v, ExitCode %d; want code %d", st, st.ExitCode(), code)
			}
			if !st.Raw.Exited() || st.Raw.ExitStatus() != code {
				t.Fatalf("raw status %v does not say exit %d", st.Raw, code)
			}
		})
	}
}

func TestDeathBySignal(t *testing.T) {
	tests := []struct {
		name   string
		script string
		send   syscall.Signal // sent with SignalGroup once started; 0 = none
		want   syscall.Signal
	}{
		{"self SIGKILL", "kill -KILL $$", 0, syscall.SIGKILL},
		{"self SIGSEGV", "kill -SEGV $$", 0, syscall.SIGSEGV},
		{"group SIGTERM", "echo up; exec sleep 1000", syscall.SIGTERM, syscall.SIGTERM},
		{"group SIGINT", "echo up; exec sleep 1000", syscall.SIGINT, syscall.SIGINT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := stdinPipe(t)
			out := &testutil.SyncBuffer{}
			term := openTerm(t, TerminalConfig{In: in, Out: out})
			c := start(t, term, sh(t, tt.script))
			if tt.send != 0 {
				out.WaitContains(t, "up", safety)
				if err := c.SignalGroup(tt.send); err != nil {
					t.Fatal(err)
				}
			}
			st := wait(t, c)
			if !st.Signaled || st.Signal != tt.want || st.Code != -1 {
				t.Fatalf("status = %+v; want death by %v", st, tt.want)
			}
			if !st.Raw.Signaled() || st.Raw.Signal() != tt.want {
				t.Fatalf("raw status %#x does not say signal %v", uint32(st.Raw), tt.want)
			}
			if got, want := st.ExitCode(), 128+int(tt.want); got != want {
				t.Fatalf("ExitCode = %d, want %d", got, want)
			}
			// The group is gone: signalling it again is not an error.
			if err := c.SignalGroup(syscall.SIGTERM); err != nil {
				t.Fatalf("SignalGroup after exit: %v", err)
			}
		})
	}
}

func TestOutputRelayedByteExact(t *testing.T) {
	for _, size := range []int{1, 4095, 32 << 10, 8 << 20} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			data := make([]byte, size)
			if _, err := rand.Read(data); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "data")
			if err := os.WriteFile(file, data, 0o600); err != nil {
				t.Fatal(err)
			}
			in, _ := stdinPipe(t)
			var out bytes.Buffer
			term := openTerm(t, TerminalConfig{In: in, Out: &out})
			// Raw mode on the child's PTY: no \n → \r\n translation.
			c := start(t, term, sh(t, "stty raw -echo && printf BEGIN && cat "+file))
			if st := wait(t, c); st.ExitCode() != 0 {
				t.Fatalf("child failed: %v, output %q", st, out.Bytes()[:min(out.Len(), 200)])
			}
			got, ok := bytes.CutPrefix(out.Bytes(), []byte("BEGIN"))
			if !ok {
				t.Fatalf("output does not start with the marker: %q", out.Bytes()[:min(out.Len(), 200)])
			}
			if !bytes.Equal(got, data) {
				t.Fatalf("relayed %d bytes, want %d identical bytes", len(got), len(data))
			}
			if a := c.Activity(); a.BytesOut != uint64(out.Len()) || a.LastOutput.IsZero() {
				t.Fatalf("activity %+v, want %d bytes and a time", a, out.Len())
			}
		})
	}
}

func TestStdinRelayWithoutTTY(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"lines then EOF", "hello\nworld\n", "ready\r\nhello\r\nworld\r\n"},
		{"partial last line then EOF", "hello\nwor", "ready\r\nhello\r\nwor"},
		{"no input", "", "ready\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, w := stdinPipe(t)
			out := &testutil.SyncBuffer{}
			term := openTerm(t, TerminalConfig{In: in, Out: out})
			if term.IsTTY() {
				t.Fatal("a pipe is reported as a TTY")
			}
			c := start(t, term, sh(t, "stty -echo; echo ready; exec cat"))
			out.WaitContains(t, "ready\r\n", safety)
			if _, err := io.WriteString(w, tt.input); err != nil {
				t.Fatal(err)
			}
			_ = w.Close()
			// cat exits 0 only if it saw end of input.
			if st := wait(t, c); st.ExitCode() != 0 {
				t.Fatalf("status %v", st)
			}
			if got := out.String(); got != tt.want {
				t.Fatalf("output %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEOFReachesLaterChild(t *testing.T) {
	in, w := stdinPipe(t)
	_ = w.Close()
	out := &testutil.SyncBuffer{}
	term := openTerm(t, TerminalConfig{In: in, Out: out})
	for i := range 2 {
		c := start(t, term, sh(t, "exec cat"))
		if st := wait(t, c); st.ExitCode() != 0 {
			t.Fatalf("child %d: status %v", i, st)
		}
	}
}

func TestWindowSizeWithoutTTY(t *testing.T) {
	tests := []struct {
		name       string
		cols, rows uint16
		want       string
	}{
		{"defaults", 0, 0, "40 120"},
		{"configured", 100, 30, "30 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := stdinPipe(t)
			out := &testutil.SyncBuffer{}
			term := openTerm(t, TerminalConfig{In: in, Out: out, Cols: tt.cols, Rows: tt.rows})
			c := start(t, term, sh(t, "stty size"))
			wait(t, c)
			if got := strings.TrimSpace(out.String()); got != tt.want {
				t.Fatalf("stty size = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRealTTY runs the Terminal on the slave of a test-owned pty pair, so
// raw mode, the initial size and SIGWINCH take their TTY paths.
func TestRealTTY(t *testing.T) {
	pm, ps, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pm.Close(); _ = ps.Close() })
	if err := setSize(pm, 80, 24); err != nil {
		t.Fatal(err)
	}
	before, err := term.GetState(int(ps.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	screen := &testutil.SyncBuffer{}
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(screen, pm) }()

	tm, err := OpenTerminal(TerminalConfig{In: ps, Out: ps, Cols: 10, Rows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !tm.IsTTY() {
		t.Fatal("pty slave not detected as a TTY")
	}
	if c, r := tm.Size(); c != 80 || r != 24 {
		t.Fatalf("Size = %dx%d, want the terminal's 80x24", c, r)
	}
	c, err := tm.Start(sh(t, "stty size; read x; stty size; echo got:$x"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.SignalGroup(syscall.SIGKILL); <-c.Done() })
	screen.WaitContains(t, "24 80", safety)

	during, err := term.GetState(int(ps.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(during, before) {
		t.Fatal("terminal not in raw mode while the child runs")
	}

	if err := setSize(pm, 132, 50); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(safety)
	for {
		if c, r := tm.Size(); c == 132 && r == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("SIGWINCH never handled")
		}
		time.Sleep(time.Millisecond)
	}
	// Raw mode: the carriage return reaches the child's PTY untranslated,
	// and the child's PTY (cooked) turns it into a newline.
	if _, err := pm.Write([]byte("key\r")); err != nil {
		t.Fatal(err)
	}
	screen.WaitContains(t, "50 132", safety)
	if st := wait(t, c); st.ExitCode() != 0 {
		t.Fatalf("status %v", st)
	}
	// Out is the slave; what was written to it is read from pm by the
	// copier, possibly after Done.
	screen.WaitContains(t, "got:key\r\n", safety)

	// A second child on the same terminal (a renewal): raw mode and the
	// window size carry over.
	if st, err := term.GetState(int(ps.Fd())); err != nil || !reflect.DeepEqual(st, during) {
		t.Fatalf("raw mode did not carry over between children (err %v)", err)
	}
	second := start(t, tm, sh(t, "echo second:$(stty size)"))
	if st := wait(t, second); st.ExitCode() != 0 {
		t.Fatalf("second child: %v", st)
	}
	screen.WaitContains(t, "second:50 132\r\n", safety)

	// An explicit Restore goes back to cooked mode; the next Start makes
	// the terminal raw again.
	if err := tm.Restore(); err != nil {
		t.Fatal(err)
	}
	if st, _ := term.GetState(int(ps.Fd())); !reflect.DeepEqual(st, before) {
		t.Fatal("Restore did not restore the original mode")
	}
	third := start(t, tm, sh(t, "exit 0"))
	wait(t, third)
	if st, _ := term.GetState(int(ps.Fd())); !reflect.DeepEqual(st, during) {
		t.Fatal("Start after Restore did not re-enter raw mode")
	}

	if err := tm.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tm.Restore(); err != nil {
		t.Fatalf("second Restore: %v", err)
	}
	after, err := term.GetState(int(ps.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatal("terminal mode not restored after Close")
	}
	_ = pm.Close()
	<-copied
}

func TestSignalGroupReachesGrandchild(t *testing.T) {
	in, _ := stdinPipe(t)
	out := &testutil.SyncBuffer{}
	tm := openTerm(t, TerminalConfig{In: in, Out: out})
	// The grandchild ignores nothing; the shell waits for it.
	c := start(t, tm, sh(t, "sleep 1000 & echo pid:$!; wait"))
	out.WaitContains(t, "\r\n", safety)
	line := strings.TrimSpace(out.String())
	gpid, err := strconv.Atoi(strings.TrimPrefix(line, "pid:"))
	if err != nil {
		t.Fatalf("no grandchild pid in %q", line)
	}
	members, err := procfs.GroupMembers(c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if !containsInt(members, gpid) || !containsInt(members, c.Pid()) {
		t.Fatalf("group %d members %v lack the child or grandchild %d", c.Pid(), members, gpid)
	}
	if err := c.SignalGroup(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	st := wait(t, c)
	if !st.Signaled || st.Signal != syscall.SIGTERM {
		t.Fatalf("child status %v, want SIGTERM", st)
	}
	// The grandchild got SIGTERM too: it is gone or a zombie awaiting its
	// new parent's reap.
	deadline := time.Now().Add(safety)
	for {
		s, err := procfs.Stat(gpid)
		if errors.Is(err, os.ErrNotExist) || (err == nil && (s.State == 'Z' || s.State == 'X')) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running: %+v %v", gpid, s, err)
		}
		time.Sleep(time.Millisecond)
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestDoneBoundedWhenGrandchildHoldsPTY: the child exits while a
// background grandchild keeps the PTY open; Done still closes and the
// child's output is all there.
func TestDoneBoundedWhenGrandchildHoldsPTY(t *testing.T) {
	in, _ := stdinPipe(t)
	out := &testutil.SyncBuffer{}
	tm := openTerm(t, TerminalConfig{In: in, Out: out})
	c := start(t, tm, sh(t, "trap '' HUP; sleep 1000 & echo bye"))
	st := wait(t, c)
	if st.ExitCode() != 0 {
		t.Fatalf("status %v", st)
	}
	if got := out.String(); got != "bye\r\n" {
		t.Fatalf("output %q", got)
	}
	members, err := procfs.GroupMembers(c.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if len(members) == 0 {
		t.Fatal("the grandchild holding the PTY should still be in the group")
	}
	if err := c.SignalGroup(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

func TestStartErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noExec := write("noexec", "#!/bin/sh\n", 0o600)
	garbage := write("garbage", "\x00\x01\x02\x03not a program", 0o700)
	badInterp := write("badinterp", "#!/nonexistent/interpreter\n", 0o700)
	inPath := filepath.Join(dir, "bin")
	if err := os.Mkdir(inPath, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inPath, "onlyread"), []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec ChildSpec
		want error
	}{
		{"unknown name", ChildSpec{Path: "lifeloop-no-such-command", Env: []string{"PATH=/usr/bin:/bin"}}, ErrNotFound},
		{"empty PATH", ChildSpec{Path: "sh", Env: nil}, ErrNotFound},
		{"relative PATH entry refused", ChildSpec{Path: "sh", Env: []string{"PATH=.:bin"}, Dir: "/bin"}, ErrNotFound},
		{"missing path", ChildSpec{Path: filepath.Join(dir, "missing")}, ErrNotFound},
		{"path through a file", ChildSpec{Path: noExec + "/x"}, ErrNotFound},
		{"empty", ChildSpec{}, ErrNotFound},
		{"not executable", ChildSpec{Path: noExec}, ErrNotExecutable},
		{"directory", ChildSpec{Path: dir}, ErrNotExecutable},
		{"exec format error", ChildSpec{Path: garbage}, ErrNotExecutable},
		{"missing interpreter", ChildSpec{Path: badInterp}, ErrNotFound},
		{"non-executable in PATH", ChildSpec{Path: "onlyread", Env: []string{"PATH=" + inPath}}, ErrNotFound},
	}
	in, _ := stdinPipe(t)
	tm := openTerm(t, TerminalConfig{In: in, Out: io.Discard})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tm.Start(tt.spec)
			if err == nil {
				_ = c.SignalGroup(syscall.SIGKILL)
				<-c.Done()
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			other := ErrNotExecutable
			if errors.Is(tt.want, ErrNotExecutable) {
				other = ErrNotFound
			}
			if errors.Is(err, other) {
				t.Fatalf("err = %v is also %v", err, other)
			}
		})
	}
	// A failed start leaves the terminal free.
	c := start(t, tm, sh(t, "exit 7"))
	if st := wait(t, c); st.ExitCode() != 7 {
		t.Fatalf("status %v", st)
	}
}

// TestRenewalOnSameTerminal runs two children one after the other on one
// Terminal, as a renewal does; input typed between them reaches the second.
func TestRenewalOnSameTerminal(t *testing.T) {
	in, w := stdinPipe(t)
	out := &testutil.SyncBuffer{}
	tm := openTerm(t, TerminalConfig{In: in, Out: out})

	first := start(t, tm, sh(t, "stty -echo; echo ready1; read x; echo one:$x"))
	out.WaitContains(t, "ready1", safety)
	if _, err := tm.Start(sh(t, "true")); !errors.Is(err, ErrBusy) {
		t.Fatalf("second Start while attached: %v, want ErrBusy", err)
	}
	if _, err := io.WriteString(w, "a\n"); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, first); st.ExitCode() != 0 {
		t.Fatalf("first: %v", st)
	}
	// Typed while no child is attached: held for the next one.
	if _, err := io.WriteString(w, "b\n"); err != nil {
		t.Fatal(err)
	}
	second := start(t, tm, sh(t, "read x; echo two:$x"))
	if st := wait(t, second); st.ExitCode() != 0 {
		t.Fatalf("second: %v", st)
	}
	got := out.String()
	if !strings.Contains(got, "one:a\r\n") || !strings.Contains(got, "two:b\r\n") {
		t.Fatalf("output %q", got)
	}
}

func TestChildWriteAndActivity(t *testing.T) {
	in, _ := stdinPipe(t)
	out := &testutil.SyncBuffer{}
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tm := openTerm(t, TerminalConfig{In: in, Out: out, Now: func() time.Time { return fixed }})
	c := start(t, tm, sh(t, "stty -echo; echo ready; read x; echo got:$x"))
	out.WaitContains(t, "ready\r\n", safety)
	if _, err := c.Write([]byte("/exit\r")); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c); st.ExitCode() != 0 {
		t.Fatalf("status %v", st)
	}
	want := "ready\r\ngot:/exit\r\n"
	if got := out.String(); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	a := c.Activity()
	if a.BytesOut != uint64(len(want)) || !a.LastOutput.Equal(fixed) {
		t.Fatalf("activity %+v, want %d bytes at %v", a, len(want), fixed)
	}
	if _, err := c.Write([]byte("late")); err == nil {
		t.Fatal("Write after Done succeeded")
	}
}

func TestCloseStopsReaderAndRefusesStart(t *testing.T) {
	in, _ := stdinPipe(t)
	tm, err := OpenTerminal(TerminalConfig{In: in})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := tm.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tm.Start(sh(t, "true")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v, want ErrClosed", err)
	}
}

func TestExitStatusString(t *testing.T) {
	tests := []struct {
		st   ExitStatus
		want string
		code int
	}{
		{ExitStatus{Code: 3}, "exit 3", 3},
		{ExitStatus{Code: -1, Signaled: true, Signal: syscall.SIGKILL}, "signal killed", 137},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.st.String(); got != tt.want {
				t.Fatalf("String = %q", got)
			}
			if got := tt.st.ExitCode(); got != tt.code {
				t.Fatalf("ExitCode = %d", got)
			}
		})
	}
}

func TestInputWithoutFile(t *testing.T) {
	tests := []struct {
		name string
		in   io.Reader
		want string
	}{
		{"reader", strings.NewReader("one\ntwo\n"), "one\r\ntwo\r\n"},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &testutil.SyncBuffer{}
			tm := openTerm(t, TerminalConfig{In: tt.in, Out: out})
			// The input arrives in one write that the PTY echoes at once,
			// before cat can copy it: the echo, then cat's copy.
			c := start(t, tm, sh(t, "exec cat"))
			if st := wait(t, c); st.ExitCode() != 0 {
				t.Fatalf("status %v", st)
			}
			if got := out.String(); got != tt.want+tt.want {
				t.Fatalf("output %q, want the echo and cat's copy of %q", got, tt.want)
			}
		})
	}
}

func TestCloseWithInputHeld(t *testing.T) {
	in, w := stdinPipe(t)
	tm, err := OpenTerminal(TerminalConfig{In: in})
	if err != nil {
		t.Fatal(err)
	}
	// Read by the reader but never delivered: no child is attached.
	if _, err := io.WriteString(w, "typed ahead\n"); err != nil {
		t.Fatal(err)
	}
	if err := tm.Close(); err != nil {
		t.Fatal(err)
	}
}

type brokenWriter struct{ calls int }

func (b *brokenWriter) Write(p []byte) (int, error) {
	b.calls++
	return 0, syscall.EPIPE
}

// TestDeadOutputDoesNotBlockChild: when Out fails, output is still drained
// (and counted) so the child runs to completion.
func TestDeadOutputDoesNotBlockChild(t *testing.T) {
	in, _ := stdinPipe(t)
	out := &brokenWriter{}
	tm := openTerm(t, TerminalConfig{In: in, Out: out})
	c := start(t, tm, sh(t, "stty raw; head -c 1048576 /dev/zero"))
	if st := wait(t, c); st.ExitCode() != 0 {
		t.Fatalf("status %v", st)
	}
	if out.calls != 1 {
		t.Fatalf("Out written %d times after failing; want 1", out.calls)
	}
	if n := c.Activity().BytesOut; n != 1<<20 {
		t.Fatalf("drained %d bytes, want %d", n, 1<<20)
	}
}

// TestSplitReports: while input is held, the terminal's replies to a
// harness's queries pass and keys wait.
func TestSplitReports(t *testing.T) {
	for _, tc := range []struct{ in, reports, rest string }{
		{"abc", "", "abc"},
		{"\x1b[?1;2c", "\x1b[?1;2c", ""},
		{"x\x1b[12;40Ry", "\x1b[12;40R", "xy"},
		{"\x1b[A\x1b[B", "", "\x1b[A\x1b[B"}, // arrow keys are keys
		{"\x1b]11;rgb:0000/0000/0000\x07hi", "\x1b]11;rgb:0000/0000/0000\x07", "hi"},
		{"\x1bP>|xterm(1)\x1b\\q", "\x1bP>|xterm(1)\x1b\\", "q"},
		{"\x1b[?2004;1$yz", "\x1b[?2004;1$y", "z"},
		{"\x1b[?1u", "\x1b[?1u", ""},
	} {
		r, rest := splitReports([]byte(tc.in))
		if string(r) != tc.reports || string(rest) != tc.rest {
			t.Errorf("splitReports(%q) = %q, %q; want %q, %q", tc.in, r, rest, tc.reports, tc.rest)
		}
	}
}
