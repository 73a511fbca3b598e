// Package notify announces a session that waits for a person: once per
// attention episode it runs the person's command, posts a signed JSON
// document to a webhook and shows a desktop notification, each only when
// configured. It never blocks its caller, never writes to the harness's
// terminal, and logs a failing notifier once.
package notify

import (
	"log/slog"
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
}

// Enabled reports whether any notifier is configured.
func (c Config) Enabled() bool { return c.Command != "" || c.WebhookURL != "" || c.Desktop }

// Notifier runs the configured notifiers. Its methods return at once;
// the work runs in the background.
type Notifier struct {
	cfg Config
	log *slog.Logger
}

// New returns a notifier for cfg (nil when nothing is configured: a nil
// Notifier's methods do nothing).
func New(cfg Config, log *slog.Logger) *Notifier {
	if !cfg.Enabled() {
		return nil
	}
	return &Notifier{cfg: cfg, log: log}
}

// Opened announces an episode that opened.
func (n *Notifier) Opened(e Episode) {
	if n == nil {
		return
	}
	panic("notify: not built yet")
}

// Closed tells the webhook that an episode closed (the command and the
// desktop are told only of an opening).
func (n *Notifier) Closed(e Episode) {
	if n == nil {
		return
	}
	panic("notify: not built yet")
}

// Wait waits up to d for notifications under way (at the session's end).
func (n *Notifier) Wait(d time.Duration) {}
