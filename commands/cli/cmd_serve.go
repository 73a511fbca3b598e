package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
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
			"A wrapped session publishing to a broker (`lifeloop run --events amqp://…`) runs the same\n" +
			"listener while no other process does ($" + envFleetListen + "=off turns it off): one\n" +
			"listener per state folder (the lock <state-dir>/fleet/commands/listener.lock); serve\n" +
			"waits while a session holds it and takes over when it ends.\n\n" +
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
			return fleet.ListenWhenFree(ctx, fleet.ListenerConfig{
				Target: t, Machine: fleet.MachineName(e.Getenv), Secret: secret,
				Dir: filepath.Join(root, "fleet", "commands"), Logger: log, Now: e.Now, Heartbeats: t,
				Do: func(ctx context.Context, cmd fleet.Command) (string, error) { return fleetDo(ctx, e, root, cmd) },
			}, fleetListenPoll)
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

// envFleetListen turns off the listener a wrapped session starts
// ("0", "off", "false", "no").
const envFleetListen = "LIFELOOP_FLEET_LISTEN"

// sessionListener takes this machine's fleet commands beside a wrapped
// session that publishes to a broker, while no other process of the
// state folder does (fleet.ListenWhenFree: the listener lock), so a
// machine whose sessions run with --events amqp://… needs no `lifeloop
// serve`. It lives as long as its session; when that ends, another
// running session (or `serve`) takes the lock within fleetListenPoll.
type sessionListener struct {
	e      *env
	t      amqpsink.Target
	root   string
	mu     sync.Mutex
	logF   *os.File
	cancel context.CancelFunc
	done   chan struct{}
}

// fleetListenPoll is how often a session waiting for the listener lock
// tries it again.
const fleetListenPoll = 2 * time.Second

// newSessionListener returns nil (nothing to do) without a broker
// target or with $LIFELOOP_FLEET_LISTEN off; the first target's broker
// takes the commands.
func newSessionListener(e *env, targets []amqpsink.Target, root string) *sessionListener {
	switch strings.ToLower(e.Getenv(envFleetListen)) {
	case "0", "off", "false", "no":
		return nil
	}
	if len(targets) == 0 {
		return nil
	}
	return &sessionListener{e: e, t: targets[0], root: root}
}

func (l *sessionListener) hook() func(id, dir string) {
	if l == nil {
		return nil
	}
	return l.onSession
}

// onSession starts the listener once the session exists, logging to
// the session's log (never the harness's terminal).
func (l *sessionListener) onSession(id, _ string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done != nil {
		return
	}
	var log *slog.Logger
	l.logF, log = openSessionLog(l.root, id)
	secret := []byte(l.e.Getenv(envFleetSecret))
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		err := fleet.ListenWhenFree(ctx, fleet.ListenerConfig{
			Target: l.t, Machine: fleet.MachineName(l.e.Getenv), Secret: secret,
			Dir: filepath.Join(l.root, "fleet", "commands"), Logger: log, Now: l.e.Now, Heartbeats: l.t,
			Do: func(ctx context.Context, cmd fleet.Command) (string, error) { return fleetDo(ctx, l.e, l.root, cmd) },
		}, fleetListenPoll)
		if err != nil {
			log.Warn("fleet listener: not started", "err", err)
		}
	}()
}

// finish stops the listener and lets go of its lock; a command being
// done is left unacknowledged for the next listener. Bounded: the
// listener's operations are bounded by their own timeouts.
func (l *sessionListener) finish() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cancel != nil {
		l.cancel()
		<-l.done
	}
	if l.logF != nil {
		_ = l.logF.Close()
	}
}

// withoutFleetSecret keeps the fleet secret from the harness's
// environment.
func withoutFleetSecret(environ []string) []string {
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, envFleetSecret+"=")
	})
}
