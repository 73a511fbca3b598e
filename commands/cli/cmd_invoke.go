package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/callback"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/router"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// invokeOptions are the inputs of `lifeloop event invoke`.
type invokeOptions struct {
	Client     string
	ClientArgs []string
	Timeout    time.Duration
	Session    string
	AdapterID  string
	ClientID   string
	StateDir   string

	In       io.Reader
	Out      io.Writer
	Err      io.Writer
	Getenv   func(string) string
	Environ  []string
	Now      func() time.Time
	IDs      ids.Source
	Registry *adapters.Registry
}

// eventCommand is `lifeloop event`, the transport-boundary commands.
func eventCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:        "event",
		Usage:       "transport-boundary operations on single lifecycle events",
		Subcommands: []*ucli.Command{invokeCommand(e)},
	}
}

func invokeCommand(e *env) *ucli.Command {
	var opts invokeOptions
	var clientArgs listValue
	return &ucli.Command{
		Name:  "invoke",
		Usage: "dispatch one lifecycle event to a client command and print the receipt",
		Description: "Reads a dispatch envelope (JSON: schema_version, request — a CallbackRequest — and\n" +
			"optional payloads) on standard input, runs it through lifeloop's pipeline (validation,\n" +
			"adapter manifest, payload placement) and hands it to the --client command: a fresh\n" +
			"process that reads the envelope on its stdin and prints one CallbackResponse JSON on\n" +
			"its stdout. Prints the resulting lifecycle receipt as JSON.\n\n" +
			"The client gets LIFELOOP_SESSION_ID, LIFELOOP_SESSION_DIR and LIFELOOP_STATE_DIR\n" +
			"when --session is given; the receipt is then also appended to that session's ledger\n" +
			"and carries its sequence. A client that fails, hangs past --timeout (its process\n" +
			"group is killed), floods stdout or answers malformed JSON yields a failed receipt\n" +
			"with a failure class, a retry class and a warning saying what happened.\n\n" +
			"Exit status: 0 receipt observed, delivered, skipped or degraded; 1 failed receipt\n" +
			"(or an unknown adapter or session); 2 usage; 3 standard input unreadable or not JSON.",
		ArgsUsage:    " ",
		OnUsageError: commandUsageError,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "client", Usage: "client `CMD` to run (a program path or a name on $PATH; no shell)", Destination: &opts.Client},
			&ucli.GenericFlag{Name: "client-arg", Usage: "one argument `A` for the client, passed as is (repeat for more)", Value: &clientArgs},
			&ucli.DurationFlag{Name: "timeout", Value: callback.DefaultTimeout, Usage: "how long the client may take (`DUR`, e.g. 5s) before its process group is killed", Destination: &opts.Timeout},
			&ucli.StringFlag{Name: "session", Usage: "lifeloop session `ID`: record the receipt in its ledger and tell the client", Destination: &opts.Session},
			&ucli.StringFlag{Name: "adapter", Usage: "adapter `ID` whose manifest applies (default: the request's adapter_id)", Destination: &opts.AdapterID},
			&ucli.StringFlag{Name: "client-id", Value: router.DefaultClientID, Usage: "client_id `LABEL` written on the receipt", Destination: &opts.ClientID},
			stateDirFlag(&opts.StateDir),
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("event invoke takes no arguments, got %q (see --help)", c.Args().First())
			}
			if opts.Client == "" {
				return usageErrorf("event invoke needs --client CMD")
			}
			if opts.Timeout <= 0 {
				return usageErrorf("--timeout must be positive, got %s", opts.Timeout)
			}
			opts.ClientArgs = clientArgs.items
			opts.In, opts.Out, opts.Err, opts.Getenv, opts.Now = e.In, e.Out, e.Err, e.Getenv, e.Now
			opts.Environ, opts.IDs = e.Environ, e.IDs
			opts.Registry = e.Registry()
			return invokeRun(c.Context, opts)
		},
	}
}

// invokeRun decodes the envelope, routes it through one synchronous client
// and prints the receipt.
func invokeRun(ctx context.Context, opts invokeOptions) error {
	data, err := io.ReadAll(opts.In)
	if err != nil {
		return exitf(exitcode.Unreadable, "cannot read the dispatch envelope on standard input: %v", err)
	}
	if why := notJSON(data); why != "" {
		return exitf(exitcode.Unreadable, "standard input "+why+"; send one dispatch envelope ({\"schema_version\": %q, \"request\": {...}})", contract.Version)
	}
	env, err := contract.DecodeDispatchEnvelope(data)
	if err != nil {
		return exitf(exitcode.Failed, "invalid dispatch envelope (invalid_request): %v", err)
	}
	req := env.Request
	var a *adapters.Adapter
	if opts.AdapterID != "" {
		// A wrong flag is a usage error...
		if a, err = lookupAdapter(opts.Registry, opts.AdapterID); err != nil {
			return err
		}
	} else if a, err = opts.Registry.Lookup(req.AdapterID); err != nil {
		// ...an adapter the request names but lifeloop lacks is a refusal.
		return exitf(exitcode.Failed, "adapter %q is not known (adapter_unavailable): %v; see `lifeloop adapters`", req.AdapterID, err)
	}

	po := pipeline.Options{
		Adapter: a, Mode: req.IntegrationMode, ClientID: opts.ClientID, InvocationID: req.InvocationID,
		Clients: []pipeline.ClientSpec{{Path: opts.Client, Args: opts.ClientArgs}}, SyncClients: true,
		ClientTimeout: opts.Timeout, ClientEnv: opts.Environ, ClientStderr: opts.Err,
		Now: opts.Now, IDs: opts.IDs,
	}
	if opts.Session != "" {
		if po.StateDir, err = existingSession(opts.StateDir, opts.Getenv, opts.Session); err != nil {
			return err
		}
		po.Session = opts.Session
	}
	p, err := pipeline.Open(po)
	var lerr *pipeline.LedgerError
	switch {
	case errors.As(err, &lerr):
		return exitf(exitcode.Failed, "opening the ledger of session %s: %v", opts.Session, lerr.Err)
	case err != nil:
		return exitf(exitcode.Failed, "%v", err)
	}
	defer p.Close()

	in := moment.Moment{
		Event:            req.Event,
		EventID:          req.EventID,
		Frame:            req.FrameContext,
		Payloads:         env.Payloads,
		IdempotencyKey:   req.IdempotencyKey,
		ExternalSequence: req.Sequence,
		Metadata:         req.Metadata,
	}
	if req.HarnessSessionID != nil {
		in.HarnessSessionID = *req.HarnessSessionID
	}
	if req.HarnessRunID != nil {
		in.HarnessRunID = *req.HarnessRunID
	}
	if req.HarnessTaskID != nil {
		in.HarnessTaskID = *req.HarnessTaskID
	}
	res, err := p.Route(ctx, in)
	if err != nil && res.Receipt.ReceiptID == "" {
		return exitf(exitcode.Failed, "%v", err)
	}
	if werr := writeIndentedJSON(opts.Out, res.Receipt); werr != nil {
		return exitf(exitcode.Failed, "writing the receipt: %v", werr)
	}
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	return receiptExit(res.Receipt)
}

// receiptExit maps a printed receipt to the exit status: 1 with a one-line
// reason for a failed receipt, else 0.
func receiptExit(r contract.LifecycleReceipt) error {
	if r.Status != contract.StatusFailed {
		return nil
	}
	why := ""
	if len(r.Warnings) > 0 {
		why = ": " + r.Warnings[0].Message
	}
	fc := "failed"
	if r.FailureClass != nil {
		fc = string(*r.FailureClass)
	}
	return exitf(exitcode.Failed, "%s receipt failed (%s)%s", r.Event, fc, why)
}

// existingSession resolves the state folder and checks that session id
// exists there.
func existingSession(stateFlag string, getenv func(string) string, id string) (string, error) {
	root, err := statedir.Resolve(stateFlag, getenv)
	if err != nil {
		return "", exitf(exitcode.Failed, "%v", err)
	}
	if err := statedir.ValidateSessionID(id); err != nil {
		return "", usageErrorf("--session: %v", err)
	}
	if _, err := os.Stat(statedir.SessionDir(root, id)); err != nil {
		return "", exitf(exitcode.Failed, "unknown session %q in %s; see `lifeloop sessions` (or record one with `lifeloop emit`)", id, root)
	}
	return root, nil
}
