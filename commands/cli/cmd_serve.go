package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/fleet"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// envFleetSecret holds the fleet's shared secret (else --secret-file).
const envFleetSecret = "LIFELOOP_FLEET_SECRET"

func serveCommand(e *env) *ucli.Command {
	var stateDir, secretFile string
	return &ucli.Command{
		Name:      "serve",
		Usage:     "take fleet commands (abort, pause, resume, renew) for this machine's sessions from RabbitMQ",
		ArgsUsage: "URL",
		Description: "The machine side of fleet commands (docs/fleet.md): a durable queue\n" +
			"lifeloop.commands.<machine> (the machine named by $LIFELOOP_MACHINE, else its host name)\n" +
			"takes the commands callers send with `lifeloop abort|pause|resume|renew --fleet URL --machine\n" +
			"M SESSION` (renew: fresh or --resume, with a --note). A command is done only when it is signed with this machine's fleet secret\n" +
			"($LIFELOOP_FLEET_SECRET or --secret-file): with no secret every command is refused. Each\n" +
			"command id is done once (its answer is kept and given again); every command handled,\n" +
			"refused ones included, is recorded in <state-dir>/fleet/commands/commands.jsonl. The\n" +
			"operation is the local command's, through the session's control socket, with the same\n" +
			"receipts (an abort: RUNNING → ABORTING → ABORTED in the session's HCP stream). It\n" +
			"reconnects with backoff while the broker is away and runs until interrupted.\n\n" +
			"URL: " + amqpURLHelp,
		Flags: []ucli.Flag{
			stateDirFlag(&stateDir),
			&ucli.StringFlag{Name: "secret-file", Usage: "read the fleet secret from `FILE` (else $" + envFleetSecret + ")", Destination: &secretFile},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("serve takes one broker URL (got %d arguments)", c.NArg())
			}
			t, err := parseAMQP("serve", c.Args().First())
			if err != nil {
				return err
			}
			secret, err := fleetSecret(e, secretFile)
			if err != nil {
				return err
			}
			root, err := statedir.Resolve(stateDir, e.Getenv)
			if err != nil {
				return exitf(exitcode.Failed, "%v", err)
			}
			log := slog.New(slog.NewTextHandler(e.Err, nil))
			if len(secret) == 0 {
				log.Warn("serve: no fleet secret: every command will be refused (set " + envFleetSecret + " or --secret-file)")
			}
			ctx, stop := signalContext(c.Context)
			defer stop()
			return fleet.Listen(ctx, fleet.ListenerConfig{
				Target: t, Machine: fleet.MachineName(e.Getenv), Secret: secret,
				Dir: filepath.Join(root, "fleet", "commands"), Logger: log, Now: e.Now,
				Do: func(ctx context.Context, cmd fleet.Command) (string, error) { return fleetDo(ctx, e, root, cmd) },
			})
		},
	}
}

// fleetDo performs an authorized fleet command as the local command
// would: the session's wrapper takes it on its control socket.
func fleetDo(ctx context.Context, e *env, root string, c fleet.Command) (string, error) {
	id, _, _ := strings.Cut(c.Session, ".c") // a continuation's HCP session is its lifeloop session
	if statedir.ValidateSessionID(id) != nil {
		return "", fmt.Errorf("%q is not a session id", c.Session)
	}
	rec, err := statedir.ReadSession(root, id)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no session %s on this machine", id)
	}
	if err != nil {
		return "", err
	}
	if c.Op == "renew" {
		return fleetRenew(ctx, e, root, rec, c)
	}
	op := map[string]string{"abort": control.OpAbort, "pause": control.OpPause, "resume": control.OpResume}[c.Op]
	res, err := controlSession(ctx, root, rec, c.Op, op)
	if err != nil {
		return "", err
	}
	state, _ := res["state"].(string)
	return state, nil
}

// fleetSecret reads the fleet secret from file (trailing newline cut),
// else $LIFELOOP_FLEET_SECRET; none is no secret.
func fleetSecret(e *env, file string) ([]byte, error) {
	if file == "" {
		return []byte(e.Getenv(envFleetSecret)), nil
	}
	path, err := e.abs(file)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErrorf("--secret-file: %v", err)
	}
	return []byte(strings.TrimRight(string(b), "\r\n")), nil
}

// fleetRenew renews the session as `lifeloop renew --note` does, the
// note from the command (never logged), and answers with the renewal's
// state (delivered, or why not).
func fleetRenew(ctx context.Context, e *env, root string, rec statedir.SessionRecord, c fleet.Command) (string, error) {
	o := renewOptions{Resume: c.Resume, Fresh: !c.Resume, Reason: fmt.Sprintf("fleet command %s from %s", c.ID, c.Caller)}
	if c.Note != "" {
		dir, err := os.MkdirTemp(statedir.SessionDir(root, rec.ID), "fleet-note-")
		if err != nil {
			return "", err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		o.Note = filepath.Join(dir, "note.md")
		if err := os.WriteFile(o.Note, []byte(c.Note), statedir.FilePerm); err != nil {
			return "", err
		}
	}
	out, err := renewSession(ctx, e, root, rec, o)
	if err != nil {
		return "", err
	}
	if out.State != renewal.StateDelivered {
		return "", fmt.Errorf("%s", renewOutcomeLine(rec.ID, out))
	}
	return "renewed (" + string(out.State) + ")", nil
}
