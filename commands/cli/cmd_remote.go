package cli

import (
	"context"
	"fmt"
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
		&ucli.DurationFlag{Name: "wait", Usage: "with --fleet, wait this long for the machine's answer (the command expires unexecuted after it)", Value: 10 * time.Second, Destination: &r.Wait},
	}
}

// remoteControl sends the command to the session's machine and prints its
// answer; refused or failed is exit 1, no answer exit 1 with why.
func remoteControl(ctx context.Context, e *env, r remoteOptions, name string, o controlOptions) error {
	switch {
	case r.URL == "" || r.Machine == "":
		return usageErrorf("a fleet command needs both --fleet URL and --machine MACHINE")
	case o.Latest || o.Session == "":
		return usageErrorf("a fleet command names its SESSION (--latest is this machine's)")
	case r.Wait <= 0:
		return usageErrorf("--wait must be positive")
	}
	t, err := parseAMQP("--fleet", r.URL)
	if err != nil {
		return err
	}
	secret, err := fleetSecret(e, r.SecretFile)
	if err != nil {
		return err
	}
	now := e.Now()
	cmd := fleet.Command{ID: "cmd_" + ulid.Make().String(), Machine: r.Machine, Session: o.Session, Op: name,
		Caller: fleet.MachineName(e.Getenv), IssuedAt: now.UTC()}
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
