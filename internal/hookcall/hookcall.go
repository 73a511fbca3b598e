// Package hookcall is the lifeloop-hook program: the hook command `lifeloop
// run` installs for one launch when it finds lifeloop-hook beside itself.
// It hands one native hook call to the live wrapper over the session's
// control socket and prints the wrapper's answer, without the start-up of
// the whole lifeloop program (its adapters, ledger and database driver):
// a hook process costs the harness about a third of the CPU.
//
// It takes the arguments of `lifeloop host-hook` (host-hook --adapter ID
// --hook NAME [--chain ARGV] [--timeout D] [--state-dir DIR] [JSON]) and
// leaves to `lifeloop host-hook`, beside it, with the same arguments and
// input, whatever it does not do itself: a call outside a live `lifeloop
// run` (no LIFELOOP_SESSION_DIR), the user's own program to chain, and a
// call the wrapper did not take (host-hook tries once more within what is
// left of the bound, then records the failure where the ledger is).
package hookcall

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
)

// Program is the file name of the lean hook program, installed beside
// lifeloop.
const Program = "lifeloop-hook"

// fullProgram is the program this one leaves what it does not do to.
const fullProgram = "lifeloop"

// DefaultTimeout bounds one hook call: the harness waits for it.
const DefaultTimeout = 2 * time.Second

// minFallback is the least time host-hook gets after a failed call, to
// record the failure.
const minFallback = 200 * time.Millisecond

// call is one hook call as the command line gives it.
type call struct {
	adapter, hook, chain string
	timeout              time.Duration
	args                 []string // after the flags: a hook called as a program gets its JSON last
}

// parse reads host-hook's arguments; ok is false for anything else.
func parse(args []string) (c call, ok bool) {
	if len(args) == 0 || args[0] != "host-hook" {
		return c, false
	}
	fs := flag.NewFlagSet(Program, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.adapter, "adapter", "", "")
	fs.StringVar(&c.hook, "hook", "", "")
	fs.StringVar(&c.chain, "chain", "", "")
	fs.DurationVar(&c.timeout, "timeout", DefaultTimeout, "")
	fs.String("state-dir", "", "")
	if fs.Parse(args[1:]) != nil || c.adapter == "" || c.hook == "" {
		return c, false
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	c.args = fs.Args()
	return c, true
}

// Env is what the program needs from its process.
type Env struct {
	Args   []string // os.Args
	Stdin  io.Reader
	Stdout io.Writer
	Getenv func(string) string
	// Full is the lifeloop program to leave a call to.
	Full string
}

// Main serves one hook call and returns the exit status (0, as host-hook:
// a hook never fails the harness).
func Main(e Env) int {
	c, ok := parse(e.Args[1:])
	dir := e.Getenv("LIFELOOP_SESSION_DIR")
	if !ok || dir == "" || c.chain != "" {
		return handOver(e, e.Args[1:], e.Stdin)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	var input []byte
	if len(c.args) == 0 { // the JSON comes on stdin, else it is the last argument
		var err error
		if input, err = readInput(ctx, e.Stdin); err != nil {
			return handOver(e, e.Args[1:], bytes.NewReader(input))
		}
	}
	response, err := Forward(ctx, control.SocketIn(dir), c.adapter, c.hook, c.args, input)
	if err != nil {
		left := max(c.timeout-time.Since(start), minFallback)
		return handOver(e, withTimeout(e.Args[1:], left), bytes.NewReader(input))
	}
	_, _ = e.Stdout.Write(response)
	return 0
}

// Forward hands one hook call to the wrapper listening on socket and
// returns the hook's response as the harness reads it. argv are the
// arguments after host-hook's flags; input is the hook's stdin.
func Forward(ctx context.Context, socket, adapter, hook string, argv []string, input []byte) ([]byte, error) {
	a := hooks.HookArgs{Adapter: adapter, Hook: hook, Argv: argv}
	if len(bytes.TrimSpace(input)) > 0 {
		if json.Valid(input) {
			a.Stdin = json.RawMessage(bytes.TrimSpace(input))
		} else {
			a.StdinBase64 = base64.StdEncoding.EncodeToString(input)
		}
	}
	var reply hooks.HookReply
	if err := control.Call(ctx, socket, control.OpHook, a, &reply); err != nil {
		return nil, err
	}
	return []byte(reply.Response), nil
}

// readInput reads the hook's stdin, bounded in size and time.
func readInput(ctx context.Context, r io.Reader) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() { // ends at EOF or the limit; the process ends soon after
		data, err := io.ReadAll(io.LimitReader(r, hooks.MaxStdin+1))
		done <- read{data, err}
	}()
	select {
	case rd := <-done:
		if rd.err == nil && len(rd.data) > hooks.MaxStdin {
			rd.err = errors.New("hook input too large")
		}
		return rd.data, rd.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// withTimeout gives host-hook's arguments the bound d in place of any
// --timeout they had.
func withTimeout(args []string, d time.Duration) []string {
	out := []string{args[0], "--timeout", d.String()}
	for i := 1; i < len(args); i++ {
		switch {
		case args[i] == "--timeout" && i+1 < len(args):
			i++
		case len(args[i]) > 10 && args[i][:10] == "--timeout=":
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// handOver runs `lifeloop ARGS` with stdin and its output as this
// program's, and returns its exit status.
func handOver(e Env, args []string, stdin io.Reader) int {
	cmd := exec.Command(e.Full, args...) //nolint:noctx // host-hook bounds itself (--timeout)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, e.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		return 0 // no lifeloop to hand over to: the harness carries on
	}
	return 0
}

// Beside returns the lean hook program beside the lifeloop program exe,
// when it is there.
func Beside(exe string) (string, bool) {
	p := filepath.Join(filepath.Dir(exe), Program)
	return p, isProgram(p)
}

// FullProgram is the lifeloop program beside exe, else the one on PATH.
func FullProgram(exe string) string {
	if p := filepath.Join(filepath.Dir(exe), fullProgram); isProgram(p) {
		return p
	}
	if p, err := exec.LookPath(fullProgram); err == nil {
		return p
	}
	return fullProgram
}

// isProgram reports whether p is an executable file.
func isProgram(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
