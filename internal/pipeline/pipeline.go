// Package pipeline opens and closes the recording pipeline of one
// lifeloop session: its folder, its log, its receipt ledger, the --events
// sinks, the client commands and the router in front of them. Every entry
// point that records receipts (run, watch, emit, host-hook, event invoke)
// opens one here, routes its moments through it and closes it.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/callback"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/ratelog"
	"github.com/lifeloop/lifeloop/internal/router"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ClientSpec is one client command.
type ClientSpec struct {
	Path string
	Args []string
}

// Options say which session to open and what its receipts go through.
type Options struct {
	// StateDir is the resolved state root.
	StateDir string
	// Session is the id of an existing session folder. With NewSession a
	// fresh id is minted and its folder created. With neither, nothing
	// is recorded in a ledger (receipts carry no sequence).
	Session    string
	NewSession bool
	// Log opens the session log (lifeloop.log in the session folder);
	// otherwise diagnostics are discarded.
	Log bool

	// Adapter's manifest shapes every receipt.
	Adapter *adapters.Adapter
	Mode    contract.IntegrationMode
	// Require is negotiated once when the pipeline opens (see
	// router.Config.Require).
	Require *contract.CapabilityRequest
	// ClientID and InvocationID of the receipts (router defaults when
	// empty).
	ClientID     string
	InvocationID string

	// Clients are run for every receipt: off the caller's path, or in
	// it with SyncClients (their answers then shape the receipt).
	Clients     []ClientSpec
	SyncClients bool
	// ClientEvents, when not empty, limit the clients to these events.
	ClientEvents  []contract.Event
	ClientTimeout time.Duration
	// ClientEnv is the clients' base environment; ClientStderr receives
	// their standard error (nil discards it).
	ClientEnv    []string
	ClientStderr io.Writer

	// Events are --events destinations, written in Format.
	Events []string
	Format sink.Format

	// Durability is the ledger's SyncMode (default group commit).
	Durability ledger.SyncMode

	Now func() time.Time
	IDs ids.Source
}

// Pipeline is one open session pipeline.
type Pipeline struct {
	// ID and Dir name the session ("" without one).
	ID, Dir string
	// Log is the session log (discarding when not opened).
	Log *slog.Logger

	o       Options
	ledger  *ledger.Ledger
	sinks   []router.Sink
	clients []router.Client
	rt      *router.Router
	closers []func()
}

// Open opens the session's pipeline. On error everything opened so far is
// closed again; Close releases it all.
func Open(o Options) (_ *Pipeline, err error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IDs == nil {
		o.IDs = ids.NewULIDSource(o.Now, nil)
	}
	p := &Pipeline{ID: o.Session, o: o, Log: slog.New(slog.DiscardHandler)}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	switch {
	case o.NewSession:
		p.ID = o.IDs.New(ids.PrefixSession)
		if p.Dir, err = statedir.CreateSessionDir(o.StateDir, p.ID); err != nil {
			return nil, err
		}
	case o.Session != "":
		p.Dir = statedir.SessionDir(o.StateDir, o.Session)
	}
	if p.o.InvocationID == "" {
		// Every receipt of one pipeline shares one invocation id.
		p.o.InvocationID = o.IDs.New(ids.PrefixInvocation)
	}
	if p.ID != "" {
		if err := p.openLedger(); err != nil {
			return nil, err
		}
	}
	if err := p.openSinks(); err != nil {
		return nil, err
	}
	p.openClients()
	cfg := p.routerConfig()
	if o.SyncClients {
		cfg.Clients = p.clients
	} else {
		cfg.AsyncClients = p.clients
	}
	if p.rt, err = router.New(cfg); err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() {
		cctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = p.rt.Close(cctx)
	})
	return p, nil
}

// openLedger opens the session log (when asked for) and the ledger.
func (p *Pipeline) openLedger() error {
	if p.o.Log {
		f, err := os.OpenFile(statedir.LogPath(p.o.StateDir, p.ID), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("session log: %w", err)
		}
		p.closers = append(p.closers, func() { _ = f.Close() })
		// A fault that repeats (every tick on a full disk) logs one line
		// per interval with a count, so the log never fills the disk. A
		// renewal's lines ("renewal…") are each asked for, and a held
		// session.started comes once per harness session: never limited.
		p.Log = slog.New(ratelog.New(slog.NewJSONHandler(f, nil), 0, p.o.Now, "renewal", "session.started held")).With("session", p.ID)
	}
	led, err := ledger.Open(statedir.ReceiptsPath(p.o.StateDir, p.ID), ledger.Options{Sync: p.o.Durability, Logger: p.Log, Now: p.o.Now, IDs: p.o.IDs})
	if err != nil {
		return &LedgerError{Err: err}
	}
	p.ledger = led
	p.closers = append(p.closers, func() { _ = led.Close() })
	return nil
}

// openSinks opens the --events destinations.
func (p *Pipeline) openSinks() error {
	for _, dest := range p.o.Events {
		sk, err := sink.Open(dest, p.o.Format, sink.Options{SessionID: p.ID, OrgLoopHarness: p.o.Adapter.OrgLoopHarness, Logger: p.Log, LedgerPath: statedir.ReceiptsPath(p.o.StateDir, p.ID)})
		if err != nil {
			return fmt.Errorf("--events %s: %w", dest, err)
		}
		p.sinks = append(p.sinks, sk)
		p.closers = append(p.closers, func() {
			cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = sk.Close(cctx)
		})
	}
	return nil
}

// openClients makes the client commands, told the session they serve.
func (p *Pipeline) openClients() {
	for _, c := range p.o.Clients {
		inv := &callback.Invoker{Path: c.Path, Args: c.Args, Timeout: p.o.ClientTimeout, Env: p.o.ClientEnv, Stderr: p.o.ClientStderr}
		if p.ID != "" {
			inv.SessionID, inv.SessionDir, inv.StateDir = p.ID, p.Dir, p.o.StateDir
		}
		if len(p.o.ClientEvents) > 0 {
			p.clients = append(p.clients, filteredClient{inv: inv, events: p.o.ClientEvents})
		} else {
			p.clients = append(p.clients, inv)
		}
	}
}

// routerConfig is the router configuration every router of the pipeline
// shares; clients are added by the caller.
func (p *Pipeline) routerConfig() router.Config {
	cfg := router.Config{
		Manifest:     p.o.Adapter.Manifest(),
		Mode:         p.o.Mode,
		ClientID:     p.o.ClientID,
		Require:      p.o.Require,
		InvocationID: p.o.InvocationID,
		Sinks:        p.sinks,
		Now:          p.o.Now,
		IDs:          p.o.IDs,
		Logger:       p.Log,
	}
	if p.ledger != nil {
		cfg.Ledger = p.ledger
	}
	return cfg
}

// Router is the pipeline's router.
func (p *Pipeline) Router() *router.Router { return p.rt }

// SyncRouter returns a second router into the same ledger and sinks whose
// clients answer synchronously, for moments whose clients' payloads can
// still reach the harness (a hook's response). It closes with the
// pipeline.
func (p *Pipeline) SyncRouter() (*router.Router, error) {
	cfg := p.routerConfig()
	cfg.Clients = p.clients
	rt, err := router.New(cfg)
	if err != nil {
		return nil, err
	}
	p.closers = append(p.closers, func() { _ = rt.Close(context.Background()) })
	return rt, nil
}

// Route records m through the pipeline's router.
func (p *Pipeline) Route(ctx context.Context, m moment.Moment) (router.Result, error) {
	if p.rt == nil {
		return router.Result{}, errors.New("pipeline closed")
	}
	return p.rt.Route(ctx, m)
}

// Unrecorded is what the session's ledger could not record (see
// ledger.Ledger.Unrecorded): final once the pipeline is closed.
func (p *Pipeline) Unrecorded() (int, error) {
	if p.ledger == nil {
		return 0, nil
	}
	return p.ledger.Unrecorded()
}

// Close flushes clients and sinks and closes the ledger and log, in the
// reverse order of opening. It is idempotent.
func (p *Pipeline) Close() {
	for i := len(p.closers) - 1; i >= 0; i-- {
		p.closers[i]()
	}
	p.closers = nil
	p.rt = nil
}

// LedgerError is the error Open returns when the session's ledger cannot
// be opened.
type LedgerError struct{ Err error }

func (e *LedgerError) Error() string { return e.Err.Error() }
func (e *LedgerError) Unwrap() error { return e.Err }

// filteredClient skips dispatches whose event is not in events.
type filteredClient struct {
	inv    *callback.Invoker
	events []contract.Event
}

func (f filteredClient) Invoke(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
	if !slices.Contains(f.events, env.Request.Event) {
		return contract.CallbackResponse{SchemaVersion: contract.Version, Status: contract.StatusSkipped}, nil
	}
	return f.inv.Invoke(ctx, env)
}
