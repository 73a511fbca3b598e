package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/otelid"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// OpenTelemetry export (docs/otel.md). lifeloop never links the
// OpenTelemetry SDK: the export is the lifeloop-otlp program, started
// beside a run with --otlp and handed the sessions by `export otlp`.

const (
	otlpEndpointEnv = "LIFELOOP_OTLP_ENDPOINT"
	// otlpProgramEnv names the lifeloop-otlp program to run, when it is
	// neither beside lifeloop nor on PATH.
	otlpProgramEnv = "LIFELOOP_OTLP_PROGRAM"
	otlpProgram    = "lifeloop-otlp"
	// otlpDrain bounds, after the session ended, the export of what the
	// backend has not taken yet; the rest is left for `export otlp`.
	otlpDrain = time.Second
	// DefaultExportTimeout bounds `export otlp` per session when
	// --timeout is not given: a backend that keeps answering "try later"
	// must not hold a person's terminal; the cursor keeps what it took.
	DefaultExportTimeout = 30 * time.Second
)

func otlpFlag(dest *string) ucli.Flag {
	return &ucli.StringFlag{
		Name:        "otlp",
		Usage:       "export the session to the OpenTelemetry backend at `URL` (OTLP/HTTP, e.g. http://127.0.0.1:4318; OTLP/gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc) from the ledger, as traces, logs and metrics; see docs/otel.md",
		EnvVars:     []string{otlpEndpointEnv},
		Destination: dest,
	}
}

func otlpHarnessEnvFlag(dest *bool) ucli.Flag {
	return &ucli.BoolFlag{
		Name:        "otlp-harness-env",
		Usage:       "with --otlp, leave the OTEL_EXPORTER_OTLP_* variables in the harness's environment (by default they are removed, so the harness's own export is not switched on by the settings meant for lifeloop)",
		Destination: dest,
	}
}

// checkOTLPEndpoint refuses what is not an http(s) URL.
func checkOTLPEndpoint(flag, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("%s %q: give the backend's OTLP/HTTP URL, such as http://127.0.0.1:4318", flag, endpoint)
	}
	return nil
}

// harnessOTelEnv returns environ as harness process n of session id
// inherits it under --otlp: TRACEPARENT names the incarnation span that
// process opens (otelid.ProcessSpan) and OTEL_RESOURCE_ATTRIBUTES gains
// lifeloop.session.id, so the harness's own telemetry, when the user
// turns it on, joins lifeloop's trace; OTEL_EXPORTER_OTLP_* are removed
// unless keep.
func harnessOTelEnv(environ []string, keep bool) (base []string, forSession func(id string, n int) []string) {
	resAttrs := ""
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "TRACEPARENT" || k == "TRACESTATE":
		case k == "OTEL_RESOURCE_ATTRIBUTES":
			resAttrs = v
		case strings.HasPrefix(k, "OTEL_EXPORTER_OTLP_") && !keep:
		default:
			base = append(base, kv)
		}
	}
	return base, func(id string, n int) []string {
		attrs := "lifeloop.session.id=" + id
		if resAttrs != "" {
			attrs = resAttrs + "," + attrs
		}
		return []string{"TRACEPARENT=" + otelid.Traceparent(id, otelid.ProcessSpan(n)), "OTEL_RESOURCE_ATTRIBUTES=" + attrs}
	}
}

// otlpReport is the line lifeloop-otlp prints per session: the fields of
// otlpcmd.Report that run and watch read. It is a copy on purpose:
// importing otlpcmd would link the OpenTelemetry SDK into lifeloop, which
// cmd/lifeloop/deps_test.go forbids.
type otlpReport struct {
	SessionID    string   `json:"session_id"`
	Endpoint     string   `json:"endpoint"`
	Exported     int      `json:"exported"`
	Through      uint64   `json:"through"`
	LastSequence uint64   `json:"last_sequence"`
	Owed         uint64   `json:"owed"`
	OpenSpans    []string `json:"open_spans,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// liveOTLP exports beside a run or watch: lifeloop-otlp follows the
// session's ledger from the moment the session exists, in a process
// group of its own (the terminal's signals are the harness's), and is
// told the session ended by its standard input closing.
type liveOTLP struct {
	e        *env
	endpoint string
	root     string
	prog     string

	mu     sync.Mutex
	id     string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout bytes.Buffer
	err    error
}

// newLiveOTLP is the export of a run or watch with --otlp endpoint (nil
// when endpoint is empty: its methods then do nothing).
func newLiveOTLP(e *env, endpoint, root string) (*liveOTLP, error) {
	if endpoint == "" {
		return nil, nil
	}
	if err := checkOTLPEndpoint("--otlp", endpoint); err != nil {
		return nil, err
	}
	prog, err := findProgram(e, otlpProgram, otlpProgramEnv)
	if err != nil {
		return nil, exitf(exitcode.LaunchFailed, "--otlp: %v", err)
	}
	return &liveOTLP{e: e, endpoint: endpoint, root: root, prog: prog}, nil
}

func (l *liveOTLP) hook() func(id, dir string) {
	if l == nil {
		return nil
	}
	return l.onSession
}

// onSession starts lifeloop-otlp on the session; a failure to start is
// reported by finish and never stops the harness.
func (l *liveOTLP) onSession(id, _ string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id = id
	logF, err := os.OpenFile(statedir.LogPath(l.root, id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, statedir.FilePerm)
	if err != nil {
		l.err = err
		return
	}
	defer logF.Close()
	// Not tied to a context: it outlives nothing but the session, and
	// finish ends it (stdin closed, then killed after the bound).
	cmd := exec.CommandContext(context.Background(), l.prog, "--state-dir", l.root, "--endpoint", l.endpoint, "--follow", "--until-stdin-eof",
		"--drain", otlpDrain.String(), "--version", Version, id)
	cmd.Env = l.e.Environ
	cmd.Stdout = &l.stdout
	cmd.Stderr = logF
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		l.err = fmt.Errorf("starting %s: %w", l.prog, err)
		return
	}
	l.cmd, l.stdin = cmd, stdin
}

// finish tells lifeloop-otlp the session ended, gives it otlpDrain to
// send what the backend has not taken (and a second more to exit), and
// says on stderr, in one line, what is still owed and how to send it.
func (l *liveOTLP) finish() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		fmt.Fprintf(l.e.Err, "lifeloop: warning: --otlp: %v; export the session with `lifeloop export otlp %s --endpoint %s`\n", l.err, l.id, l.endpoint)
		return
	}
	if l.cmd == nil {
		return
	}
	_ = l.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- l.cmd.Wait() }()
	t := time.NewTimer(otlpDrain + time.Second)
	defer t.Stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-t.C:
		_ = l.cmd.Process.Kill()
		waitErr = <-done
	}
	var rep otlpReport
	if err := json.Unmarshal(bytes.TrimSpace(l.stdout.Bytes()), &rep); err != nil {
		fmt.Fprintf(l.e.Err, "lifeloop: warning: OpenTelemetry export of session %s stopped without a report (%v); send it with `lifeloop export otlp %s --endpoint %s`\n", l.id, waitErr, l.id, l.endpoint)
		return
	}
	if rep.Owed > 0 || rep.Error != "" {
		why := rep.Error
		if why == "" {
			why = "the backend did not take them in time"
		}
		fmt.Fprintf(l.e.Err, "lifeloop: warning: OpenTelemetry export of session %s owes %d of %d receipts to %s (%s); send them with `lifeloop export otlp %s --endpoint %s`\n",
			l.id, rep.Owed, rep.LastSequence, l.endpoint, why, l.id, l.endpoint)
	}
}

type exportOptions struct {
	StateDir string
	Latest   bool
	All      bool
	Since    string
	Follow   bool
	Endpoint string
	Timeout  time.Duration
	Session  string
}

func exportCommand(e *env) *ucli.Command {
	var o exportOptions
	return &ucli.Command{
		Name:  "export",
		Usage: "send sessions from their ledgers to another system",
		Subcommands: []*ucli.Command{{
			Name:      "otlp",
			Usage:     "export sessions to an OpenTelemetry backend (OTLP over HTTP or gRPC) as traces, logs and metrics, from where the last export stopped",
			ArgsUsage: "SESSION|--latest|--all",
			Description: "Sends each session's receipts as one trace (a lifeloop.session span, an invoke_agent span per\n" +
				"harness incarnation, a span per frame, a linked lifeloop.renewal span per renewal), one log\n" +
				"record per receipt and context, session and frame metrics (docs/otel.md). A cursor file per\n" +
				"endpoint in the session's folder records what the backend took, so a run with --otlp whose\n" +
				"backend was down, or any history, is sent once. Prints one JSON line per session\n" +
				"{session_id, exported, through, last_sequence, owed}; exit 1 when something is still owed.\n" +
				"It retries with backoff for at most --timeout per session (30s by default); then it says on\n" +
				"stderr what the backend last answered and exits 1, and running it again continues from there.\n" +
				"The endpoint comes from --endpoint, else $" + otlpEndpointEnv + ", else $OTEL_EXPORTER_OTLP_ENDPOINT;\n" +
				"OTEL_EXPORTER_OTLP_HEADERS and the other standard OTLP variables are honoured. The work is\n" +
				"done by the lifeloop-otlp program installed beside lifeloop.",
			Flags: []ucli.Flag{
				stateDirFlag(&o.StateDir),
				&ucli.BoolFlag{Name: "latest", Usage: "export the most recent session", Destination: &o.Latest},
				&ucli.BoolFlag{Name: "all", Usage: "export every session (with --follow, also those that start later)", Destination: &o.All},
				&ucli.StringFlag{Name: "since", Usage: "with --all: only sessions started within `DURATION` (e.g. 24h) or since an RFC 3339 time", Destination: &o.Since},
				&ucli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep exporting as the ledgers grow, until interrupted", Destination: &o.Follow},
				&ucli.StringFlag{Name: "endpoint", Usage: "the backend's OTLP `URL` (e.g. http://127.0.0.1:4318; gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc)", EnvVars: []string{otlpEndpointEnv}, Destination: &o.Endpoint},
				&ucli.DurationFlag{Name: "timeout", Usage: "give up on a session after this long, its cursor kept for the next export (0: retry with backoff until the backend takes everything)", Value: DefaultExportTimeout, Destination: &o.Timeout},
			},
			OnUsageError: commandUsageError,
			Action: func(c *ucli.Context) error {
				if c.NArg() > 1 {
					return usageErrorf("export otlp takes one SESSION (got %d arguments)", c.NArg())
				}
				o.Session = c.Args().First()
				// SIGINT or SIGTERM to lifeloop alone (not its process
				// group) still stops lifeloop-otlp, which then writes its
				// cursor and reports: never an orphaned exporter.
				ctx, stop := signalContext(c.Context)
				defer stop()
				return exportOTLPRun(ctx, e, o)
			},
		}},
	}
}

func exportOTLPRun(ctx context.Context, e *env, o exportOptions) error {
	if o.Endpoint != "" {
		if err := checkOTLPEndpoint("--endpoint", o.Endpoint); err != nil {
			return err
		}
	}
	var root string
	var ids []string
	switch {
	case o.All && (o.Latest || o.Session != ""):
		return usageErrorf("give a SESSION, --latest or --all, not several")
	case o.Since != "" && !o.All:
		return usageErrorf("--since goes with --all")
	case o.All:
		r, err := statedir.Resolve(o.StateDir, e.Getenv)
		if err != nil {
			return exitf(exitcode.Failed, "%v", err)
		}
		root = r
		since, err := parseSince(o.Since, e.Now())
		if err != nil {
			return err
		}
		recs, err := statedir.ListSessions(root)
		if err != nil {
			return exitf(exitcode.Failed, "%v", err)
		}
		for _, rec := range recs {
			if since.IsZero() || (rec.StartedAt != nil && !rec.StartedAt.Before(since)) {
				rec = e.sealIfLost(root, rec)
				ids = append(ids, rec.ID)
			}
		}
		if len(ids) == 0 && !o.Follow {
			return exitf(exitcode.Failed, "no session to export in %s", root)
		}
	default:
		r, rec, err := resolveSession(e, controlOptions{StateDir: o.StateDir, Session: o.Session, Latest: o.Latest})
		if err != nil {
			return err
		}
		root, ids = r, []string{rec.ID}
	}
	prog, err := findProgram(e, otlpProgram, otlpProgramEnv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	args := []string{"--state-dir", root, "--version", Version}
	if o.Endpoint != "" {
		args = append(args, "--endpoint", o.Endpoint)
	}
	if o.Follow {
		args = append(args, "--follow")
		if o.All {
			// Sessions started after this export: followed as they appear.
			args = append(args, "--new-sessions")
		}
	}
	if o.Timeout > 0 {
		args = append(args, "--drain", o.Timeout.String())
	}
	cmd := exec.CommandContext(ctx, prog, append(args, ids...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = e.Environ, e.Out, e.Err
	// The program handles SIGINT and SIGTERM itself (it writes its cursor
	// and reports); lifeloop waits for it.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 0:
		// Interrupted, and the program ended well (its cursor written,
		// its reports printed): exec reports the cancellation only.
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == exitcode.Usage:
		return silentExit(exitcode.Usage)
	case errors.As(err, &ee):
		return silentExit(exitcode.Failed)
	}
	return exitf(exitcode.Failed, "%s: %v", prog, err)
}

// parseSince reads --since: a duration back from now, or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, usageErrorf("--since %q: give a duration (24h) or an RFC 3339 time", s)
}
