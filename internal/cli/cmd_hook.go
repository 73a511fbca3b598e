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
	"slices"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/router"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/launcher"
)

// DefaultHookTimeout bounds one host-hook call: the harness waits for it.
const DefaultHookTimeout = 2 * time.Second

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
	if fail == nil && len(mapped.Moments) == 0 {
		return // a hook that is no lifecycle moment
	}

	if dir := opts.Getenv("LIFELOOP_SESSION_DIR"); dir != "" {
		if fail == nil {
			reply, err := forwardHook(ctx, dir, opts, input)
			if err == nil {
				response = hooks.Response(spec, opts.Hook, reply.AdditionalContext)
				return
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
			if _, err := statedir.ReadSession(root, id); err == nil {
				recordFailure(opts, root, id, mapped, fail)
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
		recordFailure(opts, root, "", mapped, fail)
		return
	}
	recordNative(ctx, opts, root, mapped)
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
	err := launcher.Call(ctx, launcher.ControlSocketIn(dir), launcher.OpHook, args, &reply)
	if err != nil && (ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded)) {
		err = fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
	}
	return reply, err
}

// hookAdapter returns the registry's adapter for id, or generic.
func hookAdapter(reg *adapters.Registry, id string) *adapters.Adapter {
	if a, err := reg.Lookup(id); err == nil && a.Hooks() != nil {
		return a
	}
	a, _ := reg.Lookup(adapters.GenericID)
	return a
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

// recordFailure records a failed receipt for the call in session id under
// root; id "" picks the session of mapped's harness session, else
// native-unattributed-<adapter>. Best effort: errors are dropped, since
// the harness must not be disturbed.
func recordFailure(opts hookOptions, root, id string, mapped hooks.Mapped, fail *hookFailure) {
	a := hookAdapter(opts.Registry, opts.Adapter)
	if a == nil {
		return
	}
	unlock := lockSessions(root)
	defer unlock()
	var rec statedir.SessionRecord
	var exists bool
	switch {
	case id != "":
		var err error
		if rec, err = statedir.ReadSession(root, id); err != nil {
			return // only an existing session is written to
		}
		exists = true
	case mapped.HarnessSessionID != "":
		rec, exists = findHarnessSession(root, a.ID, mapped.HarnessSessionID)
		if !exists {
			id = opts.IDs.New(ids.PrefixSession)
		}
	default:
		id = "native-unattributed-" + a.ID
		var err error
		rec, err = statedir.ReadSession(root, id)
		exists = err == nil
	}
	if !exists {
		now := opts.Now()
		rec = statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: a.ID,
			IntegrationMode: string(contract.ModeNativeHook), Cwd: mapped.Cwd, StartedAt: &now, UpdatedAt: now}
		if mapped.HarnessSessionID != "" {
			rec.HarnessSessionIDs = []string{mapped.HarnessSessionID}
		}
		if err := statedir.WriteSession(root, rec); err != nil {
			return
		}
	}
	ev := contract.EventCapabilityDegraded
	var frame *contract.FrameContext
	if len(mapped.Moments) > 0 {
		ev, frame = mapped.Moments[0].Event, mapped.Moments[0].Frame
	}
	in := router.Input{
		Event: ev, FrameContext: frame, HarnessSessionID: mapped.HarnessSessionID,
		Failure:          &fail.class,
		TelemetrySummary: map[string]any{"hook": opts.Hook, "adapter": opts.Adapter},
		Warnings:         []contract.Warning{{Code: launcher.HookFailedWarning, Message: truncate(fail.msg, 300)}},
	}
	if ev == contract.EventCapabilityDegraded {
		in.Degradations = []contract.CapabilityDegradation{{Capability: "native_hook", PreviousSupport: contract.SupportNative,
			CurrentSupport: contract.SupportUnavailable, ObservedAtEpochS: contract.Ptr(opts.Now().Unix()),
			Evidence: contract.Ptr(truncate(fail.msg, 300)), RetryClass: contract.Ptr(fail.class.DefaultRetry())}}
	}
	route(opts, root, rec, a, []router.Input{in})
}

// recordNative records mapped's moments in the native_hook session of its
// harness session, creating it on first sight.
func recordNative(_ context.Context, opts hookOptions, root string, mapped hooks.Mapped) {
	a := hookAdapter(opts.Registry, opts.Adapter)
	if a == nil {
		return
	}
	unlock := lockSessions(root)
	defer unlock()
	now := opts.Now()
	rec, exists := findHarnessSession(root, a.ID, mapped.HarnessSessionID)
	if !exists {
		rec = statedir.SessionRecord{ID: opts.IDs.New(ids.PrefixSession), State: statedir.StateRunning, AdapterID: a.ID,
			IntegrationMode: string(contract.ModeNativeHook), Cwd: mapped.Cwd,
			HarnessSessionIDs: []string{mapped.HarnessSessionID}, StartedAt: &now}
	}
	for _, m := range mapped.Moments {
		switch m.Event {
		case contract.EventSessionStarted:
			rec.State, rec.EndedAt = statedir.StateRunning, nil
		case contract.EventSessionEnding:
			// No later hook reports the end: SessionEnd closes the
			// native session.
			rec.State, rec.EndedAt = statedir.StateCompleted, &now
		}
	}
	rec.UpdatedAt = now
	if err := statedir.WriteSession(root, rec); err != nil {
		return
	}
	// One coherent stream, as a wrapper keeps it: a moment the ledger
	// already tells (another hook reported it) is dropped.
	coh := launcher.NewCoherent(a.Manifest(), contract.ModeNativeHook, ledgerReceipts(root, rec.ID))
	var ins []router.Input
	for _, m := range mapped.Moments {
		for _, mm := range coh.Admit(launcher.Moment{Event: m.Event, EventID: m.EventID, Frame: m.Frame,
			HarnessSessionID: mapped.HarnessSessionID, Summary: m.Summary}) {
			ins = append(ins, launcher.InputOf(mm))
		}
	}
	route(opts, root, rec, a, ins)
}

// route records ins in the ledger of rec.
func route(opts hookOptions, root string, rec statedir.SessionRecord, a *adapters.Adapter, ins []router.Input) {
	p, err := pipeline.Open(pipeline.Options{
		StateDir: root, Session: rec.ID, Adapter: a, Mode: contract.ModeNativeHook, Now: opts.Now, IDs: opts.IDs,
	})
	if err != nil {
		return
	}
	defer p.Close()
	for _, in := range ins {
		// Recording must finish even when the call's bound has passed:
		// the moment happened.
		_, _ = p.Route(context.Background(), in)
	}
}

// ledgerReceipts reads session id's receipts (none when it has no ledger
// yet).
func ledgerReceipts(root, id string) []contract.LifecycleReceipt {
	var out []contract.LifecycleReceipt
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err == nil {
			out = append(out, e.Receipt)
		}
	}
	return out
}

// findHarnessSession returns the newest session of adapterID whose harness
// session ids contain hsid.
func findHarnessSession(root, adapterID, hsid string) (statedir.SessionRecord, bool) {
	recs, err := statedir.ListSessions(root)
	if err != nil {
		return statedir.SessionRecord{}, false
	}
	for _, r := range recs {
		if r.AdapterID == adapterID && slices.Contains(r.HarnessSessionIDs, hsid) {
			return r, true
		}
	}
	return statedir.SessionRecord{}, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// nativeLockFile serialises find-or-create of native_hook sessions between
// concurrent host-hook processes (a hook program may run detached and race
// the next hook).
const nativeLockFile = ".native-hook.lock"

// lockSessions takes an exclusive flock on <root>/sessions/.native-hook.lock
// and returns its release; on any error it returns a no-op release and the
// caller proceeds unserialised.
func lockSessions(root string) func() {
	dir := statedir.SessionsDir(root)
	if err := statedir.Ensure(dir); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, nativeLockFile), os.O_CREATE|os.O_RDWR, statedir.FilePerm)
	if err != nil {
		return func() {}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return func() {}
	}
	return func() { _ = f.Close() }
}
