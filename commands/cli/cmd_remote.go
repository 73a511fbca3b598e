package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/oklog/ulid/v2"
	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/fleet"
)

// remoteOptions send abort, pause or resume to another machine's
// `lifeloop serve`.
type remoteOptions struct {
	URL, Machine, SecretFile string
	Wait                     time.Duration
}

func (r *remoteOptions) flags() []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "fleet", Usage: "send the command over the broker at `URL` (amqp://...) to --machine", Destination: &r.URL},
		&ucli.StringFlag{Name: "machine", Usage: "the `MACHINE` the session runs on (its LIFELOOP_MACHINE or host name)", Destination: &r.Machine},
		&ucli.StringFlag{Name: "secret-file", Usage: "with --fleet, the fleet secret's `FILE` (else $" + envFleetSecret + ")", Destination: &r.SecretFile},
		&ucli.DurationFlag{Name: "wait", Usage: "with --fleet, wait this long for the machine's answer (default 10s, renew 3m; the command expires unexecuted if no listener takes it by then)", Destination: &r.Wait},
	}
}

// remoteRenew sends a renewal with its note to the session's machine.
func remoteRenew(ctx context.Context, e *env, r remoteOptions, o renewOptions) error {
	if len(o.Payloads) > 0 || o.DropUndelivered || o.Reason != "" {
		return usageErrorf("a fleet renew takes --note and --fresh or --resume only")
	}
	var note []byte
	if o.Note != "" {
		var err error
		if o.Note == "-" {
			note, err = io.ReadAll(io.LimitReader(e.In, fleet.MaxNote+1))
		} else {
			note, err = os.ReadFile(o.Note)
		}
		if err != nil {
			return exitf(exitcode.Unreadable, "note %s: %v", o.Note, err)
		}
		if len(note) > fleet.MaxNote {
			return usageErrorf("a fleet renew's note is %d bytes at most", fleet.MaxNote)
		}
	}
	return sendRemote(ctx, e, r, o.controlOptions, fleet.Command{Op: "renew", Note: string(note), Resume: o.Resume})
}

// remoteControl sends the command to the session's machine and prints its
// answer; refused or failed is exit 1, no answer exit 1 with why.
func remoteControl(ctx context.Context, e *env, r remoteOptions, name string, o controlOptions) error {
	return sendRemote(ctx, e, r, o, fleet.Command{Op: name})
}

// sendRemote completes cmd (id, machine, session, caller), sends it and
// prints the answer.
func sendRemote(ctx context.Context, e *env, r remoteOptions, o controlOptions, cmd fleet.Command) error {
	name := cmd.Op
	switch {
	case r.URL == "" || r.Machine == "":
		return usageErrorf("a fleet command needs both --fleet URL and --machine MACHINE")
	case o.Latest || o.Session == "":
		return usageErrorf("a fleet command names its SESSION (--latest is this machine's)")
	case r.Wait < 0:
		return usageErrorf("--wait must be positive")
	case r.Wait == 0 && cmd.Op == "renew":
		r.Wait = renewTimeout
	case r.Wait == 0:
		r.Wait = 10 * time.Second
	}
	t, err := parseAMQP("--fleet", r.URL)
	if err != nil {
		return err
	}
	secret, err := fleetSecret(e, r.SecretFile)
	if err != nil {
		return err
	}
	cmd.ID, cmd.Machine, cmd.Session = "cmd_"+ulid.Make().String(), r.Machine, o.Session
	cmd.Caller, cmd.IssuedAt = fleet.MachineName(e.Getenv), e.Now().UTC()
	res, err := fleet.Send(ctx, t, cmd, secret, r.Wait)
	if err != nil {
		return exitf(exitcode.Failed, "%s %s on %s: %v", name, o.Session, r.Machine, err)
	}
	switch res.Status {
	case fleet.ResultDone:
		fmt.Fprintf(e.Out, "%s: %s (machine %s, command %s)\n", o.Session, res.State, r.Machine, res.CommandID)
		return nil
	default:
		return exitf(exitcode.Failed, "%s %s on %s %s: %s", name, o.Session, r.Machine, res.Status, res.Message)
	}
}
