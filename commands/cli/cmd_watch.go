package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/observe"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/watch"
)

// watchOptions are the flags of `lifeloop watch`.
type watchOptions struct {
	StateDir      string
	Adapter       string
	Path          string
	Latest        bool
	Cwd           string
	Clients       []string
	ClientEvents  []string
	ClientTimeout time.Duration
	Events        []string
	Format        string
	OrgLoopHook   string
	OrgLoopWait   time.Duration
	UntilIdle     time.Duration
	NotFoundAfter time.Duration
	Levels        string
	Durability    string
	OTLP          string
}

func watchCommand(e *env) *ucli.Command {
	var o watchOptions
	var clients, events listValue
	return &ucli.Command{
		Name:      "watch",
		Usage:     "record the lifecycle of a harness lifeloop did not launch, from its transcript (telemetry_only)",
		ArgsUsage: "[FILE]",
		Description: `Follows the session file (its transcript) of a harness
started without lifeloop and records the same receipts 'lifeloop run' does
from telemetry — the harness session binding, frame.opening/opened/ending/
ended per turn, context.pressure_observed on every pressure level change,
context.compacted, capability.degraded when the file is lost — into a
lifeloop session of its own (integration_mode telemetry_only).

Which file: FILE; or --latest, the newest one written for --cwd in the last
week; or, with neither, the next one a harness creates for --cwd (default:
the current folder). A file that already exists is read from its start to
learn the session id and pressure level; its earlier turns are not reported.
A harness that keeps its sessions as rows of a database takes the database
as FILE (its newest session of --cwd) or <database>#<session id>.

The watch ends on SIGINT or SIGTERM (after reading what the harness has
written so far, for up to 2 s), or after --until-idle without new
telemetry; it then records session.ended, marks the session completed,
prints {"session_id","reason","receipts"} as one JSON line and exits 0.`,
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			durabilityFlag(&o.Durability),
			&ucli.StringFlag{Name: "adapter", Usage: "adapter `ID` of the harness (" + strings.Join(e.Registry().IDsWith(func(a *adapters.Adapter) bool { return a.Telemetry() != nil }), " or ") + ")", Required: true, Destination: &o.Adapter},
			&ucli.BoolFlag{Name: "latest", Usage: "watch the newest file written for --cwd", Destination: &o.Latest},
			&ucli.StringFlag{Name: "cwd", Usage: "the harness's working `DIR` (default: the current folder)", Destination: &o.Cwd},
			&ucli.GenericFlag{Name: "client", Usage: "client `CMD` (a shell command line) receiving every receipt's dispatch envelope on stdin (repeatable)", Value: &clients},
			&ucli.StringSliceFlag{Name: "client-events", Usage: "only dispatch these `EVENTS` to clients (comma-separated)"},
			&ucli.DurationFlag{Name: "client-timeout", Usage: "per-dispatch client timeout", Value: 5 * time.Second, Destination: &o.ClientTimeout},
			&ucli.GenericFlag{Name: "events", Usage: "also write receipts to `DEST`: a file path (NDJSON, appended), fd:N, or amqp://... (HCP events published from the ledger with confirms; see `lifeloop publish --help`) (repeatable)", Value: &events},
			&ucli.StringFlag{Name: "format", Usage: "format of --events files: lifeloop, orgloop or hcp (amqp:// destinations always carry hcp)", Value: "lifeloop", Destination: &o.Format},
			orgLoopWebhookFlag(&o.OrgLoopHook),
			orgLoopWaitFlag(&o.OrgLoopWait),
			&ucli.DurationFlag{Name: "until-idle", Usage: "end after this long without new telemetry (0 = until interrupted)", Destination: &o.UntilIdle},
			&ucli.DurationFlag{Name: "not-found-after", Usage: "report capability.degraded when no file appears within this long", Value: observe.DefaultNotFoundAfter, Destination: &o.NotFoundAfter},
			levelsFlag(&o.Levels),
			otlpFlag(&o.OTLP),
		},
		Action: func(c *ucli.Context) error {
			o.Clients = clients.items
			o.Events = events.items
			o.ClientEvents = splitCommas(c.StringSlice("client-events"))
			switch c.NArg() {
			case 0:
			case 1:
				o.Path = c.Args().First()
			default:
				return usageErrorf("watch takes at most one FILE")
			}
			if o.Path != "" && o.Latest {
				return usageErrorf("give FILE or --latest, not both")
			}
			return watchRun(c.Context, e, o)
		},
	}
}

// levelsFlag is the --levels flag shared by run and watch.
func levelsFlag(dest *string) ucli.Flag {
	return &ucli.StringFlag{
		Name:        "levels",
		Usage:       "context pressure thresholds in `PERCENT` of the window: moderate,high,critical",
		Value:       "50,75,90",
		Destination: dest,
	}
}

// parseLevels reads "50,75,90" (percent of the window at which the
// moderate, high and critical levels start).
func parseLevels(s string) (telemetry.Levels, error) {
	parts := strings.Split(s, ",")
	if len(parts) != 3 {
		return telemetry.Levels{}, fmt.Errorf("--levels %q: want three percentages, e.g. 50,75,90", s)
	}
	var v [3]float64
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(p), "%"), 64)
		if err != nil {
			return telemetry.Levels{}, fmt.Errorf("--levels %q: %q is not a number", s, p)
		}
		v[i] = f / 100
	}
	l := telemetry.Levels{Moderate: v[0], High: v[1], Critical: v[2]}
	if err := l.Validate(); err != nil {
		return telemetry.Levels{}, fmt.Errorf("--levels %q: need 0 < moderate < high < critical <= 100", s)
	}
	return l, nil
}

func watchRun(ctx context.Context, e *env, o watchOptions) error {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	format, err := sink.ParseFormat(o.Format)
	if err != nil {
		return usageErrorf("--format: %v", err)
	}
	levels, err := parseLevels(o.Levels)
	if err != nil {
		return usageErrorf("%v", err)
	}
	var events []contract.Event
	for _, name := range o.ClientEvents {
		ev := contract.Event(name)
		if !ev.Valid() {
			return usageErrorf("--client-events: unknown event %q; see `lifeloop events`", name)
		}
		events = append(events, ev)
	}
	var clients []pipeline.ClientSpec
	for _, c := range o.Clients {
		if strings.TrimSpace(c) == "" {
			return usageErrorf("--client: empty command")
		}
		clients = append(clients, pipeline.ClientSpec{Path: "/bin/sh", Args: []string{"-c", c}})
	}
	cwd := o.Cwd
	if cwd == "" {
		cwd = "."
	}
	if cwd, err = e.abs(cwd); err != nil {
		return err
	}
	path := o.Path
	if path != "" {
		if path, err = e.abs(path); err != nil {
			return err
		}
	}
	fileEvents, amqpTargets, err := splitEvents(o.Events)
	if err != nil {
		return err
	}
	live, err := newLiveOrgLoop(e, o.OrgLoopHook, root, o.Cwd)
	if err != nil {
		return err
	}
	defer live.finish(o.OrgLoopWait)
	amqpLive := newLiveAMQP(e, amqpTargets, root)
	defer amqpLive.finish(amqpDrain)
	otlpLive, err := newLiveOTLP(e, o.OTLP, root)
	if err != nil {
		return err
	}
	defer otlpLive.finish()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dur, err := durability(o.Durability, e.Getenv)
	if err != nil {
		return err
	}
	res, err := watch.Run(ctx, watch.Options{
		StateDir: root, Adapter: o.Adapter, Registry: e.Registry(), Path: path, Latest: o.Latest, Cwd: cwd,
		Env: e.Environ, Clients: clients, ClientEvents: events, ClientTimeout: o.ClientTimeout,
		Events: fileEvents, Format: format, UntilIdle: o.UntilIdle, Levels: levels,
		NotFoundAfter: o.NotFoundAfter, OnSession: chainHooks(live.hook(), amqpLive.hook(), otlpLive.hook()), Durability: dur, Now: e.Now, IDs: e.IDs,
	})
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	out, _ := json.Marshal(map[string]any{"session_id": res.SessionID, "reason": res.Reason, "receipts": res.Receipts})
	fmt.Fprintln(e.Out, string(out))
	return nil
}
