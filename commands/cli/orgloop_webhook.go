package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/outbox"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// orgLoopSecretEnv names the environment variable holding the webhook's
// HMAC secret. It is read from the environment only, never a flag, and
// never logged.
const orgLoopSecretEnv = "LIFELOOP_ORGLOOP_WEBHOOK_SECRET"

// orgLoopDrain is how long run and watch wait by default, after the
// session ended, for posts still owed; the rest is left for
// `receipts --orgloop-webhook`.
const orgLoopDrain = 10 * time.Second

func orgLoopWebhookFlag(dest *string) ucli.Flag {
	return &ucli.StringFlag{
		Name:        "orgloop-webhook",
		Usage:       "post the session's start and stop to OrgLoop's coding-agent webhook at `URL`, from the ledger (secret: $" + orgLoopSecretEnv + "; see docs/orgloop.md)",
		Destination: dest,
	}
}

func orgLoopWaitFlag(dest *time.Duration) ucli.Flag {
	return &ucli.DurationFlag{
		Name:        "orgloop-webhook-wait",
		Usage:       "after the session, wait this long for --orgloop-webhook posts still owed",
		Value:       orgLoopDrain,
		Destination: dest,
	}
}

// orgLoopTarget is a checked webhook destination and its secret.
type orgLoopTarget struct {
	url    string
	secret []byte
}

func newOrgLoopTarget(e *env, url string) (*orgLoopTarget, error) {
	if err := sink.CheckWebhookURL(url); err != nil {
		return nil, usageErrorf("--orgloop-webhook: %v", err)
	}
	return &orgLoopTarget{url: url, secret: []byte(e.Getenv(orgLoopSecretEnv))}, nil
}

// open opens the outbox of session id (folder dir) for this target; its
// cursor file is named after a digest of the URL, so each destination
// keeps its own.
func (t *orgLoopTarget) open(e *env, root, id, cwd string, log *slog.Logger) (*outbox.Outbox, error) {
	sum := sha256.Sum256([]byte(t.url))
	state := filepath.Join(statedir.SessionDir(root, id), "orgloop-webhook-"+hex.EncodeToString(sum[:4])+".json")
	w := &sink.Webhook{URL: t.url, Secret: t.secret, UserAgent: "lifeloop"}
	harnessOf := func(adapterID string) string {
		if a, err := e.Registry().Lookup(adapterID); err == nil {
			return a.OrgLoopHarness
		}
		return ""
	}
	cfg := outbox.OrgLoopWebhook(statedir.ReceiptsPath(root, id), state, w, contract.OrgLoopOptions{SessionID: id, Cwd: cwd}, harnessOf)
	cfg.Logger, cfg.Now = log, e.Now
	return outbox.Open(cfg)
}

// openSessionLog opens the lifeloop.log of session id for appending and
// returns it with a JSON logger on it; when it cannot be opened the file
// is nil and the logger discards.
func openSessionLog(root, id string) (*os.File, *slog.Logger) {
	f, err := os.OpenFile(statedir.LogPath(root, id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, statedir.FilePerm)
	if err != nil {
		return nil, slog.New(slog.DiscardHandler)
	}
	return f, slog.New(slog.NewJSONHandler(f, nil)).With("session", id)
}

// liveOrgLoop delivers beside a run or watch: it starts when the session
// exists (launcher's OnSession) and is given orgLoopDrain after the end.
type liveOrgLoop struct {
	e      *env
	t      *orgLoopTarget
	root   string
	cwd    string
	mu     sync.Mutex
	id     string
	ob     *outbox.Outbox
	logF   *os.File
	cancel context.CancelFunc
	done   chan error
	err    error
	// refused is how many undeliverable posts the cursor held before.
	refused int
}

// newLiveOrgLoop is the delivery of a run or watch with --orgloop-webhook
// url (nil when url is empty: its methods then do nothing). cwd is the
// session's working folder ("" is the current one).
func newLiveOrgLoop(e *env, url, root, cwd string) (*liveOrgLoop, error) {
	if url == "" {
		return nil, nil
	}
	t, err := newOrgLoopTarget(e, url)
	if err != nil {
		return nil, err
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	return &liveOrgLoop{e: e, t: t, root: root, cwd: cwd}, nil
}

// hook is the launcher's OnSession for this delivery (nil without one).
func (l *liveOrgLoop) hook() func(id, dir string) {
	if l == nil {
		return nil
	}
	return l.onSession
}

// onSession opens the session's outbox and starts delivering. A failure
// to open is reported by finish; it never stops the harness.
func (l *liveOrgLoop) onSession(id, dir string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.id = id
	var log *slog.Logger
	l.logF, log = openSessionLog(l.root, id)
	ob, err := l.t.open(l.e, l.root, id, l.cwd, log)
	if err != nil {
		l.err = err
		return
	}
	l.refused = len(ob.State().Undeliverable)
	ctx, cancel := context.WithCancel(context.Background())
	l.ob, l.cancel, l.done = ob, cancel, make(chan error, 1)
	go func() { l.done <- ob.Run(ctx) }()
}

// finish lets the outbox deliver what the ledger holds for up to drain,
// then stops it, and says on stderr what is still owed.
func (l *liveOrgLoop) finish(drain time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.logF != nil {
		defer l.logF.Close()
	}
	if l.err != nil {
		fmt.Fprintf(l.e.Err, "lifeloop: warning: OrgLoop webhook: %v\n", l.err)
		return
	}
	if l.ob == nil {
		return
	}
	defer func() { _ = l.ob.Close() }()
	l.ob.Finish()
	var err error
	select {
	case err = <-l.done:
	case <-time.After(drain):
		l.cancel()
		err = <-l.done
	}
	l.cancel()
	if errors.Is(err, context.Canceled) {
		err = fmt.Errorf("the receiver did not take them within %s", drain)
	}
	if err != nil {
		fmt.Fprintf(l.e.Err, "lifeloop: warning: OrgLoop webhook posts of session %s not all delivered: %v; deliver them with `lifeloop receipts %s --orgloop-webhook URL`\n", l.id, err, l.id)
	}
	if u := l.ob.State().Undeliverable[l.refused:]; len(u) > 0 {
		fmt.Fprintf(l.e.Err, "lifeloop: warning: OrgLoop webhook: %d posts of session %s undeliverable (%s); see %s\n", len(u), l.id, u[len(u)-1].Error, l.ob.StatePath())
	}
}
