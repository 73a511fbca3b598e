package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/nativehook"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// DefaultHookTimeout bounds one host-hook call: the harness waits for it.
const DefaultHookTimeout = 2 * time.Second

// wrapperDeathWindow is how long a hook whose call to the wrapper failed
// waits to see the wrapper's lock freed before it records the failure
// in the wrapper's session (only a failed call waits).
const wrapperDeathWindow = 300 * time.Millisecond

// hookOptions are the inputs of `lifeloop host-hook`.
type hookOptions struct {
	Adapter  string
	Hook     string
	Timeout  time.Duration
	StateDir string
	Chain    string
	Args     []string

	In       io.Reader
	Out      io.Writer
	Getenv   func(string) string
	Now      func() time.Time
	IDs      ids.Source
	Registry *adapters.Registry
}

func hostHookCommand(e *env) *ucli.Command {
	var opts hookOptions
	return &ucli.Command{
		Name:      "host-hook",
		Usage:     "serve one native hook call of a harness (installed by `lifeloop run` or `lifeloop host apply`)",
		ArgsUsage: "[HOOK-JSON]",
		Description: "Reads the hook's JSON on standard input (or, for a hook called as a program\n" +
			"with its JSON as the last argument, from there), maps it to lifecycle moments and\n" +
			"prints the harness's hook response.\n" +
			"Inside `lifeloop run` (LIFELOOP_SESSION_DIR names a live wrapper) the call is\n" +
			"forwarded to the wrapper, whose answer may carry context for the model. Otherwise\n" +
			"(native_hook mode) the moments are recorded in the ledger of a lifeloop session\n" +
			"keyed by the harness's session id, created on first sight.\n\n" +
			"It never breaks the harness: garbage input, an unknown hook, a dead wrapper or a\n" +
			"timeout print an empty response and exit 0, with a failed receipt recorded where\n" +
			"a ledger can be found (sessions named native-unattributed-ADAPTER hold failures\n" +
			"that name no harness session).\n\n" +
			"Exit status: always 0.",
		OnUsageError: commandUsageError,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "adapter", Usage: "adapter `ID` (" + strings.Join(withHooks(e.Registry()), ", ") + ")", Destination: &opts.Adapter},
			&ucli.StringFlag{Name: "hook", Usage: "hook `EVENT` as the harness names it (SessionStart, Stop, ...)", Destination: &opts.Hook},
			&ucli.DurationFlag{Name: "timeout", Usage: "bound on the whole call", Value: DefaultHookTimeout, Destination: &opts.Timeout},
			&ucli.StringFlag{Name: "chain", Usage: "the user's own program for this hook as a JSON `ARRAY` of argv words; run with the call's JSON appended", Destination: &opts.Chain},
			stateDirFlag(&opts.StateDir),
		},
		Action: func(c *ucli.Context) error {
			opts.Args = c.Args().Slice()
			opts.In, opts.Out, opts.Getenv, opts.Now, opts.IDs = e.In, e.Out, e.Getenv, e.Now, e.IDs
			opts.Registry = e.Registry()
			hostHookRun(c.Context, opts)
			return nil
		},
	}
}

// hookFailure is a reason the hook call could not be served normally.
type hookFailure struct {
	class contract.FailureClass
	msg   string
}

// of is the failure as the native session records it.
func (f *hookFailure) of(opts hookOptions) nativehook.Failure {
	return nativehook.Failure{Class: f.class, Message: f.msg, Hook: opts.Hook, Adapter: opts.Adapter}
}

// hostHookRun serves one hook call. It always prints a valid response.
func hostHookRun(ctx context.Context, opts hookOptions) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultHookTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	response := hooks.EmptyResponse()
	defer func() { _, _ = opts.Out.Write(response) }()

	spec := hookSpec(opts.Registry, opts.Adapter)
	input, fail := hookInput(ctx, spec, opts)
	if spec.ChainsUser(opts.Hook) && opts.Chain != "" {
		chainUser(context.WithoutCancel(ctx), opts.Chain, input)
	}
	var mapped hooks.Mapped
	if fail == nil {
		var err error
		mapped, err = hooks.Map(spec, opts.Adapter, opts.Hook, input)
		if err != nil {
			fail = &hookFailure{contract.FailureInvalidRequest, err.Error()}
		}
	}
	dir := opts.Getenv("LIFELOOP_SESSION_DIR")
	attentionOnly := fail == nil && len(mapped.Moments) == 0
	if attentionOnly && (dir == "" || !spec.MayAttend(opts.Hook)) {
		return // a hook that is no lifecycle moment, and no wrapper's attention to tell
	}

	if dir != "" {
		if fail == nil {
			reply, err := forwardHook(ctx, dir, opts, input)
			if err == nil {
				response = []byte(reply.Response)
				return
			}
			if attentionOnly {
				return // no moment lost: only the wrapper's attention goes without it
			}
			fail = &hookFailure{contract.FailureTransportError, "forwarding the hook to the lifeloop run wrapper: " + err.Error()}
			if errors.Is(err, context.DeadlineExceeded) {
				fail.class = contract.FailureTimeout
			}
		}
		// The wrapper's session records the failure when it is a lifeloop
		// session folder (<root>/sessions/<id> with its session.json);
		// otherwise the failure goes where a native call's would.
		root, id := filepath.Dir(filepath.Dir(dir)), filepath.Base(dir)
		if statedir.ValidateSessionID(id) == nil && filepath.Base(filepath.Dir(dir)) == statedir.SessionsFolder {
			if rec, err := statedir.ReadSession(root, id); err == nil {
				// A wrapper that died (its lock is free) or a session that
				// ended gets nothing: the seal tells that end, and a failed
				// moment of this call would be a second one. A wrapper
				// killed while it answered this call may still hold its
				// lock for a moment after its socket closed.
				if !rec.State.IsTerminal() && !statedir.WrapperGoneWithin(root, id, wrapperDeathWindow) {
					nativeRecorder(opts, root).RecordFailure(id, mapped, fail.of(opts))
				}
				return
			}
		}
	}

	root, err := statedir.Resolve(opts.StateDir, opts.Getenv)
	if err != nil {
		return
	}
	if fail != nil || mapped.HarnessSessionID == "" {
		if fail == nil {
			fail = &hookFailure{contract.FailureIdentityUnavailable, "the hook input names no harness session"}
		}
		nativeRecorder(opts, root).RecordFailure("", mapped, fail.of(opts))
		return
	}
	nativeRecorder(opts, root).Record(mapped)
}

// nativeRecorder records the call in the native sessions under root.
func nativeRecorder(opts hookOptions, root string) nativehook.Recorder {
	return nativehook.Recorder{Root: root, Adapter: nativehook.AdapterFor(opts.Registry, opts.Adapter), Durability: envDurability(opts.Getenv),
		Now: opts.Now, IDs: opts.IDs}
}

// hookInput returns the hook's input: the last argument for a hook called
// as a program with its JSON there, else standard input (bounded in size
// and time).
func hookInput(ctx context.Context, spec *hooks.Spec, opts hookOptions) ([]byte, *hookFailure) {
	if spec.FromArgv(opts.Hook) {
		if len(opts.Args) == 0 {
			return nil, &hookFailure{contract.FailureInvalidRequest, opts.Hook + " needs the notification JSON as its last argument"}
		}
		return []byte(opts.Args[len(opts.Args)-1]), nil
	}
	type read struct {
		data []byte
		err  error
	}
	done := make(chan read, 1)
	go func() { // exits when stdin reaches EOF or the limit; the process ends soon after
		data, err := io.ReadAll(io.LimitReader(opts.In, hooks.MaxStdin+1))
		done <- read{data, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, &hookFailure{contract.FailureTransportError, "reading the hook input: " + r.err.Error()}
		}
		if len(r.data) > hooks.MaxStdin {
			return nil, &hookFailure{contract.FailureInvalidRequest, fmt.Sprintf("hook input larger than %d bytes", hooks.MaxStdin)}
		}
		return r.data, nil
	case <-ctx.Done():
		return nil, &hookFailure{contract.FailureTimeout, "the hook input did not end in time"}
	}
}

// chainUser starts the user's own program for the hook with the call's
// JSON appended, detached (in its own session), as the harness would
// have; lifeloop does not wait for it.
func chainUser(ctx context.Context, chain string, input []byte) {
	var argv []string
	if err := json.Unmarshal([]byte(chain), &argv); err != nil || len(argv) == 0 {
		return
	}
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], string(input))...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err == nil {
		_ = cmd.Process.Release()
	}
}

// forwardHook hands the call to the live wrapper whose session folder is
// dir.
func forwardHook(ctx context.Context, dir string, opts hookOptions, input []byte) (hooks.HookReply, error) {
	args := hooks.HookArgs{Adapter: opts.Adapter, Hook: opts.Hook, Argv: opts.Args}
	if !hookSpec(opts.Registry, opts.Adapter).FromArgv(opts.Hook) {
		if json.Valid(input) {
			args.Stdin = json.RawMessage(bytes.TrimSpace(input))
		} else {
			args.StdinBase64 = base64.StdEncoding.EncodeToString(input)
		}
	}
	var reply hooks.HookReply
	err := control.Call(ctx, control.SocketIn(dir), control.OpHook, args, &reply)
	if err != nil && (ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)) {
		err = fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
	}
	return reply, err
}

// hookSpec returns the hooks of adapter id, or nil when the registry does
// not know it or it has none.
func hookSpec(reg *adapters.Registry, id string) *hooks.Spec {
	if reg == nil {
		return nil
	}
	a, err := reg.Lookup(id)
	if err != nil {
		return nil
	}
	return a.Hooks()
}

// withHooks lists the adapters with native hooks, for help and messages.
func withHooks(reg *adapters.Registry) []string {
	return reg.IDsWith(func(a *adapters.Adapter) bool { return a.Hooks() != nil })
}
