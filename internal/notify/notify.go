// Package notify announces a session that waits for a person: once per
// attention episode it runs the person's command, posts a signed JSON
// document to a webhook and shows a desktop notification, each only when
// configured. It never blocks its caller, never writes to the harness's
// terminal, and logs a failing notifier once (docs/notify.md).
//
// Each notifier has its own lane: a bounded queue worked by at most one
// goroutine, started when work arrives and gone when the queue is empty.
// A slow webhook therefore never delays the command, and the webhook's
// documents arrive in the order the episodes opened and closed.
package notify

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Episode is what a notification tells of one episode of waiting: the
// session's facts and the episode's (docs/notify.md). Never a payload
// body: Detail is the bounded detail of the attention state.
type Episode struct {
	Session  string
	Harness  string
	Cwd      string
	ID       int // the episode's id within the session
	Kind     string
	Source   string
	Evidence string
	Detail   string
	Turn     int
	Since    time.Time
	// End and Duration are set when the episode closed.
	End      time.Time
	Duration time.Duration
}

// LogName is the file in the session folder that Config.LogPath names.
const LogName = "notify.log"

// The defaults of Config's bounds.
const (
	DefaultCommandTimeout = 30 * time.Second
	DefaultWebhookTimeout = 5 * time.Second
	DefaultDesktopTimeout = 10 * time.Second
)

// Config says which notifiers run (run's --notify flags, or the
// LIFELOOP_NOTIFY* settings every session reads).
type Config struct {
	// Command is run with sh -c once per episode, its facts in its
	// environment.
	Command string
	// WebhookURL receives a JSON document per episode opened and closed,
	// signed with WebhookSecret when one is set.
	WebhookURL    string
	WebhookSecret string
	// Desktop shows a desktop notification where the platform has one.
	Desktop bool
	// Kinds are the attention states announced; empty: every waiting one.
	Kinds []string

	// LogPath is the file the command's output is appended to (created
	// 0600; the session folder's LogName); empty: discarded.
	LogPath string
	// Env is the environment the command and the desktop program start
	// from (nil: lifeloop's own); the episode's facts are added and
	// LIFELOOP_NOTIFY_SECRET is removed.
	Env []string
	// CommandTimeout bounds one run of Command, after which its process
	// group is killed (default DefaultCommandTimeout).
	CommandTimeout time.Duration
	// WebhookTimeout bounds one post (default DefaultWebhookTimeout).
	WebhookTimeout time.Duration
	// Now is the clock of the webhook's timestamps (default time.Now).
	Now func() time.Time
}

// Enabled reports whether any notifier is configured.
func (c Config) Enabled() bool { return c.Command != "" || c.WebhookURL != "" || c.Desktop }

// Notifier runs the configured notifiers. Its methods return at once;
// the work runs in the background. It is safe for concurrent use.
type Notifier struct {
	cfg  Config
	log  *slog.Logger
	ctx  context.Context
	stop context.CancelFunc

	mu      sync.Mutex // guards stopped and the lanes' worker starts
	stopped bool
	busy    sync.WaitGroup // one per running lane worker

	command, webhook, desktop *lane
	client                    *http.Client
	transport                 *http.Transport
	desktopProgram            desktopProgram // the desktop lane's own
}

// New returns a notifier for cfg (nil when nothing is configured: a nil
// Notifier's methods do nothing). log receives the failures (nil: none
// are told); nothing is ever written to the terminal.
func New(cfg Config, log *slog.Logger) *Notifier {
	if !cfg.Enabled() {
		return nil
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.CommandTimeout <= 0 {
		cfg.CommandTimeout = DefaultCommandTimeout
	}
	if cfg.WebhookTimeout <= 0 {
		cfg.WebhookTimeout = DefaultWebhookTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ctx, stop := context.WithCancel(context.Background())
	n := &Notifier{cfg: cfg, log: log, ctx: ctx, stop: stop}
	if cfg.Command != "" {
		n.command = &lane{name: "command", n: n}
	}
	if cfg.WebhookURL != "" {
		n.webhook = &lane{name: "webhook", n: n}
		n.transport = http.DefaultTransport.(*http.Transport).Clone()
		n.client = &http.Client{
			Transport:     n.transport,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if cfg.Desktop {
		n.desktop = &lane{name: "desktop", n: n}
	}
	return n
}

// Opened announces an episode that opened: the command runs, the webhook
// gets episode.opened, the desktop shows it. It returns at once.
func (n *Notifier) Opened(e Episode) {
	if n == nil || !n.wanted(e.Kind) {
		return
	}
	n.push(n.command, e, func(ctx context.Context) error { return n.runCommand(ctx, e) })
	n.push(n.webhook, e, func(ctx context.Context) error { return n.post(ctx, eventOpened, e) })
	n.push(n.desktop, e, func(ctx context.Context) error { return n.showDesktop(ctx, e) })
}

// Closed tells the webhook that an episode closed (the command and the
// desktop are told only of an opening). It returns at once.
func (n *Notifier) Closed(e Episode) {
	if n == nil || !n.wanted(e.Kind) {
		return
	}
	n.push(n.webhook, e, func(ctx context.Context) error { return n.post(ctx, eventClosed, e) })
}

// Wait waits up to d for notifications under way (at the session's end),
// then stops what still runs: a command's process group is killed, a post
// abandoned, what is queued dropped (each logged once). Calls after Wait
// do nothing; Wait again returns at once.
func (n *Notifier) Wait(d time.Duration) {
	if n == nil {
		return
	}
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.stopped = true
	n.mu.Unlock()
	done := make(chan struct{})
	go func() { n.busy.Wait(); close(done) }()
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	n.stop()
	<-done // prompt: the kill and the abandoned request end the workers
	if n.transport != nil {
		n.transport.CloseIdleConnections()
	}
}

// wanted reports whether episodes of kind are announced.
func (n *Notifier) wanted(kind string) bool {
	if len(n.cfg.Kinds) == 0 {
		return waitingKind(kind)
	}
	return slices.Contains(n.cfg.Kinds, kind)
}
