// Package otlpcmd is the lifeloop-otlp program: it exports lifeloop
// sessions from their ledgers to an OpenTelemetry backend over OTLP/HTTP
// (package otlpexport), each from where the last export to that
// destination stopped (a cursor file in the session's folder).
//
// It is a program of its own so that lifeloop, which runs on every
// harness start, never links or initialises the OpenTelemetry SDK and
// its exporters: `lifeloop run --otlp` starts it beside the harness, and
// `lifeloop export otlp` hands over to it once it has resolved which
// sessions to send (docs/otel.md).
package otlpcmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otlpexport"
	"github.com/lifeloop/lifeloop/internal/outbox"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// Exit codes: 0 everything sent, 1 something is still owed or failed, 2
// usage.
const (
	exitOK    = 0
	exitOwed  = 1
	exitUsage = 2
)

// DefaultEndpoint is where the OTLP exporters send when neither
// --endpoint nor OTEL_EXPORTER_OTLP_ENDPOINT says; DefaultGRPCEndpoint
// when every signal goes over gRPC.
const (
	DefaultEndpoint     = "http://localhost:4318"
	DefaultGRPCEndpoint = "http://localhost:4317"
)

// Streams are what the program takes from its process.
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	Getenv   func(string) string
}

type options struct {
	stateDir   string
	endpoint   string
	protocol   string
	follow     bool
	newOnes    bool
	untilEOF   bool
	drain      time.Duration
	version    string
	sessionIDs []string
}

// Report is the one JSON line printed per session.
type Report struct {
	SessionID string `json:"session_id"`
	Endpoint  string `json:"endpoint"`
	// Exported is the number of ledger entries whose data the backend
	// took in this run and before (the cursor's count).
	Exported int `json:"exported"`
	// Through is the last ledger sequence handled; LastSequence the
	// ledger's last; Owed what lies between.
	Through      uint64   `json:"through"`
	LastSequence uint64   `json:"last_sequence"`
	Owed         uint64   `json:"owed"`
	OpenSpans    []string `json:"open_spans,omitempty"`
	// Refused is what the backend refused for good, per signal (e.g. the
	// logs of a backend that takes only traces): not sent again.
	Refused map[string]otlpexport.Refusal `json:"refused,omitempty"`
	Error   string                        `json:"error,omitempty"`
}

// Main runs the program with args (args[0] is its name) and returns the
// exit code.
func Main(args []string, s Streams) int {
	fs := flag.NewFlagSet("lifeloop-otlp", flag.ContinueOnError)
	fs.SetOutput(s.Err)
	var o options
	fs.StringVar(&o.stateDir, "state-dir", "", "lifeloop's state `DIR` (required)")
	fs.StringVar(&o.endpoint, "endpoint", "", "the backend's OTLP base `URL` (default: $OTEL_EXPORTER_OTLP_ENDPOINT, else "+DefaultEndpoint+", or "+DefaultGRPCEndpoint+" over gRPC)")
	fs.StringVar(&o.protocol, "protocol", "", "`http/protobuf`, http/json (traces only; protobuf for logs and metrics) or grpc, for every signal (default: $OTEL_EXPORTER_OTLP_PROTOCOL and the per-signal variables, else http/protobuf)")
	fs.BoolVar(&o.follow, "follow", false, "keep exporting as the ledgers grow, until interrupted")
	fs.BoolVar(&o.newOnes, "new-sessions", false, "with --follow: also export every session that starts in the state folder later, until interrupted")
	fs.BoolVar(&o.untilEOF, "until-stdin-eof", false, "with --follow: stop following when standard input closes, then export what the ledger holds for at most --drain")
	fs.DurationVar(&o.drain, "drain", 0, "bound on the export after the end (0: until everything is sent or interrupted)")
	fs.StringVar(&o.version, "version", "", "lifeloop's `VERSION` (service.version)")
	fs.Usage = func() {
		fmt.Fprintf(s.Err, "usage: lifeloop-otlp --state-dir DIR [--endpoint URL] [--protocol P] [--follow [--until-stdin-eof | --new-sessions]] [--drain D] SESSION...\n\n"+
			"Exports each session's ledger as OpenTelemetry traces, logs and metrics over OTLP (HTTP or gRPC),\n"+
			"from where the last export to the same endpoint stopped. `lifeloop export otlp` runs it.\n"+
			"OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE and the per-signal\n"+
			"variables are honoured; OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME add to the resource.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	o.sessionIDs = fs.Args()
	if o.newOnes && (!o.follow || o.untilEOF) {
		fmt.Fprintln(s.Err, "lifeloop-otlp: --new-sessions goes with --follow (and not --until-stdin-eof)")
		return exitUsage
	}
	if o.stateDir == "" || (len(o.sessionIDs) == 0 && !o.newOnes) {
		fs.Usage()
		return exitUsage
	}
	for _, id := range o.sessionIDs {
		if err := statedir.ValidateSessionID(id); err != nil {
			fmt.Fprintf(s.Err, "lifeloop-otlp: %v\n", err)
			return exitUsage
		}
	}
	ctx, stop := signalContext()
	defer stop()
	return run(ctx, s, o)
}

func run(ctx context.Context, s Streams, o options) int {
	endpoint := o.endpoint
	if endpoint == "" {
		endpoint = s.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	protos, err := otlpexport.Protocols(otlpexport.Config{Protocol: o.protocol}, s.Getenv)
	if err != nil {
		fmt.Fprintf(s.Err, "lifeloop-otlp: %v\n", err)
		return exitUsage
	}
	if endpoint == "" {
		endpoint = DefaultEndpoint
		if protos["traces"] == otlpexport.ProtocolGRPC && protos["logs"] == otlpexport.ProtocolGRPC && protos["metrics"] == otlpexport.ProtocolGRPC {
			endpoint = DefaultGRPCEndpoint
		}
	}
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(s.Err, "lifeloop-otlp: endpoint %q: give an http:// or https:// URL such as http://127.0.0.1:4318\n", endpoint)
		return exitUsage
	}
	finish := make(chan struct{})
	if o.untilEOF {
		go func() {
			_, _ = io.Copy(io.Discard, s.In)
			close(finish)
		}()
	} else if !o.follow {
		close(finish)
	}
	res := resourceFromEnv(s.Getenv)
	var mu sync.Mutex
	code := exitOK
	one := func(id string) {
		rep := exportSession(ctx, s, o, endpoint, res, id, finish)
		b, _ := json.Marshal(rep)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(s.Out, string(b))
		if rep.Error != "" || rep.Owed > 0 {
			code = exitOwed
			warn(s.Err, o, rep)
		}
	}
	if !o.follow {
		for _, id := range o.sessionIDs {
			one(id)
		}
		return code
	}
	var wg sync.WaitGroup
	for _, id := range o.sessionIDs {
		wg.Go(func() { one(id) })
	}
	if o.newOnes {
		wg.Go(func() { followNew(ctx, o, func(id string) { wg.Go(func() { one(id) }) }) })
	}
	wg.Wait()
	return code
}

// newSessionPoll is how often --new-sessions looks for sessions started
// since.
const newSessionPoll = time.Second

// followNew calls start once for every session of o.stateDir that is
// not among o.sessionIDs and has a ledger, as they appear, until ctx
// ends.
func followNew(ctx context.Context, o options, start func(id string)) {
	seen := map[string]bool{}
	for _, id := range o.sessionIDs {
		seen[id] = true
	}
	t := time.NewTicker(newSessionPoll)
	defer t.Stop()
	for {
		recs, _ := statedir.ListSessions(o.stateDir)
		for _, rec := range recs {
			if seen[rec.ID] {
				continue
			}
			if _, err := os.Stat(statedir.ReceiptsPath(o.stateDir, rec.ID)); err != nil {
				continue // no ledger yet: the next look
			}
			seen[rec.ID] = true
			start(rec.ID)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// StatePath is the cursor file of session id's export to endpoint, named
// after a digest of the endpoint.
func StatePath(root, id, endpoint string) string {
	sum := sha256.Sum256([]byte(endpoint))
	return filepath.Join(statedir.SessionDir(root, id), "otlp-"+hex.EncodeToString(sum[:4])+".json")
}

func exportSession(ctx context.Context, s Streams, o options, endpoint string, res []attribute.KeyValue, id string, finish <-chan struct{}) Report {
	rep := Report{SessionID: id, Endpoint: redact(endpoint)}
	ledgerPath := statedir.ReceiptsPath(o.stateDir, id)
	if _, err := os.Stat(ledgerPath); err != nil {
		rep.Error = fmt.Sprintf("no ledger for session %s in %s", id, o.stateDir)
		return rep
	}
	logF, log := sessionLog(o.stateDir, id)
	if logF != nil {
		defer logF.Close()
	}
	x, err := otlpexport.New(ctx, otlpexport.Config{Endpoint: o.endpoint, Protocol: o.protocol, Getenv: s.Getenv, SessionID: id, Version: o.version, Resource: res})
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = x.Shutdown(sctx)
	}()
	cfg, m := otlpexport.Outbox(x, id, ledgerPath, StatePath(o.stateDir, id, endpoint), redact(endpoint))
	cfg.Logger = log
	ob, err := outbox.Open(cfg)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer func() { _ = ob.Close() }()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ob.Run(runCtx) }()
	var runErr error
	select {
	case runErr = <-done:
	case <-finish:
		ob.Finish()
		var bound <-chan time.Time
		if o.drain > 0 {
			t := time.NewTimer(o.drain)
			defer t.Stop()
			bound = t.C
		}
		select {
		case runErr = <-done:
		case <-bound:
			cancel()
			runErr = gaveUp(o.drain, ob.Failing())
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				runErr = err
			}
		}
	}
	st := ob.State()
	rep.Exported, rep.Through = st.Delivered, st.Through
	rep.LastSequence = lastSequence(ledgerPath)
	if rep.LastSequence > rep.Through {
		rep.Owed = rep.LastSequence - rep.Through
	}
	rep.OpenSpans = m.Open()
	rep.Refused = x.Refused()
	for signal, r := range rep.Refused {
		log.Warn("otlp: the backend refused a signal; it is not sent again", "signal", signal, "items", r.Items, "err", r.Error)
	}
	// Following until interrupted ends with the interruption: no error.
	interrupted := o.follow && !o.untilEOF && errors.Is(runErr, context.Canceled)
	if runErr != nil && !interrupted {
		rep.Error = runErr.Error()
		if errors.Is(runErr, context.Canceled) && ctx.Err() != nil {
			rep.Error = "interrupted"
		}
	}
	return rep
}

// gaveUp is why an export stopped at its bound: the backend's last
// answer, when it gave one.
func gaveUp(bound time.Duration, answer error) error {
	if answer == nil {
		return fmt.Errorf("the backend did not take everything within %s", bound)
	}
	return fmt.Errorf("the backend did not take everything within %s; it last answered: %s", bound, otlpexport.Answer(answer))
}

// warn prints, on one line, why session rep's export did not complete
// and, when something is owed, how to send the rest: the cursor file
// keeps what the backend took, so the same export continues from there.
func warn(w io.Writer, o options, rep Report) {
	switch {
	case rep.Owed > 0:
		why := rep.Error
		if why == "" {
			why = "not everything was sent"
		}
		again := "lifeloop export otlp " + rep.SessionID
		if o.endpoint != "" {
			again += " --endpoint " + rep.Endpoint
		}
		fmt.Fprintf(w, "lifeloop-otlp: session %s owes %d of %d receipts to %s: %s; run `%s` again to continue from where this export stopped\n",
			rep.SessionID, rep.Owed, rep.LastSequence, rep.Endpoint, why, again)
	case rep.Error != "":
		fmt.Fprintf(w, "lifeloop-otlp: session %s: %s\n", rep.SessionID, rep.Error)
	}
}

func lastSequence(path string) uint64 {
	var last uint64
	for e, err := range ledger.ReadSince(path, 0) {
		if err == nil {
			last = e.Sequence
		}
	}
	return last
}

// redact drops a URL's user information.
func redact(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return endpoint
	}
	u.User = nil
	return u.String()
}

// resourceFromEnv reads OTEL_RESOURCE_ATTRIBUTES (k=v,k2=v2,
// percent-encoded values) and OTEL_SERVICE_NAME, as the OpenTelemetry
// specification defines them.
func resourceFromEnv(getenv func(string) string) []attribute.KeyValue {
	var kvs []attribute.KeyValue
	for _, p := range strings.Split(getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if d, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = d
		}
		kvs = append(kvs, attribute.String(k, v))
	}
	if n := getenv("OTEL_SERVICE_NAME"); n != "" {
		kvs = append(kvs, attribute.String("service.name", n))
	}
	return kvs
}

func sessionLog(root, id string) (*os.File, *slog.Logger) {
	f, err := os.OpenFile(statedir.LogPath(root, id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, statedir.FilePerm)
	if err != nil {
		return nil, slog.New(slog.DiscardHandler)
	}
	return f, slog.New(slog.NewJSONHandler(f, nil)).With("session", id, "component", "lifeloop-otlp")
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
