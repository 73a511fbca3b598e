package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/router"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// emitOptions are the inputs of `lifeloop emit`.
type emitOptions struct {
	Event          string
	Session        string
	AdapterID      string
	Payloads       []string
	IdempotencyKey string
	FrameID        string
	ParentFrameID  string
	StateDir       string

	In       io.Reader
	Out      io.Writer
	Getenv   func(string) string
	Now      func() time.Time
	Cwd      string
	IDs      ids.Source
	Registry *adapters.Registry
}

func emitCommand(e *env) *ucli.Command {
	var opts emitOptions
	var payloads listValue
	return &ucli.Command{
		Name:      "emit",
		Usage:     "record a lifecycle moment reported by a skill or an operator (manual_skill)",
		ArgsUsage: "EVENT",
		Description: "Records EVENT (e.g. frame.opening, context.compacted, session.ended; see\n" +
			"`lifeloop events`) in the session's receipt ledger and prints the receipt as JSON.\n" +
			"The session is created when it does not exist yet. When a live `lifeloop run` owns\n" +
			"the session, the moment is handed to it over its control socket, so it is ordered\n" +
			"with the wrapper's own receipts and reaches its clients and event sinks. The wrapper\n" +
			"owns its session's lifecycle: it refuses session.* and supervisor.tick (end the session\n" +
			"with `lifeloop abort S`, restart its harness with `lifeloop renew S`) and accepts\n" +
			"frame.*, context.* and receipt.gap_detected.\n\n" +
			"A refused emit records nothing: no receipt, no session, no change of state. Refused\n" +
			"are: an idempotency key already used for another moment (the same moment under the\n" +
			"same key again is a retry and returns the original receipt); a payload that is invalid\n" +
			"or needs a placement the adapter cannot provide; any moment after the session's end (a\n" +
			"session ends once); in a live run, the wrapper's own moments.\n\n" +
			"Exit status: 0 recorded (or a retry answered); 1 refused, or a ledger error; 2 usage\n" +
			"(frame.* without --frame-id, capability.degraded, which names a degradation no flag\n" +
			"gives); 3 a --payload file is unreadable or not JSON.",
		OnUsageError: commandUsageError,
		Flags:        emitFlags(&opts, &payloads),
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("emit needs an EVENT (see `lifeloop events`)")
			}
			// urfave/cli stops at the first argument; flags after EVENT
			// (`emit EVENT --session S`) are parsed here.
			if c.NArg() > 1 {
				var late emitOptions
				var latePayloads listValue
				fs := flag.NewFlagSet("emit", flag.ContinueOnError)
				fs.SetOutput(io.Discard)
				for _, f := range emitFlags(&late, &latePayloads) {
					if err := f.Apply(fs); err != nil {
						return exitf(exitcode.Failed, "%v", err)
					}
				}
				if err := fs.Parse(c.Args().Tail()); err != nil {
					if errors.Is(err, flag.ErrHelp) {
						return ucli.ShowCommandHelp(c, "emit")
					}
					return usageErrorf("%v (see --help)", err)
				}
				if fs.NArg() > 0 {
					return usageErrorf("emit takes one EVENT, got extra argument %q", fs.Arg(0))
				}
				opts.merge(late)
				payloads.items = append(payloads.items, latePayloads.items...)
			}
			if opts.Session == "" {
				return usageErrorf("emit needs --session ID")
			}
			if opts.ParentFrameID != "" && opts.FrameID == "" {
				return usageErrorf("--parent-frame-id needs --frame-id")
			}
			opts.Event = c.Args().First()
			opts.Payloads = payloads.items
			opts.In, opts.Out, opts.Getenv, opts.Now = e.In, e.Out, e.Getenv, e.Now
			opts.Cwd, opts.IDs = e.Dir, e.IDs
			opts.Registry = e.Registry()
			return emitRun(c.Context, opts)
		},
	}
}

// emitFlags binds emit's flags to o and payloads.
func emitFlags(o *emitOptions, payloads *listValue) []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "session", Usage: "lifeloop session `ID` (letters, digits, _ and -); created when missing", Destination: &o.Session},
		&ucli.StringFlag{Name: "adapter", Usage: "adapter `ID` of a new session (default generic; an existing session keeps its own)", Destination: &o.AdapterID},
		&ucli.GenericFlag{Name: "payload", Usage: "payload envelope JSON `FILE` (or - for standard input) delivered with the moment (repeat for more)", Value: payloads},
		&ucli.StringFlag{Name: "idempotency-key", Usage: "replay boundary `K`: emitting the same moment again with K returns the original receipt", Destination: &o.IdempotencyKey},
		&ucli.StringFlag{Name: "frame-id", Usage: "frame `F` the moment belongs to (required for frame.* events)", Destination: &o.FrameID},
		&ucli.StringFlag{Name: "parent-frame-id", Usage: "parent frame `P` of a nested (subcall) frame; needs --frame-id", Destination: &o.ParentFrameID},
		stateDirFlag(&o.StateDir),
	}
}

// merge copies the flags set in late (given after EVENT) over o.
func (o *emitOptions) merge(late emitOptions) {
	for _, f := range []struct{ dst, src *string }{
		{&o.Session, &late.Session}, {&o.AdapterID, &late.AdapterID}, {&o.IdempotencyKey, &late.IdempotencyKey},
		{&o.FrameID, &late.FrameID}, {&o.ParentFrameID, &late.ParentFrameID}, {&o.StateDir, &late.StateDir},
	} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
}

// emitRun records one manual moment and prints its receipt.
func emitRun(ctx context.Context, opts emitOptions) error {
	ev := contract.Event(opts.Event)
	if !ev.Valid() || ev == contract.EventReceiptEmitted {
		return usageErrorf("unknown or non-emittable event %q; see `lifeloop events`", opts.Event)
	}
	if err := statedir.ValidateSessionID(opts.Session); err != nil {
		return usageErrorf("--session: %v", err)
	}
	if err := emitFlagsFor(ev, opts); err != nil {
		return err
	}
	payloads, err := readPayloads(opts.Payloads, opts.In)
	if err != nil {
		return err
	}
	root, err := statedir.Resolve(opts.StateDir, opts.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	rec, err := statedir.ReadSession(root, opts.Session)
	exists := err == nil
	if !exists && !errors.Is(err, statedir.ErrSessionNotFound) {
		return exitf(exitcode.Failed, "reading session %s: %v", opts.Session, err)
	}

	adapterID, err := emitAdapterID(opts, rec, exists)
	if err != nil {
		return err
	}

	in := moment.Moment{Event: ev, Payloads: payloads}
	if opts.IdempotencyKey != "" {
		k := opts.IdempotencyKey
		in.IdempotencyKey = &k
	}
	if opts.FrameID != "" {
		fc := contract.FrameContext{FrameID: opts.FrameID, FrameClass: contract.FrameTopLevel}
		if opts.ParentFrameID != "" {
			p := opts.ParentFrameID
			fc.ParentFrameID, fc.FrameClass = &p, contract.FrameSubcall
		}
		in.Frame = &fc
	}

	// A live wrapper owns the session: hand it the moment so it orders it
	// with its own receipts and dispatches it to its clients and sinks,
	// and checks its key. Its session.json may not be written yet (the
	// wrapper writes it once the harness runs, and the harness may emit
	// at once): without one, the control socket decides.
	if (exists && !rec.State.IsTerminal()) || (!exists && statedir.ValidateSessionID(opts.Session) == nil) {
		r, err := emitLive(ctx, root, opts.Session, in)
		switch {
		case err == nil:
			if werr := writeIndentedJSON(opts.Out, r); werr != nil {
				return exitf(exitcode.Failed, "writing the receipt: %v", werr)
			}
			return receiptExit(r)
		case !errors.Is(err, control.ErrNotLive):
			return exitf(exitcode.Failed, "emit through the live wrapper of %s: %v", opts.Session, err)
		}
		// No live wrapper: record directly below.
	}
	// From the key's check to the append this emit holds the session's
	// emit lock: a racing emit under the same key waits, then sees this
	// one's receipt. The session is read again under the lock (the racer
	// may have made it).
	unlock, err := lockEmit(root, opts.Session)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	defer unlock()
	rec, err = statedir.ReadSession(root, opts.Session)
	exists = err == nil
	if !exists && !errors.Is(err, statedir.ErrSessionNotFound) {
		return exitf(exitcode.Failed, "reading session %s: %v", opts.Session, err)
	}
	if adapterID, err = emitAdapterID(opts, rec, exists); err != nil {
		return err
	}
	// A retry with the key of a recorded moment gets its receipt back; a
	// key used for another moment, or any new moment after the session's
	// end, is refused before anything is recorded.
	r, ok, err := ledger.CheckKey(statedir.ReceiptsPath(root, opts.Session), router.DefaultClientID, adapterID, opts.IdempotencyKey, ev, payloads)
	var conflict *ledger.KeyConflictError
	switch {
	case errors.As(err, &conflict):
		return exitf(exitcode.Failed, "%v", err)
	case err != nil:
		return exitf(exitcode.Failed, "reading the ledger of session %s: %v", opts.Session, err)
	case ok:
		if werr := writeIndentedJSON(opts.Out, r); werr != nil {
			return exitf(exitcode.Failed, "writing the receipt: %v", werr)
		}
		return receiptExit(r)
	case exists && rec.State.IsTerminal():
		return exitf(exitcode.Failed, "session %s has ended (%s); nothing is recorded after a session's end, so %s was not: emit it into a new --session",
			opts.Session, rec.State, ev)
	}

	a, err := lookupAdapter(opts.Registry, adapterID)
	if err != nil {
		return err
	}
	if err := placementRefusal(a.Manifest(), ev, payloads, opts.Now()); err != nil {
		return err
	}
	if !exists {
		now := opts.Now()
		rec = statedir.SessionRecord{
			Schema: statedir.SessionSchemaV1, ID: opts.Session, State: statedir.StateRunning, AdapterID: a.ID,
			IntegrationMode: string(contract.ModeManualSkill), Cwd: opts.Cwd, StartedAt: &now, UpdatedAt: now,
		}
		if _, err := statedir.CreateSessionDir(root, opts.Session); err != nil {
			return exitf(exitcode.Failed, "creating session %s: %v", opts.Session, err)
		}
		if err := statedir.WriteSession(root, rec); err != nil {
			return exitf(exitcode.Failed, "creating session %s: %v", opts.Session, err)
		}
	}
	p, err := pipeline.Open(pipeline.Options{
		StateDir: root, Session: opts.Session, Adapter: a, Mode: contract.ModeManualSkill, Now: opts.Now, IDs: opts.IDs,
		Durability: envDurability(opts.Getenv),
	})
	var lerr *pipeline.LedgerError
	switch {
	case errors.As(err, &lerr):
		return exitf(exitcode.Failed, "opening the ledger of session %s: %v", opts.Session, lerr.Err)
	case err != nil:
		return exitf(exitcode.Failed, "%v", err)
	}
	defer p.Close()
	// A session this call created and could not record in is removed:
	// a refused emit leaves no session behind.
	discard := func() {
		p.Close()
		if !exists {
			removeEmptySession(root, opts.Session)
		}
	}
	res, err := p.Route(ctx, in)
	if err != nil {
		discard()
		return exitf(exitcode.Failed, "%v", err)
	}
	if res.Receipt.Status == contract.StatusFailed && !exists {
		// A session whose first moment was refused is no session: none
		// is left running in `sessions`.
		p.Close()
		_ = os.RemoveAll(statedir.SessionDir(root, opts.Session))
		_ = writeIndentedJSON(opts.Out, res.Receipt)
		return receiptExit(res.Receipt)
	}
	p.Close() // the ledger's last attempt, when its storage refused the write
	if n, cause := p.Unrecorded(); n > 0 {
		discard()
		return exitf(exitcode.Failed, "session %s: the receipt could not be recorded in its ledger (%s); free space and emit it again",
			opts.Session, ledger.CauseText(cause))
	}
	if ev == contract.EventSessionEnded && res.Receipt.Status != contract.StatusFailed && !res.Replayed {
		now := opts.Now()
		rec.State, rec.EndedAt, rec.UpdatedAt = statedir.StateCompleted, &now, now
		if err := statedir.WriteSession(root, rec); err != nil {
			return exitf(exitcode.Failed, "recording the end of session %s: %v", opts.Session, err)
		}
	}
	if err := writeIndentedJSON(opts.Out, res.Receipt); err != nil {
		return exitf(exitcode.Failed, "writing the receipt: %v", err)
	}
	return receiptExit(res.Receipt)
}

// readPayloads reads and decodes the --payload files (- is in).
func readPayloads(names []string, in io.Reader) ([]contract.PayloadEnvelope, error) {
	var payloads []contract.PayloadEnvelope
	for _, name := range names {
		data, err := readInput(name, in)
		if err != nil {
			return nil, err
		}
		if why := notJSON(data); why != "" {
			return nil, exitf(exitcode.Unreadable, "--payload %s %s; give a payload envelope file", name, why)
		}
		p, err := contract.DecodePayloadEnvelope(data)
		if err != nil {
			return nil, exitf(exitcode.Failed, "--payload %s is not a valid payload envelope (invalid_request): %v", name, err)
		}
		payloads = append(payloads, p)
	}
	return payloads, nil
}

// emitAdapterID is the adapter of the emitted moment: an existing
// session's own (--adapter naming another is a usage error), else
// --adapter, else generic.
func emitAdapterID(opts emitOptions, rec statedir.SessionRecord, exists bool) (string, error) {
	switch {
	case exists && rec.AdapterID != "":
		if opts.AdapterID != "" && opts.AdapterID != rec.AdapterID {
			return "", usageErrorf("session %s belongs to adapter %q, not %q", opts.Session, rec.AdapterID, opts.AdapterID)
		}
		return rec.AdapterID, nil
	case opts.AdapterID == "":
		return adapters.GenericID, nil
	}
	return opts.AdapterID, nil
}

// emitLive hands the moment to the session's live wrapper over its control
// socket; control.ErrNotLive means nothing listens there.
func emitLive(ctx context.Context, root, id string, in moment.Moment) (contract.LifecycleReceipt, error) {
	args := control.EmitArgs{Event: in.Event, Payloads: in.Payloads}
	if in.IdempotencyKey != nil {
		args.IdempotencyKey = *in.IdempotencyKey
	}
	if in.Frame != nil {
		args.FrameID = in.Frame.FrameID
		if in.Frame.ParentFrameID != nil {
			args.ParentFrameID = *in.Frame.ParentFrameID
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var r contract.LifecycleReceipt
	err := control.Call(cctx, control.SocketFor(root, id), control.OpEmit, args, &r)
	return r, err
}

// removeEmptySession removes session id's folder when its ledger holds
// nothing: emit created it for a receipt it could not record.
func removeEmptySession(root, id string) {
	if fi, err := os.Stat(statedir.ReceiptsPath(root, id)); err == nil && fi.Size() > 0 {
		return
	}
	_ = os.RemoveAll(statedir.SessionDir(root, id))
}

// emitFlagsFor checks that the flags ev needs were given: a usage error
// (exit 2, nothing recorded) otherwise.
func emitFlagsFor(ev contract.Event, opts emitOptions) error {
	switch {
	case ev.IsFrame() && opts.FrameID == "":
		return usageErrorf("%s needs --frame-id F (the frame the moment belongs to)", ev)
	case ev == contract.EventCapabilityDegraded:
		return usageErrorf("capability.degraded cannot be emitted: it must name a capability degradation, which emit has no flag for (lifeloop records the degradations it observes)")
	}
	return nil
}

// placementRefusal says why a payload of ev cannot be placed for an
// adapter with manifest m (an invalid or expired envelope, a required
// placement the adapter cannot provide), or nil: such an emit is refused
// before anything is recorded.
func placementRefusal(m contract.AdapterManifest, ev contract.Event, payloads []contract.PayloadEnvelope, now time.Time) error {
	site := contract.HookSite(ev)
	for _, p := range payloads {
		if err := p.Check(now); err != nil {
			return exitf(exitcode.Failed, "payload %s is refused (invalid_request): %v; nothing was recorded", p.PayloadID, err)
		}
		if d := site.Resolve(m, p); d.Outcome == contract.PlacementOutcomeFailed {
			fc := contract.FailurePlacementUnavailable
			if d.FailureClass != nil {
				fc = *d.FailureClass
			}
			return exitf(exitcode.Failed, "payload %s cannot be placed with %s for adapter %s (%s): %s; nothing was recorded",
				p.PayloadID, ev, m.AdapterID, fc, d.Reason)
		}
	}
	return nil
}
