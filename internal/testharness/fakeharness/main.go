// Command fakeharness is a scripted stand-in for a coding harness, used by
// lifeloop's tests to exercise supervision (PTY, signals, exit codes,
// process groups, resize) and telemetry tailing without a real harness.
//
// It runs its arguments as steps, in order. Each step is one argument,
// "name" or "name:value":
//
//	print:TEXT          print TEXT and a newline (\n, \t, \r, \e escapes allowed)
//	sleep:DURATION      sleep, e.g. sleep:200ms
//	read-line           read one line from stdin, print "read: LINE"
//	expect:TEXT         read lines until one equals TEXT, print "got: TEXT";
//	                    exit 4 when stdin ends first
//	echo-stdin          copy stdin to stdout until end of input
//	stty-size           print "size: ROWS COLS" of the terminal on stdin
//	wait-winch          wait for a SIGWINCH (one arriving since start-up or the
//	                    previous wait-winch counts), print "winch: ROWS COLS"
//	print-env:NAME      print "env: NAME=VALUE" ("env: NAME unset" if unset)
//	catch:SIG           catch SIG; each delivery prints "caught: SIGNAME"
//	ignore:SIG          ignore SIG
//	wait-signal         block until a caught signal arrives (it is printed)
//	exit:N              exit with code N (the default at the end is 0)
//	signal:SIG          restore SIG's default action and send it to itself
//	spawn:STEP,STEP...  start a child fakeharness running those steps in the
//	                    same process group, print "spawned: PID"
//	child-ignore-term   spawn a child that ignores SIGTERM and SIGHUP and
//	                    sleeps 1h, print "spawned: PID" once it ignores them
//	spawn-grandchild    spawn a child that spawns a grandchild ignoring
//	                    SIGTERM and SIGHUP (sleeping 1h) and exits; print
//	                    "grandchild: PID" once it ignores them
//
// The SIGTERM-ignoring descendants also ignore SIGHUP because the kernel
// hangs up the terminal's foreground process group when the session leader
// exits; without it they would not outlive the leader under a PTY.
//
//	ready-parent        (in a spawned child) tell the parent the steps so far
//	                    are done; a spawn step whose child steps contain
//	                    ready-parent waits for it before going on
//	wait-children       wait for the children started by spawn steps
//
// Transcript steps append lines shaped like the real harnesses' files
// (Claude Code 2.1.197 transcripts, Codex 0.169.0 rollouts). PATH has
// environment variables expanded; parent folders are created 0700 and files
// 0600:
//
//	session:ID          harness session id for later transcript lines
//	                    (default: a random UUID)
//	usage:IN,OUT[,CACHE_CREATE,CACHE_READ]
//	                    token usage for later transcript lines (default 12,5)
//	window:N            Codex model_context_window (default 258400)
//	write-claude:PATH   one Claude turn: a user line and an assistant line
//	                    with message.usage
//	claude-compact:PATH a compact_boundary system line and the
//	                    isCompactSummary user line
//	write-codex:PATH    one Codex turn: session_meta (first write only),
//	                    task_started, user_message, agent_message,
//	                    token_count, task_complete
//	codex-compact:PATH  a compacted line and a token_count line
//
// Signal names are given without "SIG": TERM, INT, HUP, QUIT, USR1, USR2,
// WINCH, KILL. A step it does not understand makes it print the error to
// stderr and exit 2.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"
)

func main() {
	h := &harness{
		in:           bufio.NewReader(os.Stdin),
		out:          os.Stdout,
		sessionID:    newUUID(),
		usage:        [4]int{12, 5, 0, 0},
		window:       258400,
		caught:       make(chan os.Signal, 16),
		waitCaught:   make(chan os.Signal, 16),
		winch:        make(chan os.Signal, 1),
		codexOrdinal: map[string]int{},
	}
	// SIGWINCH is noted from the start so a resize right after an earlier
	// step is not lost before wait-winch runs.
	signal.Notify(h.winch, syscall.SIGWINCH)
	code, err := h.run(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakeharness: %v\n", err)
	}
	os.Exit(code)
}

type harness struct {
	in        *bufio.Reader
	out       io.Writer
	sessionID string
	usage     [4]int // in, out, cache creation, cache read
	window    int
	caught    chan os.Signal
	// waitCaught carries caught signals to wait-signal.
	waitCaught chan os.Signal
	catching   bool
	winch      chan os.Signal
	children   []*exec.Cmd
	parentID   string // uuid of the last Claude line written
	turn       int
	// codexOrdinal is the next ordinal per rollout file.
	codexOrdinal map[string]int
	// codexTotal is the running total of input and output tokens.
	codexTotal [2]int
}

// exitError ends the run with a chosen code.
type exitError int

func (e exitError) Error() string { return "exit " + strconv.Itoa(int(e)) }

func (h *harness) run(steps []string) (int, error) {
	for _, step := range steps {
		name, value, _ := strings.Cut(step, ":")
		if err := h.step(name, value); err != nil {
			var ee exitError
			if errors.As(err, &ee) {
				return int(ee), nil
			}
			var usage usageError
			if errors.As(err, &usage) {
				return 2, err
			}
			return 1, fmt.Errorf("step %q: %w", step, err)
		}
	}
	return 0, nil
}

// usageError is a step the fake harness does not understand.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func (h *harness) step(name, value string) error {
	switch name {
	case "print":
		_, err := fmt.Fprintln(h.out, unescape(value))
		return err
	case "sleep":
		d, err := time.ParseDuration(value)
		if err != nil {
			return usageError{fmt.Sprintf("sleep:%s: %v (use e.g. sleep:200ms)", value, err)}
		}
		time.Sleep(d)
		return nil
	case "read-line":
		line, err := h.in.ReadString('\n')
		if err != nil && line == "" {
			return exitError(4)
		}
		_, err = fmt.Fprintf(h.out, "read: %s\n", strings.TrimRight(line, "\r\n"))
		return err
	case "expect":
		for {
			line, err := h.in.ReadString('\n')
			if strings.TrimRight(line, "\r\n") == value {
				_, err := fmt.Fprintf(h.out, "got: %s\n", value)
				return err
			}
			if err != nil {
				return exitError(4)
			}
		}
	case "echo-stdin":
		_, err := io.Copy(h.out, h.in)
		return err
	case "stty-size":
		rows, cols, err := size()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(h.out, "size: %d %d\n", rows, cols)
		return err
	case "wait-winch":
		<-h.winch
		rows, cols, err := size()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(h.out, "winch: %d %d\n", rows, cols)
		return err
	case "print-env":
		if v, ok := os.LookupEnv(value); ok {
			_, err := fmt.Fprintf(h.out, "env: %s=%s\n", value, v)
			return err
		}
		_, err := fmt.Fprintf(h.out, "env: %s unset\n", value)
		return err
	case "catch", "ignore", "signal":
		sig, err := parseSignal(value)
		if err != nil {
			return err
		}
		switch name {
		case "catch":
			signal.Notify(h.caught, sig)
			if !h.catching {
				h.catching = true
				go h.reportCaught()
			}
		case "ignore":
			signal.Ignore(sig)
		case "signal":
			signal.Reset(sig)
			if err := dieBySignal(sig); err != nil {
				return err
			}
			time.Sleep(5 * time.Second) // delivery is asynchronous
			return fmt.Errorf("still alive 5s after sending myself %v", sig)
		}
		return nil
	case "wait-signal":
		<-h.waitCaught
		return nil
	case "exit":
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 || n > 255 {
			return usageError{fmt.Sprintf("exit:%s: want a code 0..255", value)}
		}
		return exitError(n)
	case "spawn":
		return h.spawn(strings.Split(value, ","), "spawned")
	case "child-ignore-term":
		return h.spawn([]string{"ignore:TERM", "ignore:HUP", "ready-parent", "sleep:1h"}, "spawned")
	case "spawn-grandchild":
		cmd, err := h.start([]string{"spawn-grandchild-helper"})
		if err != nil {
			return err
		}
		return cmd.Wait()
	case "spawn-grandchild-helper":
		cmd, err := h.start([]string{"ignore:TERM", "ignore:HUP", "ready-parent", "sleep:1h"})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(h.out, "grandchild: %d\n", cmd.Process.Pid)
		return err
	case "ready-parent":
		return readyParent()
	case "wait-children":
		for _, c := range h.children {
			_ = c.Wait()
		}
		h.children = nil
		return nil
	case "session":
		if value == "" {
			return usageError{"session: needs an id"}
		}
		h.sessionID = value
		return nil
	case "usage":
		return h.setUsage(value)
	case "window":
		n, err := strconv.Atoi(value)
		if err != nil || n <= 0 {
			return usageError{fmt.Sprintf("window:%s: want a positive number", value)}
		}
		h.window = n
		return nil
	case "write-claude":
		return h.writeClaude(os.ExpandEnv(value))
	case "claude-compact":
		return h.claudeCompact(os.ExpandEnv(value))
	case "write-codex":
		return h.writeCodex(os.ExpandEnv(value))
	case "codex-compact":
		return h.codexCompact(os.ExpandEnv(value))
	default:
		return usageError{fmt.Sprintf("unknown step %q (see the package documentation for the step list)", name)}
	}
}

// reportCaught prints every caught signal and hands it on to wait-signal.
// It runs from the first catch step until the process exits.
func (h *harness) reportCaught() {
	for sig := range h.caught {
		fmt.Fprintf(h.out, "caught: SIG%s\n", signalName(sig))
		select {
		case h.waitCaught <- sig:
		default:
		}
	}
}

var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "QUIT": syscall.SIGQUIT,
	"USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "WINCH": syscall.SIGWINCH, "KILL": syscall.SIGKILL,
}

func signalName(sig os.Signal) string {
	for name, s := range signals {
		if s == sig {
			return name
		}
	}
	return sig.String()
}

func parseSignal(name string) (syscall.Signal, error) {
	sig, ok := signals[strings.TrimPrefix(strings.ToUpper(name), "SIG")]
	if !ok {
		return 0, usageError{fmt.Sprintf("unknown signal %q; use TERM, INT, HUP, QUIT, USR1, USR2, WINCH or KILL", name)}
	}
	return sig, nil
}

func size() (rows, cols int, err error) {
	cols, rows, err = term.GetSize(int(os.Stdin.Fd()))
	if err != nil {
		return 0, 0, fmt.Errorf("terminal size of stdin: %w (stdin must be a terminal)", err)
	}
	return rows, cols, nil
}

func unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\r`, "\r", `\e`, "\x1b", `\\`, `\`).Replace(s)
}

// readyFDVar names the descriptor on which a child started by start
// reports ready-parent.
const readyFDVar = "FAKEHARNESS_READY_FD"

// start runs a child fakeharness with steps in this process group, sharing
// stdout and stderr. When steps contain ready-parent, start returns only
// once the child has reached that step (or died).
func (h *harness) start(steps []string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.CommandContext(context.Background(), self, steps...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = append(os.Environ(), readyFDVar+"=3")
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, err
	}
	if slices.Contains(steps, "ready-parent") {
		var b [1]byte
		_, _ = r.Read(b[:]) // a byte, or EOF when the child died first
	}
	return cmd, nil
}

// readyParent tells the fakeharness that started this one that the steps
// so far are done.
func readyParent() error {
	fd, err := strconv.Atoi(os.Getenv(readyFDVar))
	if err != nil {
		return usageError{"ready-parent: not started by a spawn step"}
	}
	f := os.NewFile(uintptr(fd), "ready")
	defer f.Close()
	_, err = f.Write([]byte{1})
	return err
}

func (h *harness) spawn(steps []string, label string) error {
	cmd, err := h.start(steps)
	if err != nil {
		return err
	}
	h.children = append(h.children, cmd)
	_, err = fmt.Fprintf(h.out, "%s: %d\n", label, cmd.Process.Pid)
	return err
}

func (h *harness) setUsage(value string) error {
	parts := strings.Split(value, ",")
	if len(parts) != 2 && len(parts) != 4 {
		return usageError{fmt.Sprintf("usage:%s: want IN,OUT or IN,OUT,CACHE_CREATE,CACHE_READ", value)}
	}
	var u [4]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return usageError{fmt.Sprintf("usage:%s: %q is not a token count", value, p)}
		}
		u[i] = n
	}
	h.usage = u
	return nil
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// appendLines appends JSON lines to path, creating it 0600 (folders 0700).
func appendLines(path string, lines ...any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	var buf []byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			f.Close()
			return err
		}
		buf = append(append(buf, b...), '\n')
	}
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
